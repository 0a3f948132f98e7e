"""Helpers for tests/reliability: leak snapshots (threads, fds, child processes) and peers."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from mcp_sync import Client
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.support import SERVERS, child_pids, client_threads, open_fds, wait_until

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
                # the servers a failed test left are killed, so that its failure is not also
                # the next tests' (their readers end at the pipes' close)
                for pid in found.get("children", []):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"leaked: {found}")
            time.sleep(0.01)


def _stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat`` from the state on (field 3 is index 0); ``OSError`` once it is gone."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def server_processes(script: str) -> dict[int, str]:
    """Children of this process running ``script`` that are alive (not zombies): pid to start
    time (``/proc`` field 22), which tells a reused pid from the process that had it before."""
    found = {}
    for pid in child_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            fields = _stat_fields(pid)
        except OSError:
            continue
        if fields[0] != "Z" and any(arg.endswith(script.encode()) for arg in argv):
            found[pid] = fields[19]
    return found


def live_servers(script: str = "sdk_server.py") -> set[int]:
    """Children of this process running ``script`` that are alive (not zombies)."""
    return set(server_processes(script))


def dead(pid: int) -> bool:
    """True once every thread of ``pid`` has exited (a zombie leader alone is not enough:
    its other threads still hold the pipes for a moment)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        state = _stat_fields(pid)[0]
    except OSError:
        return True
    return state == "Z" and tasks == [str(pid)]


class ServerKiller:
    """The soaks' kill step: SIGKILL the one server running ``script`` that it has not killed
    before, then wait until that one is dead.

    Right after a kill, the old server may still be dying (not yet a zombie, its answers still
    arriving), so "the live server" can be the one just killed: a step that took it would
    kill nothing that round, or find two servers, or signal a pid already reaped. A server is
    known by pid and start time, so a pid the system hands out again is a new server.
    ``processes`` and ``signal_pid`` stand in for ``/proc`` and ``os.kill`` in the step's own
    test."""

    def __init__(
        self,
        script: str,
        *,
        processes: Callable[[], dict[int, str]] | None = None,
        signal_pid: Callable[[int], None] | None = None,
        is_dead: Callable[[int], bool] = dead,
    ) -> None:
        self.script = script
        self.killed: list[tuple[int, str]] = []  # (pid, start time), in the order killed
        self._processes = processes or (lambda: server_processes(script))
        self._signal = signal_pid or (lambda pid: os.kill(pid, signal.SIGKILL))
        self._is_dead = is_dead

    def next_server(self, timeout: float = 60.0) -> int:
        """The pid of the one live server not killed yet, once it is there."""

        def fresh() -> dict[int, str]:
            return {
                pid: start
                for pid, start in self._processes().items()
                if (pid, start) not in self.killed
            }

        found = wait_until(fresh, timeout=timeout, message=f"no new {self.script} started")
        assert len(found) == 1, f"{len(found)} servers running {self.script} at once: {found}"
        ((pid, start),) = found.items()
        self._next = (pid, start)
        return pid

    def kill_next(self, timeout: float = 60.0) -> int:
        """Kill the next server (see ``next_server``) and wait until it is dead."""
        pid = self.next_server(timeout)
        self._signal(pid)
        self.killed.append(self._next)
        wait_until(lambda: self._is_dead(pid), timeout=30, message=f"{pid} still alive")
        return pid
