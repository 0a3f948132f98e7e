"""The fault lattice, OAuth row: sign-in and refresh under many threads, close(), the call's
abort signal, fork, a server that keeps restarting and one that stalls.

The server is fastmcp with its ``InMemoryOAuthProvider`` (authorization server and MCP
server in one app, tests/helpers/oauth_fastmcp_server.py): in a thread of the test process
where a test reaches into the provider, in a process of its own where the test stops it
(SIGSTOP) or kills and restarts it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.helpers.support import FASTMCP_MISSING, ROOT, HttpServer, free_port, wait_until

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)


from fastmcp.server.auth.providers import in_memory

import mcp_sync
from mcp_sync import AbortController, Aborted, ConnectionClosed
from mcp_sync.oauth import CallbackServer, FileStateStore, OAuthProvider
from tests.helpers.oauth_fastmcp_server import serve
from tests.oauth.test_oauth_e2e import Redirects, provider_for, wait_until_expired
from tests.reliability.test_lattice import PROMPT, stalled, timed
from tests.test_fork import in_child

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server() -> Iterator[Any]:
    with serve() as running:
        yield running


@pytest.fixture
def short_lived(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", 2)


def oauth_server_process(port: int) -> HttpServer:
    """The same server in a process of its own on ``port``, to start with ``with``."""
    code = (
        "import sys, threading\n"
        "from tests.helpers.oauth_fastmcp_server import serve\n"
        "with serve(port=int(sys.argv[1])):\n"
        "    threading.Event().wait()\n"
    )
    # this checkout's tests package (and mcp_sync), whatever the working directory
    return HttpServer([sys.executable, "-c", code, str(port)], port, {"PYTHONPATH": str(ROOT)})


class UserAway:
    """A sign-in through the real loopback ``CallbackServer`` whose user never comes back
    from the browser: ``opened`` is set once the browser would have opened."""

    def __init__(self, server: Any) -> None:
        self.callbacks = CallbackServer.listen(timeout=60)
        self.opened = threading.Event()
        self.provider = OAuthProvider(
            server.url,
            self.callbacks.redirect_url,
            on_redirect=self.callbacks.redirect_handler(open_browser=self.browser),
        )

    def browser(self, url: str) -> bool:
        self.opened.set()
        return True

    def close(self) -> None:
        self.callbacks.close()
        self.provider.session.close()  # the provider's own pool, which outlives clients


# -- many threads ----------------------------------------------------------------------------


def test_twelve_clients_signing_in_at_once_through_one_provider_sign_in_once(server: Any) -> None:
    provider, redirects, session = provider_for(server)
    start = threading.Barrier(12)

    def connect_and_call(n: int) -> str:
        start.wait()
        with mcp_sync.connect(server.url, auth=provider, request_timeout=60) as client:
            return client.call_tool("add", {"a": n, "b": n}).text

    with ThreadPoolExecutor(12) as pool:
        assert list(pool.map(connect_and_call, range(12))) == [str(2 * n) for n in range(12)]
    assert len(redirects.urls) == 1
    assert session.grants == ["authorization_code"]
    assert len(server.provider.clients) == 1  # registered once


def test_twelve_threads_finding_the_token_due_refresh_it_once(
    server: Any, short_lived: None
) -> None:
    provider, redirects, session = provider_for(server, refresh_margin=1.0)
    with mcp_sync.connect(server.url, auth=provider, request_timeout=60) as client:
        first = provider.tokens.access_token
        wait_until_expired(provider)
        start = threading.Barrier(12)

        def call(n: int) -> str:
            start.wait()
            return client.call_tool("add", {"a": n, "b": 1}).text

        with ThreadPoolExecutor(12) as pool:
            assert list(pool.map(call, range(12))) == [str(n + 1) for n in range(12)]
        assert provider.tokens.access_token != first
    assert session.grants == ["authorization_code", "refresh_token"]
    assert len(redirects.urls) == 1


# -- close() and the abort signal while the user signs in ------------------------------------


def test_close_from_another_thread_ends_a_sign_in_waiting_for_the_redirect(
    server: Any, leaks: Any
) -> None:
    away = UserAway(server)
    client = mcp_sync.Client(request_timeout=120)
    transport = mcp_sync.StreamableHttpTransport(server.url, auth=away.provider)
    outcome: list[Any] = []
    connecting = threading.Thread(
        target=lambda: outcome.append(timed(lambda: client.connect(transport)))
    )
    try:
        connecting.start()
        assert away.opened.wait(30)  # the user is in the browser; the connect waits for them
        _, closing = timed(client.close)
        connecting.join(PROMPT)
        assert not connecting.is_alive()
    finally:
        away.close()
    ((error, took),) = outcome
    assert isinstance(error, ConnectionClosed), error
    assert took < PROMPT and closing < 3, (took, closing)
    leaks.check(timeout=1)  # the worker waiting for the redirect ended with close()


def test_an_abort_ends_a_sign_in_waiting_for_the_redirect(server: Any, leaks: Any) -> None:
    away = UserAway(server)
    first_sign_in = away.provider.on_redirect
    away.provider.on_redirect = provider_for(server)[0].on_redirect  # headless, the first time
    client = mcp_sync.connect(server.url, auth=away.provider, request_timeout=120)
    try:
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        away.provider.on_redirect = first_sign_in
        server.provider.access_tokens.clear()  # every token dead: the next call signs in
        server.provider.refresh_tokens.clear()
        controller = AbortController()
        threading.Thread(
            target=lambda: away.opened.wait(30) and controller.abort("the user gave up"),
            daemon=True,
        ).start()
        error, took = timed(
            lambda: client.call_tool("add", {"a": 2, "b": 2}, signal=controller.signal)
        )
        assert isinstance(error, Aborted), error
        assert away.opened.is_set() and took < PROMPT, took
        # the flow has ended: nothing waits for that redirect any more
        wait_until(lambda: not away.callbacks._waiters, timeout=3)
    finally:
        client.close()
        away.close()


# -- fork ------------------------------------------------------------------------------------


def test_a_forked_child_refreshing_through_a_file_store_leaves_the_parent_signed_in(
    server: Any, tmp_path: Path
) -> None:
    """The refresh token rotates: a child that refreshes with the inherited provider kills
    the parent's copy. Through a shared ``FileStateStore`` the parent picks up the child's
    tokens at its next 401, with no second sign-in."""
    store = FileStateStore(tmp_path / "oauth.json")
    provider, redirects, session = provider_for(server, store=store)
    with mcp_sync.connect(server.url, auth=provider) as client:
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        before = provider.tokens.access_token

        def child() -> dict[str, Any]:
            provider.refresh()
            with mcp_sync.connect(server.url, auth=provider) as own:
                text = own.call_tool("add", {"a": 20, "b": 22}).text
            return {"text": text, "refreshed": provider.tokens.access_token != before}

        assert in_child(child) == {"text": "42", "refreshed": True}
        assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
        assert provider.tokens.access_token not in (None, before)
    assert len(redirects.urls) == 1
    assert session.grants == ["authorization_code"]  # the child's refresh was its own


# -- a server that stalls, and one that keeps restarting -------------------------------------


def test_a_stalled_oauth_server_bounds_sign_in_and_refresh_and_both_work_once_resumed() -> None:
    with oauth_server_process(free_port()) as running:
        url = running.url()
        redirects = Redirects()
        provider = OAuthProvider(
            url, "http://127.0.0.1:1/callback", on_redirect=redirects, timeout=2
        )
        with stalled(running.process.pid):
            error, took = timed(lambda: mcp_sync.connect(url, auth=provider, timeout=3))
        assert isinstance(error, mcp_sync.McpError), error
        assert took < PROMPT, took
        with mcp_sync.connect(url, auth=provider, request_timeout=30) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
            signed_in = len(redirects.urls)
            old = provider.tokens
            with stalled(running.process.pid):
                error, took = timed(provider.refresh)
            # (a network failure of the token request is still the requests exception)
            assert isinstance(error, (mcp_sync.McpError, requests.RequestException)), error
            assert took < PROMPT, took
            assert provider.tokens == old  # a refresh that failed changes nothing here
            # The server ran that refresh once resumed, rotating the refresh token whose
            # answer was lost: the next call signs in again (headless) rather than failing.
            assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
            assert len(redirects.urls) <= signed_in + 1
            assert provider.refresh().access_token != old.access_token
            assert client.call_tool("add", {"a": 3, "b": 3}).text == "6"


def test_an_oauth_server_that_keeps_restarting_costs_one_sign_in_per_restart() -> None:
    """Each restart forgets the registration, the tokens and the session: the next call
    registers, signs in (headless) and initializes again, once per restart."""
    port = free_port()
    redirects = Redirects()
    provider = OAuthProvider(
        f"http://127.0.0.1:{port}/mcp", "http://127.0.0.1:1/callback", on_redirect=redirects
    )
    client = None
    try:
        for restart in range(3):
            with oauth_server_process(port) as running:
                if client is None:
                    client = mcp_sync.connect(
                        running.url(), auth=provider, recovery=True, request_timeout=30
                    )
                assert client.call_tool("add", {"a": restart, "b": 1}).text == str(restart + 1)
                assert client.call_tool("add", {"a": restart, "b": 2}).text == str(restart + 2)
                assert len(redirects.urls) == restart + 1
                os.kill(running.process.pid, signal.SIGKILL)
                running.process.wait(PROMPT)
    finally:
        if client is not None:
            client.close()
