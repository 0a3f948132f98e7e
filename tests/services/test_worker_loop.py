"""A Celery-style worker pool: four threads keep calling a real MCP server (the official SDK
over Streamable HTTP, both protocol eras) through one ``shared_client`` with ``recovery=``,
while the server is stopped and started again on the same port, twice.

What a worker relies on: a call started once the server is back succeeds; a call caught by the
outage either waits it out or fails with ``ConnectionClosed`` (the error to retry on); nothing
is left once the pool and the client are closed.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import mcp_sync
from tests.helpers.reliability_support import Leaks
from tests.helpers.support import SERVERS, HttpServer, free_port, wait_until

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
def test_a_worker_pool_keeps_calling_through_two_server_restarts(protocol: str) -> None:
    leaks = Leaks()
    port = free_port()
    argv = [sys.executable, str(SERVERS / "http_fixture_server.py"), "streamable-http", str(port)]

    @mcp_sync.shared_client
    def mcp_client() -> mcp_sync.Client:
        return mcp_sync.connect(
            f"http://127.0.0.1:{port}/mcp",
            protocol=protocol,
            request_timeout=60,
            recovery=mcp_sync.Backoff(initial_delay=0.05, max_delay=0.5, max_retries=500),
        )

    outcomes: list[tuple[float, str]] = []  # (when the call started, "ok" or the error)
    stop = threading.Event()

    def worker(n: int) -> None:
        count = 0
        while not stop.is_set():
            started = time.monotonic()
            try:
                result = mcp_client().call_tool("add", {"a": n, "b": count})
                assert result.structured_content == {"result": n + count}
                outcomes.append((started, "ok"))
            except mcp_sync.McpError as exc:
                outcomes.append((started, f"{type(exc).__name__}: {exc}"))
            count += 1

    def successes_after(moment: float) -> int:
        return sum(1 for started, what in list(outcomes) if started > moment and what == "ok")

    back: list[float] = []
    server = HttpServer(argv, port).__enter__()
    try:
        with ThreadPoolExecutor(4) as pool:
            loops = [pool.submit(worker, n) for n in range(4)]
            wait_until(lambda: successes_after(0) >= 20, timeout=60)
            for _ in range(2):
                server.__exit__()  # stopped, then started again on the same port
                server = HttpServer(argv, port).__enter__()
                back.append(time.monotonic())
                wait_until(lambda: successes_after(back[-1]) >= 20, timeout=60)
            stop.set()
        for loop in loops:
            loop.result()  # a wrong answer would have raised in its thread
    finally:
        stop.set()
        server.__exit__()
        mcp_client.close()

    failures = [what for _, what in outcomes if what != "ok"]
    assert all(what.startswith("ConnectionClosed") for what in failures), failures[:3]
    late = [what for started, what in outcomes if started > back[-1] and what != "ok"]
    assert not late, late[:3]
    leaks.check(timeout=10)
