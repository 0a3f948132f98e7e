"""Helpers for the stdio transport tests: fake servers, a listener recorder, process checks."""

from __future__ import annotations

import os
import queue
import select
import sys
import threading
import time
from typing import Any

from mcp_sync.transports.stdio import LineTransport, StdioTransport
from tests.helpers.support import SERVERS

PYTHON = [sys.executable, "-I", "-S"]  # the fake servers need only the stdlib


def server(name: str, *args: str, **kwargs: Any) -> StdioTransport:
    """A StdioTransport for ``tests/servers/<name>.py``."""
    return StdioTransport(PYTHON[0], [*PYTHON[1:], str(SERVERS / f"{name}.py"), *args], **kwargs)


def request(id: int, method: str = "ping", params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


class Recorder:
    """Records what a transport's listeners receive."""

    def __init__(self, transport: LineTransport) -> None:
        self.messages: queue.Queue[Any] = queue.Queue()
        self.errors: queue.Queue[BaseException] = queue.Queue()
        self.closes: list[BaseException | None] = []
        self.closed = threading.Event()
        transport.on_message(self.messages.put)
        transport.on_error(self.errors.put)
        transport.on_close(self._closed)

    def _closed(self, cause: BaseException | None) -> None:
        self.closes.append(cause)
        self.closed.set()

    def message(self, timeout: float = 10.0) -> Any:
        return self.messages.get(timeout=timeout)

    def error(self, timeout: float = 10.0) -> BaseException:
        return self.errors.get(timeout=timeout)

    def wait_closed(self, timeout: float = 10.0) -> BaseException | None:
        assert self.closed.wait(timeout), "on_close did not fire"
        return self.closes[0]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in (b"Z", b"X")


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait (on pidfds, no fixed sleeps) until every pid has exited; return those still alive."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue  # already gone
        try:
            remaining = max(0.0, deadline - time.monotonic())
            select.select([fd], [], [], remaining)
        finally:
            os.close(fd)
    return [pid for pid in pids if pid_alive(pid)]
