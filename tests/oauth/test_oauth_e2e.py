"""End to end against fastmcp's InMemoryOAuthProvider on 127.0.0.1: discovery, dynamic
registration, PKCE, calls, refresh with rotation, revocation, expiry, shared refreshes."""

from __future__ import annotations

import logging
import threading
import time
from urllib.parse import parse_qs

import pytest
import requests

from tests.helpers.support import FASTMCP_MISSING

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)

from fastmcp.server.auth.providers import in_memory

import mcp_sync
from mcp_sync.oauth import (
    AuthorizationRequired,
    FileStateStore,
    OAuthProvider,
    headless_redirect,
)
from tests.helpers.oauth_fastmcp_server import serve


class CountingSession(requests.Session):
    """Counts token requests by grant type."""

    def __init__(self) -> None:
        super().__init__()
        self.grants: list[str] = []
        self._lock = threading.Lock()

    def request(self, method, url, *args, **kwargs):  # type: ignore[override]
        if method.upper() == "POST" and url.endswith("/token"):
            grant = (kwargs.get("data") or {}).get("grant_type")
            with self._lock:
                self.grants.append(str(grant))
        return super().request(method, url, *args, **kwargs)


class Redirects:
    """A headless on_redirect that counts sign-ins."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self._inner = headless_redirect()

    def __call__(self, url: str):
        self.urls.append(url)
        return self._inner(url)


def mcp_post_status(server, token: str) -> int:
    """The status the MCP endpoint gives a request carrying ``token``."""
    response = requests.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=10,
    )
    return response.status_code


def provider_for(server, **options) -> tuple[OAuthProvider, Redirects, CountingSession]:
    redirects, session = Redirects(), CountingSession()
    provider = OAuthProvider(
        server.url, "http://127.0.0.1:1/callback", on_redirect=redirects, session=session, **options
    )
    return provider, redirects, session


def wait_until_expired(provider: OAuthProvider) -> None:
    expires_at = provider.tokens.expires_at
    assert expires_at is not None
    deadline = time.monotonic() + 10
    while time.time() <= expires_at + 0.05:
        assert time.monotonic() < deadline, "the token never expired"
        time.sleep(0.05)


@pytest.fixture
def server():
    with serve() as running:
        yield running


@pytest.fixture
def short_lived(monkeypatch):
    monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", 2)


@pytest.mark.timeout(60)
def test_sign_in_registers_uses_pkce_and_calls(server, caplog):
    caplog.set_level(logging.DEBUG)
    provider, redirects, session = provider_for(server)
    with mcp_sync.connect(server.url, auth=provider) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    assert len(redirects.urls) == 1
    query = parse_qs(redirects.urls[0].split("?", 1)[1])
    assert query["code_challenge_method"] == ["S256"]
    assert query["resource"] == [server.url]
    assert len(server.provider.clients) == 1  # dynamically registered
    assert session.grants == ["authorization_code"]
    token = provider.tokens.access_token
    assert mcp_post_status(server, token) != 401
    # tokens never reach the logs or a repr
    assert token not in caplog.text and provider.tokens.refresh_token not in caplog.text
    assert token not in repr(provider) + repr(provider.tokens)


@pytest.mark.timeout(60)
def test_refresh_rotates_and_the_old_tokens_are_refused(server):
    provider, redirects, session = provider_for(server)
    with mcp_sync.connect(server.url, auth=provider) as client:
        client.call_tool("add", {"a": 1, "b": 1})
        old = provider.tokens
        new = provider.refresh()
        assert new.access_token != old.access_token
        assert new.refresh_token != old.refresh_token  # rotated
        assert mcp_post_status(server, old.access_token) == 401
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    reuse = requests.post(
        f"{server.base_url}/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": old.refresh_token,
            "client_id": next(iter(server.provider.clients)),
        },
        timeout=10,
    )
    assert reuse.status_code >= 400  # the rotated-out refresh token is dead
    assert len(redirects.urls) == 1
    assert session.grants == ["authorization_code", "refresh_token"]


@pytest.mark.timeout(60)
def test_token_is_refreshed_before_it_expires(server, short_lived):
    provider, redirects, session = provider_for(server, refresh_margin=1.0)
    with mcp_sync.connect(server.url, auth=provider) as client:
        first = provider.tokens.access_token
        wait_until_expired(provider)
        assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
        assert provider.tokens.access_token != first
    assert session.grants.count("refresh_token") >= 1
    assert len(redirects.urls) == 1  # no second sign-in


@pytest.mark.timeout(60)
def test_expired_token_rejected_by_the_server_leads_to_a_new_sign_in(server, short_lived):
    # No early refresh: the server sees the expired token, answers 401 and (fastmcp) drops the
    # refresh token with it; the refresh gets invalid_grant and a new authorization follows.
    provider, redirects, session = provider_for(server, refresh_margin=-3600)
    with mcp_sync.connect(server.url, auth=provider) as client:
        wait_until_expired(provider)
        assert client.call_tool("add", {"a": 3, "b": 3}).text == "6"
    assert session.grants == ["authorization_code", "refresh_token", "authorization_code"]
    assert len(redirects.urls) == 2


@pytest.mark.timeout(60)
def test_revoked_tokens_lead_to_a_new_sign_in(server):
    provider, redirects, _ = provider_for(server)
    with mcp_sync.connect(server.url, auth=provider) as client:
        client.call_tool("add", {"a": 1, "b": 1})
        revoked = provider.tokens.access_token
        provider.revoke()  # RFC 7009 at the server's revocation endpoint
        assert provider.tokens is None
        assert mcp_post_status(server, revoked) == 401
        assert client.call_tool("add", {"a": 4, "b": 4}).text == "8"
    assert len(redirects.urls) == 2


@pytest.mark.timeout(60)
def test_concurrent_401s_share_one_refresh(server):
    provider, redirects, session = provider_for(server, refresh_margin=-3600)
    with mcp_sync.connect(server.url, auth=provider) as client:
        # revoke the access token only: the server answers 401, the refresh token still works
        server.provider.access_tokens.pop(provider.tokens.access_token)
        results: list[str] = []
        threads = [
            threading.Thread(
                target=lambda: results.append(client.call_tool("add", {"a": 1, "b": 2}).text)
            )
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert results == ["3"] * 6
    assert session.grants.count("refresh_token") == 1
    assert len(redirects.urls) == 1


@pytest.mark.timeout(60)
def test_two_stores_on_one_file_refresh_once(server, tmp_path, short_lived):
    path = tmp_path / "oauth.json"
    first, redirects, session_a = provider_for(
        server, store=FileStateStore(path), refresh_margin=1.0
    )
    with mcp_sync.connect(server.url, auth=first) as client:
        client.call_tool("add", {"a": 1, "b": 1})
    # a second "process": its own store object and lock file descriptor on the same file
    second, _, session_b = provider_for(server, store=FileStateStore(path), refresh_margin=1.0)
    assert second.tokens.access_token == first.tokens.access_token
    wait_until_expired(first)
    earlier = len(session_a.grants) + len(session_b.grants)
    tokens: list[str | None] = []
    threads = [
        threading.Thread(target=lambda p=p: tokens.append(p.token())) for p in (first, second)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert tokens[0] == tokens[1] is not None
    assert len(session_a.grants) + len(session_b.grants) == earlier + 1  # one refresh
    assert mcp_post_status(server, tokens[0]) != 401
    assert len(redirects.urls) == 1


@pytest.mark.timeout(60)
def test_notebook_flow_authorization_required_then_authorize(server, tmp_path):
    store_path = tmp_path / "state.json"
    provider = OAuthProvider(
        server.url, "http://127.0.0.1:1/callback", store=FileStateStore(store_path)
    )
    with pytest.raises(AuthorizationRequired) as needed:
        mcp_sync.connect(server.url, auth=provider)
    # the user signs in; the browser ends on the redirect URL, which they paste back
    # (in a new kernel: a fresh provider over the same store)
    landed = requests.get(needed.value.authorization_url, allow_redirects=False, timeout=10)
    again = OAuthProvider(
        server.url, "http://127.0.0.1:1/callback", store=FileStateStore(store_path)
    )
    again.authorize(landed.headers["Location"])
    with mcp_sync.connect(server.url, auth=again) as client:
        assert client.call_tool("add", {"a": 5, "b": 5}).text == "10"
