"""The fleet's OAuth state store under pressure, against a real redis-server (frozen with
SIGSTOP, killed) and a real OAuth server (fastmcp's InMemoryOAuthProvider): a call's timeout
bounds its authentication, a lock whose SET timed out is not waited out, a cold fleet signs in
once, and a store that is down, behind TLS or an ACL says so by name."""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.helpers.support import FASTMCP_MISSING, wait_until

redis = pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth test server

from fastmcp.server.auth.providers import in_memory  # noqa: E402

import mcp_sync  # noqa: E402
from mcp_sync import McpError, RequestTimeout  # noqa: E402
from mcp_sync.oauth import OAuthProvider, StateStoreError, headless_redirect  # noqa: E402
from mcp_sync.oauth.redis_store import RedisStateStore  # noqa: E402
from tests.helpers.fleet_support import counted, start_worker  # noqa: E402
from tests.helpers.oauth_fastmcp_server import serve  # noqa: E402
from tests.helpers.redis_server import free_port, redis_process  # noqa: E402
from tests.helpers.tls_certs import make_certificates  # noqa: E402
from tests.oauth.fleet_worker import store_for  # noqa: E402

REDIRECT = "http://127.0.0.1:1/callback"

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def short_tokens(monkeypatch):
    monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", 2)


