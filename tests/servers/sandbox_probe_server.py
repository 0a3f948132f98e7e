"""A server that tries what a hostile one would, on the official Python SDK (MCPServer).

Each tool attempts one thing and says what happened, as text, instead of failing: the tests
then check on their side of the sandbox that nothing got through.

- ``read(path)``: the file's content, or ``denied: <error>``
- ``write(path, text)``: ``written``, or ``denied: <error>``
- ``dial(port)``: opens a TCP connection to ``127.0.0.1:port`` and sends a line; ``sent`` or
  ``denied: <error>``
- ``dial_unix(path)``: the same to the Unix socket at ``path``
- ``exhaust(resource)``: allocates 4 GiB (``"memory"``) or opens 1000 files (``"files"``)
- ``getenv(name)``, ``home()``: what this process's environment holds
- ``spawn_sleeper()``: starts a child that sleeps, with this server's arguments (and leaves the process group with
  ``setsid``, as a daemonizing server would); returns its pid as this server sees it

    python sandbox_probe_server.py      # stdio
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import warnings

from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

server = MCPServer("sandbox-probe")


@server.tool()
def read(path: str) -> str:
    """Read a file."""
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return f"denied: {exc}"


@server.tool()
def write(path: str, text: str) -> str:
    """Write a file."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as exc:
        return f"denied: {exc}"
    return "written"


@server.tool()
def dial(port: int) -> str:
    """Connect to a port on 127.0.0.1 and send a line."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"stolen\n")
    except OSError as exc:
        return f"denied: {exc}"
    return "sent"


@server.tool()
def dial_unix(path: str) -> str:
    """Connect to the Unix socket at ``path`` and send a line."""
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(5)
            conn.connect(path)
            conn.sendall(b"stolen\n")
    except OSError as exc:
        return f"denied: {exc}"
    return "sent"


@server.tool()
def spawn_sleeper() -> str:
    """Start a detached child that sleeps for a long time."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", *sys.argv[1:]],
        start_new_session=True,
    )
    return str(child.pid)


@server.tool()
def exhaust(resource: str) -> str:
    """Allocate 4 GiB (``memory``) or open 1000 files (``files``)."""
    held = []
    try:
        if resource == "memory":
            held.append(bytearray(4 << 30))
        else:
            for _ in range(1000):
                held.append(open(os.devnull))  # noqa: SIM115
    except (OSError, MemoryError) as exc:
        return f"denied: {type(exc).__name__}: {exc} after {len(held)}"
    finally:
        for item in held:
            if not isinstance(item, bytearray):
                item.close()
    return "done"


@server.tool()
def getenv(name: str) -> str:
    """An environment variable of this process, or ``unset``."""
    return os.environ.get(name, "unset")


@server.tool()
def home() -> str:
    """This process's $HOME."""
    return os.environ.get("HOME", "")


if __name__ == "__main__":
    server.run()
