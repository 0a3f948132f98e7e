"""A scripted fake server that is hard to stop, for the stdio shutdown and orphan tests.

Real servers cannot be made to ignore EOF or SIGTERM, or to leave a child behind, on demand.
On start it writes one line, ``{"jsonrpc":"2.0","method":"pids","params":{"server":PID,
"grandchild":PID|null}}``, then echoes requests like ``stdio_echo.py``. Flags:

- ``--ignore-eof``: keep running (sleeping) after stdin reaches EOF
- ``--ignore-term``: ignore SIGTERM
- ``--grandchild``: fork a child that keeps stdin/stdout/stderr open and sleeps forever
  (it stays in the server's process group)
- ``--grandchild-ignores-term``: that child ignores SIGTERM too
"""

import json
import os
import signal
import sys
import time


def main() -> None:
    args = sys.argv[1:]
    if "--ignore-term" in args:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = None
    if "--grandchild" in args:
        grandchild = os.fork()
        if grandchild == 0:
            if "--grandchild-ignores-term" in args:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(3600)
    out = sys.stdout.buffer
    pids = {"server": os.getpid(), "grandchild": grandchild}
    out.write(json.dumps({"jsonrpc": "2.0", "method": "pids", "params": pids}).encode() + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" in msg:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {"echo": msg.get("params")}}
            out.write(json.dumps(reply).encode() + b"\n")
            out.flush()
    if "--ignore-eof" in args:
        while True:
            time.sleep(3600)


main()
