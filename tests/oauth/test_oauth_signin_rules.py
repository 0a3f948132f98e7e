"""Sign-in rules against a real OAuth-protected MCP server (fastmcp on 127.0.0.1): a message
nobody waits for (the ``notifications/cancelled`` of an aborted call, any notification) never
opens a sign-in, and an OAuth endpoint that cannot be reached is named in the error."""

from __future__ import annotations

import pytest
import requests

from tests.helpers.oauth_stub import Stub
from tests.helpers.redis_server import redis_server
from tests.helpers.support import FASTMCP_MISSING, free_port, wait_until

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)

import mcp_sync
from mcp_sync import AbortController
from mcp_sync.errors import Aborted
from mcp_sync.oauth import OAuthError, OAuthProvider, SignInDeferred, headless_redirect
from mcp_sync.oauth.redis_store import RedisStateStore
from tests.helpers.oauth_fastmcp_server import serve
from tests.oauth.test_oauth_e2e import provider_for

REDIRECT = "http://127.0.0.1:1/callback"


@pytest.fixture
def server():
    with serve() as running:
        yield running


class TokensDieDuringTheCall(requests.Session):
    """The transport's session. Once armed, it lets the ``tools/call`` POST reach the server,
    then kills every token (as a revocation would) and aborts the call, as its user would:
    the call's ``notifications/cancelled`` then meets a 401."""

    def __init__(self, server) -> None:
        super().__init__()
        self.server = server
        self.controller: AbortController | None = None
        self.keep_refresh_tokens = False

    def send(self, request, **kwargs):  # type: ignore[override]
        response = super().send(request, **kwargs)
        controller = self.controller
        if controller is not None and b'"tools/call"' in (request.body or b""):
            self.controller = None
            self.server.provider.access_tokens.clear()
            if not self.keep_refresh_tokens:
                self.server.provider.refresh_tokens.clear()
            controller.abort("the user gave up")
        return response


def _connect(server, session):
    provider, redirects, grants = provider_for(server)
    transport = mcp_sync.StreamableHttpTransport(server.url, auth=provider, session=session)
    # the handshake era: a cancel there is a notifications/cancelled POST (2026-07-28 closes
    # the stream instead)
    client = mcp_sync.Client("t", "1", protocol="handshake")
    errors: list[BaseException] = []
    client.on_error(errors.append)
    client.connect(transport)
    return client, provider, redirects, grants, errors


def _abort_a_call(client, session) -> None:
    controller = AbortController()
    session.controller = controller
    with pytest.raises(Aborted):
        client.call_tool("add", {"a": 2, "b": 2}, signal=controller.signal)


@pytest.mark.timeout(90)
def test_the_cancel_of_an_aborted_call_never_opens_a_sign_in(server):
    session = TokensDieDuringTheCall(server)
    client, _, redirects, grants, errors = _connect(server, session)
    try:
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        assert len(redirects.urls) == 1  # the first sign-in
        _abort_a_call(client, session)
        # Before: the cancel's 401 ran a refresh (refused), then a whole new sign-in through
        # on_redirect (a browser) for a request the user had given up on.
        wait_until(lambda: errors or len(redirects.urls) > 1, timeout=30)
        assert len(redirects.urls) == 1, "a sign-in was opened for the cancel of an aborted call"
        assert "refresh_token" in grants.grants  # a refresh was tried: that is allowed
        (error,) = errors  # the cancel was dropped, and reported
        assert isinstance(error, SignInDeferred) and server.url in str(error)
        # the next request the user makes signs in, as it should
        assert client.call_tool("add", {"a": 3, "b": 3}).text == "6"
        assert len(redirects.urls) == 2
    finally:
        client.close()


@pytest.mark.timeout(90)
def test_a_notification_may_use_a_refresh(server):
    session = TokensDieDuringTheCall(server)
    session.keep_refresh_tokens = True
    client, provider, redirects, grants, errors = _connect(server, session)
    try:
        client.call_tool("add", {"a": 1, "b": 1})
        old = provider.tokens.access_token
        _abort_a_call(client, session)
        wait_until(lambda: provider.tokens.access_token != old, timeout=30)
        client.notify("notifications/roots/list_changed")
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"
        assert len(redirects.urls) == 1 and not errors, errors
        assert grants.grants == ["authorization_code", "refresh_token"]
    finally:
        client.close()


