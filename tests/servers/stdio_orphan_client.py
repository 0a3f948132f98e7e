"""A client process for the orphan tests (not a server): it is killed or exits mid-session.

Scripted fake: the tests need a client that dies without closing its transport. It starts
``stdio_stubborn.py`` through :class:`mcp_sync.StdioTransport` with the given flags, prints
``{"client": PID, "server": PID, "grandchild": PID|null}`` on one line, then, per ``argv[1]``:

- ``wait``: sleeps until killed (the test sends SIGKILL)
- ``exit``: returns normally without closing the transport (atexit hooks run)
- ``os-exit``: ``os._exit(0)`` (no atexit hooks, only the watchdog can help)
"""

import json
import os
import queue
import sys
import time
from pathlib import Path

from mcp_sync.transports.stdio import StdioTransport

SERVER = str(Path(__file__).with_name("stdio_stubborn.py"))


def main() -> None:
    mode, flags = sys.argv[1], sys.argv[2:]
    messages: queue.Queue[dict] = queue.Queue()
    transport = StdioTransport(sys.executable, ["-I", "-S", SERVER, *flags])
    transport.on_message(messages.put)
    transport.start()
    pids = messages.get(timeout=10)["params"]
    print(json.dumps({"client": os.getpid(), **pids}), flush=True)
    if mode == "wait":
        while True:
            time.sleep(3600)
    elif mode == "os-exit":
        os._exit(0)


main()
