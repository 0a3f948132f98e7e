"""Details other OAuth clients get right, each against the scriptable server (oauth_stub) or
the real loopback callback server."""

from __future__ import annotations

import base64

import pytest
import requests

from mcp_sync.oauth import (
    CallbackError,
    CallbackServer,
    DiscoveryError,
    MemoryStateStore,
    OAuthError,
    OAuthProvider,
    headless_redirect,
)
from mcp_sync.oauth.discovery import canonical_resource
from tests.oauth.test_oauth_refusals import REDIRECT, challenge, signed_in


@pytest.fixture
def callbacks():
    server = CallbackServer.listen(timeout=10)
    yield server
    server.close()


def test_a_configured_authorization_server_metadata_url_replaces_discovery(stub):
    stub.standard()
    document = stub.routes.pop(("GET", "/.well-known/oauth-authorization-server"))
    stub.routes.pop(("GET", "/.well-known/oauth-protected-resource/mcp"))  # no PRM at all
    stub.route("GET", "/tenant/as.json", document)
    provider = OAuthProvider(
        stub.url,
        REDIRECT,
        on_redirect=headless_redirect(),
        authorization_server_metadata_url=f"{stub.base}/tenant/as.json",
    )
    assert provider.on_unauthorized(challenge(stub.url)) is True
    assert provider.token() == "at-1"
    assert not stub.hits("/.well-known/oauth-authorization-server")
    assert not stub.hits("/.well-known/openid-configuration")


def test_a_resource_metadata_that_is_not_a_url_is_ignored(stub):
    stub.standard()
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    assert (
        provider.on_unauthorized(
            challenge(stub.url, header='Bearer resource_metadata="::not a url::"')
        )
        is True
    )
    assert stub.hits("/.well-known/oauth-protected-resource/mcp")


def test_an_empty_client_secret_in_registration_is_absent(stub):
    stub.standard()
    stub.route("POST", "/register", (201, {"client_id": "c-1", "client_secret": ""}))
    signed_in(stub)
    request = stub.hits("/token")[0]
    assert "Authorization" not in request["headers"]  # no Basic with an empty secret
    assert request["form"]["client_id"] == "c-1" and "client_secret" not in request["form"]


def test_offline_access_sends_prompt_consent(stub):
    stub.standard(metadata={"scopes_supported": ["mcp", "offline_access"]})
    OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect()).on_unauthorized(
        challenge(stub.url, header='Bearer scope="mcp"')
    )
    query = stub.hits("/authorize")[-1]["query"]
    assert query["scope"] == "mcp offline_access" and query["prompt"] == "consent"
    stub.standard()
    OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect()).on_unauthorized(
        challenge(stub.url, header='Bearer scope="mcp"')
    )
    assert "prompt" not in stub.hits("/authorize")[-1]["query"]


def test_an_authorization_server_without_the_code_response_type_is_refused(stub):
    stub.standard(metadata={"response_types_supported": ["token"]})
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    with pytest.raises(DiscoveryError, match="response_types_supported"):
        provider.on_unauthorized(challenge(stub.url))
    assert not stub.hits("/register") and not stub.hits("/authorize")


def test_unauthorized_client_on_refresh_registers_and_signs_in_again(stub):
    stub.standard(
        tokens=[
            {"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 3600},
            {"_status": 400, "error": "unauthorized_client"},
            {"access_token": "at-2", "refresh_token": "rt-2", "expires_in": 3600},
        ]
    )
    provider = signed_in(stub)
    assert provider.on_unauthorized(challenge(stub.url, token="at-1")) is True
    assert provider.token() == "at-2"
    grants = [hit["form"]["grant_type"] for hit in stub.hits("/token")]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]
    assert len(stub.hits("/register")) == 2  # the refused client was dropped


def test_state_is_keyed_by_the_normalised_server_url():
    store = MemoryStateStore()
    store.save(
        canonical_resource("https://mcp.example.com/mcp"),
        {"tokens": {"accessToken": "at", "tokenType": "Bearer"}},
    )
    for url in ("https://mcp.example.com:443/mcp", "HTTPS://MCP.example.com/mcp/"):
        assert OAuthProvider(url, REDIRECT, store=store).tokens is not None, url