@pytest.mark.timeout(90)
def test_a_notification_after_the_tokens_died_is_dropped_and_reported(server):
    client, _, redirects, _, errors = _connect(server, requests.Session())
    try:
        client.call_tool("add", {"a": 1, "b": 1})
        server.provider.access_tokens.clear()
        server.provider.refresh_tokens.clear()
        client.notify("notifications/roots/list_changed")
        wait_until(lambda: errors or len(redirects.urls) > 1, timeout=30)
        assert len(redirects.urls) == 1
        assert [type(error) for error in errors] == [SignInDeferred]
    finally:
        client.close()


@pytest.mark.timeout(90)
def test_a_notification_over_legacy_sse_never_opens_a_sign_in():
    """The same rule over the 2024-11-05 HTTP+SSE transport (fastmcp's, with OAuth): a
    notification's 401 after the tokens died is dropped and reported, and the next call signs
    in. Before, the SSE transport let the notification open a second sign-in."""
    with serve(transport="sse") as server:
        provider, redirects, _ = provider_for(server)
        client = mcp_sync.Client("t", "1")
        errors: list[BaseException] = []
        client.on_error(errors.append)
        client.connect(mcp_sync.SseTransport(server.url, auth=provider))
        try:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
            server.provider.access_tokens.clear()
            server.provider.refresh_tokens.clear()
            client.notify("notifications/roots/list_changed")
            wait_until(lambda: errors or len(redirects.urls) > 1, timeout=30)
            assert len(redirects.urls) == 1, "a notification opened a sign-in"
            assert [type(error) for error in errors] == [SignInDeferred]
        finally:
            client.close()


# -- an OAuth endpoint that cannot be reached is named --------------------------------------


def _dead_base() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def _token_endpoint_down(stub: Stub) -> str:
    dead = f"{_dead_base()}/token"
    stub.standard(metadata={"token_endpoint": dead})
    return dead


def _registration_down(stub: Stub) -> str:
    dead = f"{_dead_base()}/register"
    stub.standard(metadata={"registration_endpoint": dead})
    return dead


def _authorization_server_down(stub: Stub) -> str:
    dead = _dead_base()
    stub.standard()
    stub.route(
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        (200, {"resource": stub.url, "authorization_servers": [dead]}),
    )
    return f"{dead}/.well-known/"


def _protected(stub: Stub) -> None:
    """The stub's MCP endpoint: every request is refused with a 401."""
    stub.route("POST", "/mcp", lambda request: (401, {"WWW-Authenticate": "Bearer"}, {}))


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("arrange", "what"),
    [
        (_token_endpoint_down, "token endpoint"),
        (_registration_down, "registration endpoint"),
        (_authorization_server_down, "authorization server metadata"),
    ],
)
def test_an_oauth_endpoint_that_is_down_is_named_not_the_mcp_url(stub, arrange, what):
    dead = arrange(stub)
    _protected(stub)
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    with pytest.raises(OAuthError) as caught:
        mcp_sync.connect(stub.url, auth=provider, protocol="handshake", timeout=30)
    # Before: "cannot connect to http://127.0.0.1:N/mcp: connection refused", a requests
    # error naming the MCP server, which was up.
    text = str(caught.value)
    assert what in text and dead in text and "connection refused" in text, text
    assert f"connect to {stub.url}" not in text


@pytest.mark.timeout(60)
def test_a_state_store_that_is_down_is_named(stub, tmp_path):
    stub.standard()
    _protected(stub)
    with redis_server(tmp_path) as url:
        store = RedisStateStore(url)
        provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect(), store=store)
    # Redis is gone: the sign-in cannot read or keep its state.
    with pytest.raises(OAuthError) as caught:
        mcp_sync.connect(stub.url, auth=provider, protocol="handshake", timeout=30)
    text = str(caught.value)
    assert "state store" in text and "RedisStateStore" in text, text
    assert f"connect to {stub.url}" not in text
