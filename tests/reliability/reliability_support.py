"""Helpers for tests/reliability: leak snapshots (threads, fds, child processes) and peers."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = HERE.parent / "servers"
for extra in (HERE.parents[1], HERE.parent, SERVERS, HERE.parent / "transports"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from support import child_pids, client_threads, open_fds  # noqa: E402

from mcp_sync import Client  # noqa: E402
from mcp_sync.transports.stdio import StdioTransport  # noqa: E402

PYTHON = sys.executable


def fault_peer(mode: str, *args: str, **kwargs: Any) -> StdioTransport:
    """A StdioTransport for ``tests/servers/stdio_fault_peer.py MODE ARGS``."""
    return StdioTransport(
        PYTHON, ["-I", "-S", str(SERVERS / "stdio_fault_peer.py"), mode, *args], **kwargs
    )


def started_late(delay: float, *command: str) -> list[str]:
    """The argv of ``command`` (a real server) started ``delay`` seconds late: a cold start."""
    late = (
        "import os, sys, time; time.sleep(float(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"
    )
    return [PYTHON, "-c", late, str(delay), *command]


def connect(transport: Any, **kwargs: Any) -> Client:
    kwargs.setdefault("request_timeout", 10.0)
    return Client("reliability", "1.0", protocol="handshake", **kwargs).connect(transport)


def fd_kinds(fds: set[int]) -> list[str]:
    kinds = []
    for fd in sorted(fds):
        with contextlib.suppress(OSError):
            kinds.append(f"{fd}->{os.readlink(f'/proc/self/fd/{fd}')}")
    return kinds


class Leaks:
    """What a client could leave behind; ``check()`` waits (bounded) for it all to go away."""

    def __init__(self) -> None:
        self.threads = set(client_threads())
        self.fds = open_fds()
        self.children = child_pids()

    def leftovers(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        threads = set(client_threads()) - self.threads
        if threads:
            found["threads"] = sorted(t.name for t in threads)
        fds = open_fds() - self.fds
        if fds:
            found["fds"] = fd_kinds(fds)
        children = child_pids() - self.children
        if children:
            found["children"] = sorted(children)
        return found

    def check(self, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            found = self.leftovers()
            if not found:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"leaked: {found}")
            time.sleep(0.01)
