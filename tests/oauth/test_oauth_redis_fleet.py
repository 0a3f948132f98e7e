"""A fleet on one RedisStateStore against a real OAuth server (fastmcp's InMemoryOAuthProvider)
and a real redis-server: 8 worker processes x 4 threads calling through one expired token make
exactly one refresh grant; a worker killed while holding the lock does not wedge the others."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.support import FASTMCP_MISSING, wait_until

pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth test server

from fastmcp.server.auth.providers import in_memory

import mcp_sync
from mcp_sync.oauth import OAuthProvider, headless_redirect
from mcp_sync.oauth.redis_store import RedisStateStore
from tests.helpers.oauth_fastmcp_server import serve
from tests.helpers.redis_server import redis_server

HERE = Path(__file__).resolve().parent
WORKER = HERE / "redis_worker.py"
PROCESSES, THREADS = 8, 4

pytestmark = pytest.mark.timeout(150)


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """(OAuth server, Redis URL, refresh grants the server answered), signed in once with a
    token that has expired."""
    monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", 2)
    with serve() as server, redis_server(tmp_path) as redis_url:
        refreshes: list[str] = []
        original = server.provider.exchange_refresh_token

        async def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            refreshes.append("refresh_token")
            return await original(*args, **kwargs)

        server.provider.exchange_refresh_token = counted
        provider = OAuthProvider(
            server.url,
            "http://127.0.0.1:1/callback",
            on_redirect=headless_redirect(),
            store=RedisStateStore(redis_url),
            refresh_margin=1.0,
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        expires_at = provider.tokens.expires_at
        wait_until(lambda: time.time() > expires_at + 0.05, timeout=10)  # the stored token expires
        # the fresh token lives long: any second refresh would be the lock failing
        monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", 3600)
        yield server, redis_url, refreshes


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_workers(server, redis_url, processes: int, after_go=lambda: None) -> list[dict]:
    workers = [start("call", redis_url, server.url, str(THREADS)) for _ in range(processes)]
    try:
        for worker in workers:  # all started and holding the expired token
            assert worker.stdout.readline() == "ready\n", worker.stderr.read()
        for worker in workers:
            worker.stdin.write("go\n")
            worker.stdin.flush()
        after_go()
        reports = []
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err
            reports.append(json.loads(out))
        return reports
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()


def test_a_fleet_refreshes_an_expired_token_once(fleet):
    server, redis_url, refreshes = fleet
    reports = run_workers(server, redis_url, PROCESSES)
    assert [r["results"] for r in reports] == [[str(n + 1) for n in range(THREADS)]] * PROCESSES
    assert sum(r["refresh_grants"] for r in reports) == 1
    assert refreshes == ["refresh_token"]


def test_a_worker_killed_holding_the_lock_does_not_wedge_the_others(fleet):
    server, redis_url, refreshes = fleet
    holder = start("hold", redis_url, server.url)

    def kill_holder() -> None:  # while the workers wait for its lock
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)

    try:
        assert holder.stdout.readline() == "locked\n", holder.stderr.read()
        reports = run_workers(server, redis_url, 3, after_go=kill_holder)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert holder.returncode == -signal.SIGKILL
    assert [r["results"] for r in reports] == [[str(n + 1) for n in range(THREADS)]] * 3
    assert sum(r["refresh_grants"] for r in reports) == 1
    assert refreshes == ["refresh_token"]
