"""A stdio "server" that is a fork bomb (scripted fake: a real server cannot be made to fork
without end on request). Standard library only, so that any Python can run it.

It forks children that sleep, up to ``argv[1]`` of them, stopping at the first failure, then
writes one JSON-RPC notification, ``{"method": "forked", "params": {"count": N, "error":
"..."}}``, and waits for its stdin to close. Its children then exit.
"""

import json
import os
import sys
import time

count, error = 0, None
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError as exc:
        error = str(exc)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    count += 1
message = {"jsonrpc": "2.0", "method": "forked", "params": {"count": count, "error": error}}
sys.stdout.write(json.dumps(message) + "\n")
sys.stdout.flush()
sys.stdin.read()