@pytest.mark.parametrize(
    "pasted",
    [
        "http://evil.example.com:1/callback?{query}",
        "http://127.0.0.1:1/elsewhere?{query}",
    ],
)
def test_a_pasted_redirect_must_be_the_redirect_uri(stub, pasted):
    stub.standard()
    provider = OAuthProvider(stub.url, REDIRECT)
    landed = requests.get(provider.start_authorization(), allow_redirects=False, timeout=10)
    query = landed.headers["Location"].split("?", 1)[1]
    with pytest.raises(OAuthError, match="redirect URI"):
        provider.authorize(pasted.format(query=query))
    assert not stub.hits("/token")
    provider.authorize(landed.headers["Location"])  # the real one still finishes
    assert provider.token() == "at-1"


def test_an_error_redirect_shows_its_description(callbacks):
    pending = callbacks.wait_for_callback("s-1")
    page = requests.get(
        callbacks.redirect_url,
        timeout=5,
        params={
            "error": "access_denied",
            "error_description": "The admin said <no>",
            "state": "s-1",
        },
    )
    assert page.status_code == 400
    assert "The admin said &lt;no&gt;" in page.text
    with pytest.raises(OAuthError, match="access_denied"):
        pending.wait()


def test_a_redirect_on_the_wrong_path_fails_the_wait_at_once(callbacks):
    pending = callbacks.wait_for_callback("s-2")
    wrong = callbacks.redirect_url.replace("/callback", "/other")
    page = requests.get(wrong, params={"code": "c", "state": "s-2"}, timeout=5)
    assert page.status_code == 404
    with pytest.raises(CallbackError, match="/other"):
        pending.wait()


def test_a_callback_without_code_answers_400_and_fails_the_wait(callbacks):
    pending = callbacks.wait_for_callback("s-3")
    page = requests.get(callbacks.redirect_url, params={"state": "s-3"}, timeout=5)
    assert page.status_code == 400
    with pytest.raises(CallbackError, match="no code"):
        pending.wait()


def test_a_second_wait_for_the_same_state_fails(callbacks):
    callbacks.wait_for_callback("s-4")
    with pytest.raises(CallbackError, match="already"):
        callbacks.wait_for_callback("s-4")


def test_basic_credentials_are_still_sent_for_a_real_secret(stub):
    stub.standard()
    stub.route("POST", "/register", (201, {"client_id": "c-2", "client_secret": "s3cret"}))
    signed_in(stub)
    header = stub.hits("/token")[0]["headers"]["Authorization"]
    assert base64.b64decode(header.split()[1]).decode() == "c-2:s3cret"


def test_every_oauth_provider_is_an_auth_provider_and_adapt_is_deprecated(stub):
    from mcp_sync.auth import AuthProvider
    from mcp_sync.oauth import ClientCredentialsProvider, JwtBearerProvider, adapt

    providers = [
        OAuthProvider(stub.url, REDIRECT),
        ClientCredentialsProvider(stub.url, "machine", client_secret="s"),
        JwtBearerProvider(stub.url, "an-assertion", client_id="machine"),
    ]
    for provider in providers:
        assert isinstance(provider, AuthProvider)
        with pytest.raises(OAuthError, match="not sent"):
            provider.bind("http://127.0.0.1:9/elsewhere")  # the transport refuses the server
        assert provider.authorization("POST", stub.url) == {}  # not signed in: no header
        with pytest.warns(DeprecationWarning, match="pass the provider itself as auth="):
            assert adapt(provider) is provider

    class Source:  # a third-party token source written for adapt()
        server_url = stub.url

        def token(self) -> str | None:
            return "tok"

        def handle_challenge(self, ctx) -> bool:
            return False

    with pytest.warns(DeprecationWarning):
        wrapped = adapt(Source())
    assert isinstance(wrapped, AuthProvider)
    assert wrapped.authorization("POST", stub.url) == {"Authorization": "Bearer tok"}
