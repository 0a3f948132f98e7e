"""RedisStateStore against a real redis-server (Debian's package; `make test` installs it),
started by these tests on a free port: a fleet of worker processes refreshes one expiring
token once, and a worker killed while holding the lock does not wedge the others."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

redis = pytest.importorskip("redis", reason="the redis extra is not installed")

from mcp_sync import McpError  # noqa: E402
from mcp_sync.oauth.redis_store import LockLost, LockTimeout, RedisStateStore  # noqa: E402
from tests.helpers.redis_server import redis_server  # noqa: E402

HERE = Path(__file__).resolve().parent
WORKER = HERE / "redis_worker.py"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def store(redis_url, request) -> RedisStateStore:
    return RedisStateStore(
        redis_url, prefix=f"test:{request.node.name}:", lock_ttl=1.0, lock_wait=20.0
    )


def test_state_round_trips_and_is_shared_between_stores(store, redis_url):
    other = RedisStateStore(redis_url, prefix=store.prefix)
    assert store.load("https://a/mcp") is None
    store.save("https://a/mcp", {"tokens": {"accessToken": "t"}, "clients": {}})
    assert other.load("https://a/mcp") == {"tokens": {"accessToken": "t"}, "clients": {}}
    other.save("https://a/mcp", None)
    assert store.load("https://a/mcp") is None


def test_the_lock_is_reentrant_and_excludes_other_workers(store, redis_url):
    other = RedisStateStore(redis_url, prefix=store.prefix, lock_wait=0.3)
    with store.lock("k"), store.lock("k"):
        store.save("k", {"n": 1})  # a save inside the lock, fenced by it
        with pytest.raises(LockTimeout) as info:
            other.lock("k").__enter__()
        assert isinstance(info.value, McpError)
    with other.lock("k"):  # released: the other worker gets it
        assert other.load("k") == {"n": 1}


def test_threads_of_one_process_take_turns(store):
    inside, overlaps = [0], []
    guard = threading.Lock()

    def work() -> None:
        for _ in range(20):
            with store.lock("k"):
                with guard:
                    inside[0] += 1
                    overlaps.append(inside[0])
                state = store.load("k") or {"n": 0}
                store.save("k", {"n": state["n"] + 1})
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert max(overlaps) == 1
    assert store.load("k") == {"n": 80}


def test_a_held_lock_is_kept_past_its_ttl_and_a_lost_one_refuses_to_save(store, redis_url):
    other = RedisStateStore(redis_url, prefix=store.prefix, lock_ttl=1.0, lock_wait=0.2)
    client = redis.Redis.from_url(redis_url)
    lock_key = f"{store.prefix}lock:k"
    with store.lock("k"):
        # the watchdog extends it: after three TTLs it still has not expired
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            assert client.pttl(lock_key) > 0
            time.sleep(0.1)
        with pytest.raises(LockTimeout):
            other.lock("k").__enter__()
        # a worker paused past its TTL: its lock is gone and someone else holds it
        client.set(lock_key, "someone-else")
        with pytest.raises(LockLost):
            store.save("k", {"stale": True})
        assert store.load("k") is None
    assert client.get(lock_key) == b"someone-else"  # not deleted by the old holder
    client.close()


def test_a_killed_holder_delays_the_others_only_until_the_lock_expires(store, redis_url):
    holder = subprocess.Popen(
        [sys.executable, str(WORKER), "hold", redis_url, "https://example.com/mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(HERE.parents[1])},
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        worker = RedisStateStore(redis_url, lock_ttl=2.0, lock_wait=20.0)
        with worker.lock("https://example.com/mcp"):  # the dead holder's lock expired
            worker.save("https://example.com/mcp", {"ok": True})
        assert worker.load("https://example.com/mcp") == {"ok": True}
        worker.save("https://example.com/mcp", None)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
