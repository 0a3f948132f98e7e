"""The restart soak: sixteen threads keep calling through ``recovery=`` while the server is
killed over and over (stdio: each server 0.25 s after it first answered; Streamable HTTP:
killed 0.7 s after it first answered and started again on the same port). A call may fail
when its server dies under it, but no call runs twice and no answer reaches another caller.

The server is the official SDK's (tests/servers/ledger_server.py): its one tool writes each
call's unique text to a ledger file before it answers, so the ledger counts the runs.
"""

from __future__ import annotations

import collections
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import mcp_sync
from mcp_sync import ConnectionClosed, McpError, StdioTransport
from tests.helpers.reliability_support import ServerKiller, live_servers
from tests.helpers.support import SERVERS, HttpServer, free_port, wait_until
from tests.reliability.test_recovery import FAST

pytestmark = pytest.mark.timeout(240)

LEDGER_SERVER = str(SERVERS / "ledger_server.py")
THREADS = 16
RESTARTS = 5


def ledger_lines(ledger: Path) -> list[str]:
    return ledger.read_text(encoding="utf-8").splitlines() if ledger.exists() else []


class Callers:
    """``THREADS`` threads calling ``echo`` with a text of their own until stopped; what
    each call sent and got back."""

    def __init__(self, client: mcp_sync.Client) -> None:
        self.client = client
        self.stop = threading.Event()
        self.answers: list[tuple[str, str]] = []  # (sent, received)
        self.failures: list[tuple[str, BaseException]] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(n,)) for n in range(THREADS)]

    def _run(self, thread: int) -> None:
        call = 0
        while not self.stop.is_set():
            text = f"thread {thread} call {call}"
            call += 1
            try:
                received = self.client.call_tool("echo", {"text": text}, timeout=60).text
            except McpError as exc:
                with self._lock:
                    self.failures.append((text, exc))
            else:
                with self._lock:
                    self.answers.append((text, received))

    def __enter__(self) -> Callers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(90)
        assert not any(thread.is_alive() for thread in self._threads)


def killer(ledger: Path, lifetime: float, kill: Callable[[], None], stop: threading.Event) -> None:
    """Once the server has answered a call (so each one started serves), let it live
    ``lifetime`` more, then ``kill()``."""
    seen = len(ledger_lines(ledger))
    wait_until(lambda: len(ledger_lines(ledger)) > seen, timeout=60)
    stop.wait(lifetime)  # the fault's schedule, not a wait for something
    kill()


def check(ledger: Path, callers: Callers, kinds: tuple[type[BaseException], ...]) -> None:
    runs = collections.Counter(ledger_lines(ledger))
    print(
        f"{len(callers.answers)} answers, {len(callers.failures)} failures:",
        collections.Counter(type(e).__name__ + ": " + str(e)[:90] for _, e in callers.failures),
    )
    twice = {text: n for text, n in runs.items() if n > 1}
    assert not twice, f"calls run more than once: {twice}"
    wrong = [(sent, got) for sent, got in callers.answers if sent != got]
    assert not wrong, f"answers delivered to the wrong caller: {wrong[:5]}"
    assert all(runs[sent] == 1 for sent, _ in callers.answers)  # an answer means it ran
    unexpected = [(text, exc) for text, exc in callers.failures if not isinstance(exc, kinds)]
    assert not unexpected, unexpected[:5]


def after_the_soak(client: mcp_sync.Client) -> None:
    """Every thread's next call succeeds with its own answer."""
    barrier = threading.Barrier(THREADS)
    results: dict[int, str] = {}

    def call(n: int) -> None:
        barrier.wait()
        results[n] = client.call_tool("echo", {"text": f"after {n}"}, timeout=60).text

    threads = [threading.Thread(target=call, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert results == {n: f"after {n}" for n in range(THREADS)}


def test_sixteen_threads_through_a_stdio_server_killed_again_and_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leaks: Any
) -> None:
    ledger = tmp_path / "ledger"
    monkeypatch.setenv("LEDGER", str(ledger))
    client = mcp_sync.connect(
        lambda: StdioTransport(sys.executable, [LEDGER_SERVER, "stdio"]),
        protocol="handshake",
        recovery=FAST,
        request_timeout=60,
    )
    servers = ServerKiller("ledger_server.py")  # waits until each is dead: no more writes

    with Callers(client) as callers:
        for _ in range(RESTARTS):
            killer(ledger, 0.25, servers.kill_next, callers.stop)
    check(ledger, callers, (ConnectionClosed,))
    assert len(servers.killed) == RESTARTS
    after_the_soak(client)
    assert len(live_servers("ledger_server.py")) == 1
    client.close()


@contextmanager
def ledger_http_server(port: int, ledger: Path) -> Iterator[HttpServer]:
    argv = [sys.executable, LEDGER_SERVER, "streamable-http", str(port)]
    with HttpServer(argv, port, env={"LEDGER": str(ledger)}) as server:
        yield server


def test_sixteen_threads_through_an_http_server_restarted_again_and_again(
    tmp_path: Path, leaks: Any
) -> None:
    """Calls caught by a restart may fail (refused, or the session gone); none runs twice."""
    ledger, port = tmp_path / "ledger", free_port()
    server = ledger_http_server(port, ledger)
    running = server.__enter__()
    try:
        client = mcp_sync.connect(
            running.url(), protocol="handshake", recovery=FAST, request_timeout=60
        )

        def restart() -> None:
            nonlocal server, running
            os.killpg(running.process.pid, signal.SIGKILL)
            running.process.wait(30)
            server.__exit__(None, None, None)
            server = ledger_http_server(port, ledger)
            running = server.__enter__()

        with Callers(client) as callers:
            for _ in range(RESTARTS):
                killer(ledger, 0.7, restart, callers.stop)
        check(ledger, callers, (McpError,))
        after_the_soak(client)
        client.close()
    finally:
        server.__exit__(None, None, None)