def test_a_call_timeout_bounds_its_authentication_while_redis_is_frozen(tmp_path, short_tokens):
    with serve() as server, redis_process(tmp_path) as store_server:
        provider = OAuthProvider(
            server.url,
            REDIRECT,
            on_redirect=headless_redirect(),
            store=RedisStateStore(store_server.url),  # the defaults: lock_wait 60 s
            refresh_margin=1.0,
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
            expires_at = provider.tokens.expires_at
            wait_until(lambda: time.time() > expires_at + 0.05, timeout=10)
            store_server.freeze()
            # (bounded: old code would wait for Redis until this thaws it)
            thaw = threading.Timer(25, store_server.thaw)
            thaw.start()
            try:
                started = time.monotonic()
                with pytest.raises(RequestTimeout):
                    client.call_tool("add", {"a": 1, "b": 2}, timeout=5)
                elapsed = time.monotonic() - started
            finally:
                thaw.cancel()
                store_server.thaw()
            # Before: the refresh waited for the frozen Redis (no deadline) until it thawed.
            assert elapsed < 5 + 1.5, f"a call with timeout=5 took {elapsed:.1f} s"
            # Redis back: the next call refreshes and succeeds
            assert client.call_tool("add", {"a": 1, "b": 3}, timeout=30).text == "4"


def test_a_new_connection_to_a_frozen_redis_ends_by_the_call_s_deadline(tmp_path, short_tokens):
    """A command that timed out drops its connection (redis-py never reads a late answer), so
    the next call's refresh connects anew: the frozen server accepts TCP and never answers the
    handshake. That connect ends by the call's deadline too, not by ``command_timeout`` (5 s
    by default, and redis-py's retries on top)."""
    with serve() as server, redis_process(tmp_path) as store_server:
        provider = OAuthProvider(
            server.url,
            REDIRECT,
            on_redirect=headless_redirect(),
            store=RedisStateStore(store_server.url),  # the default command_timeout: 5 s
            refresh_margin=1.0,
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
            expires_at = provider.tokens.expires_at
            wait_until(lambda: time.time() > expires_at + 0.05, timeout=10)
            store_server.freeze()
            took = []
            try:
                for b in (2, 3, 4):  # the first drops the connection; the others connect anew
                    started = time.monotonic()
                    with pytest.raises(RequestTimeout):
                        client.call_tool("add", {"a": 1, "b": b}, timeout=1)
                    took.append(time.monotonic() - started)
            finally:
                store_server.thaw()
            # Before: 1 s, then 5 s each (the handshake waited out command_timeout).
            assert max(took) < 1 + 1.5, f"calls with timeout=1 took {took}"
            assert client.call_tool("add", {"a": 1, "b": 5}, timeout=30).text == "6"


def test_a_lock_set_by_a_timed_out_attempt_is_not_waited_out(tmp_path):
    with redis_process(tmp_path) as store_server:
        # two workers whose Redis commands give up after 1 s: one asks again later, the other
        # never does; and a third worker
        def impatient() -> RedisStateStore:
            client = redis.Redis.from_url(store_server.url, socket_timeout=1.0)
            return RedisStateStore(client, lock_ttl=15.0)

        mine, gone = impatient(), impatient()
        other = RedisStateStore(store_server.url, lock_ttl=15.0, lock_wait=30.0)
        for store in (mine, gone, other):
            assert store.load("k") is None  # (each connected before the freeze)
        store_server.freeze()
        try:
            for store, key in ((mine, "k"), (gone, "j")):
                with pytest.raises(Exception), store.lock(key):  # noqa: B017 - a timeout
                    pass
        finally:
            store_server.thaw()
        # Redis applied those SETs when it thawed: "k" holds a token of mine, "j" of gone's.
        # (both at once: each lock's ttl runs from the thaw)
        taken: dict[str, float] = {}

        def take(store: RedisStateStore, key: str) -> None:
            started = time.monotonic()
            with store.lock(key):
                taken[key] = time.monotonic() - started

        threads = [
            threading.Thread(target=take, args=(mine, "k")),
            threading.Thread(target=take, args=(other, "j")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(40)
        taken_by_mine, taken_by_other = taken["k"], taken["j"]
        # Before: each waited out lock_ttl (15 s) for a lock no live process held.
        waited = f"the same worker waited {taken_by_mine:.1f} s, another {taken_by_other:.1f} s"
        assert max(taken_by_mine, taken_by_other) < 8, waited


@pytest.mark.parametrize("kind", ["redis", "file"])
def test_a_call_timeout_bounds_its_wait_for_a_lock_another_worker_holds(
    tmp_path, short_tokens, kind
):
    with serve() as server, redis_process(tmp_path) as store_server:
        where = store_server.url if kind == "redis" else str(tmp_path / "oauth.json")
        provider = OAuthProvider(
            server.url,
            REDIRECT,
            on_redirect=headless_redirect(),
            store=store_for(where),
            refresh_margin=1.0,
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
            expires_at = provider.tokens.expires_at
            holder = start_worker("hold", where, server.url)
            # (bounded: old code waited for the lock until this kills its holder)
            release = threading.Timer(25, holder.kill)
            release.start()
            try:
                assert holder.stdout.readline() == "locked\n", holder.stderr.read()
                wait_until(lambda: time.time() > expires_at + 0.05, timeout=10)
                started = time.monotonic()
                with pytest.raises(RequestTimeout):
                    client.call_tool("add", {"a": 1, "b": 2}, timeout=5)
                elapsed = time.monotonic() - started
            finally:
                release.cancel()
                holder.kill()
                holder.wait(10)
            # Before: Redis waited for lock_wait (60 s), the file lock for ever.
            assert elapsed < 5 + 1.5, f"a call with timeout=5 took {elapsed:.1f} s"
            assert client.call_tool("add", {"a": 1, "b": 3}, timeout=30).text == "4"


def run_fleet(where: str, mcp_url: str, processes: int = 8) -> list[dict]:
    workers = [start_worker("signin", where, mcp_url) for _ in range(processes)]
    try:
        for worker in workers:
            assert worker.stdout.readline() == "ready\n", worker.stderr.read()
        for worker in workers:  # all at once, on an empty store
            worker.stdin.write("go\n")
            worker.stdin.flush()
        reports = []
        for worker in workers:
            out, err = worker.communicate(timeout=90)
            assert worker.returncode == 0, err
            reports.append(json.loads(out))
        return reports
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()


@pytest.mark.parametrize("kind", ["redis", "file"])
def test_a_cold_fleet_registers_and_signs_in_once(tmp_path, kind):
    with serve() as server, redis_process(tmp_path) as store_server:
        counts = counted(server)
        where = store_server.url if kind == "redis" else str(tmp_path / "oauth.json")
        reports = run_fleet(where, server.url)
    # Before (Redis): 7 registrations, 8 authorizations, 3 code grants, and a worker failing
    # with "the client this sign-in was started with is no longer registered".
    assert [r.get("result") for r in reports] == ["5"] * 8, reports
    assert counts == {"register": 1, "authorize": 1, "code": 1, "refresh": 0}, counts


def test_a_redis_that_is_down_during_a_call_is_named(tmp_path, short_tokens):
    with serve() as server, redis_process(tmp_path) as store_server:
        provider = OAuthProvider(
            server.url,
            REDIRECT,
            on_redirect=headless_redirect(),
            store=RedisStateStore(store_server.url),
            refresh_margin=1.0,
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
            expires_at = provider.tokens.expires_at
            store_server.kill()
            wait_until(lambda: time.time() > expires_at + 0.05, timeout=10)
            started = time.monotonic()
            with pytest.raises(McpError) as caught:
                client.call_tool("add", {"a": 1, "b": 2}, timeout=20)
            assert time.monotonic() - started < 15
    text = str(caught.value)
    assert "OAuth state store" in text and "RedisStateStore" in text, text


def test_a_redis_behind_tls_and_an_acl_user_holds_the_fleet_state(tmp_path):
    certs = make_certificates(tmp_path)
    tls = {"ssl_ca_certs": str(certs["ca"])}
    port = free_port()
    args = [
        *("--port", "0", "--tls-port", str(port)),  # (the last --port wins: TLS only)
        *("--tls-cert-file", str(certs["cert"]), "--tls-key-file", str(certs["key"])),
        *("--tls-ca-cert-file", str(certs["ca"]), "--tls-auth-clients", "no"),
        *("--user", "default", "off"),
        *("--user", "fleet", "on", ">s3cret", "~*", "+@all"),
    ]
    url = f"rediss://fleet:s3cret@127.0.0.1:{port}/0"
    with serve() as server, redis_process(tmp_path, args=args, url=url, client_options=tls):
        store = RedisStateStore(url, client_options=tls)
        provider = OAuthProvider(server.url, REDIRECT, on_redirect=headless_redirect(), store=store)
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        # another worker, same deployment: it finds the tokens there
        again = OAuthProvider(server.url, REDIRECT, store=RedisStateStore(url, client_options=tls))
        assert again.tokens is not None
        assert again.tokens.access_token == provider.tokens.access_token
        # a wrong password, and plain redis:// to a TLS port, are the store's errors, named
        for wrong in (
            f"rediss://fleet:wrong@127.0.0.1:{port}/0",
            f"redis://fleet:s3cret@127.0.0.1:{port}/0",
        ):
            with pytest.raises(StateStoreError) as caught:
                OAuthProvider(
                    server.url,
                    REDIRECT,
                    store=RedisStateStore(wrong, client_options=tls if "rediss" in wrong else {}),
                )
            assert "RedisStateStore" in str(caught.value), caught.value
