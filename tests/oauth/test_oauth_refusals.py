"""Every refusal of the OAuth client, against a scriptable server on 127.0.0.1 (oauth_stub)."""

from __future__ import annotations

import base64
import io
import logging
import os
import stat
import subprocess
import sys
import time

import pytest
import requests

import mcp_sync
from mcp_sync.auth import UnauthorizedContext
from mcp_sync.cli import main
from mcp_sync.oauth import (
    AuthorizationRequired,
    CallbackResult,
    EndpointUnreachable,
    FileStateStore,
    InsecureEndpointError,
    InsufficientScopeError,
    InvalidGrantError,
    IssuerMismatchError,
    OAuthError,
    OAuthProvider,
    PendingAuthorization,
    PkceNotSupportedError,
    ResourceMismatchError,
    StateMismatchError,
    StateStoreError,
    TokenError,
    UnsafeStateFile,
    discover,
    headless_redirect,
)
from mcp_sync.oauth.discovery import check_resource, server_metadata_urls
from mcp_sync.oauth.flow import check_callback
from tests.helpers.hostile_peer import HostilePeer
from tests.helpers.oauth_stub import Stub
from tests.helpers.support import ROOT

REDIRECT = "http://127.0.0.1:1/callback"


def challenge(url: str, *, status: int = 401, header: str = "Bearer", token: str | None = None):
    return UnauthorizedContext(
        status=status,
        headers={},
        www_authenticate=header,
        url=url,
        session=requests.Session(),
        token=token,
    )


def signed_in(stub: Stub, **options) -> OAuthProvider:
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect(), **options)
    assert provider.on_unauthorized(challenge(stub.url)) is True
    return provider


# -- https only, except loopback --------------------------------------------------------------


def test_http_authorization_server_off_loopback_is_refused(stub):
    stub.route(
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        (200, {"resource": stub.url, "authorization_servers": ["http://as.example.com"]}),
    )
    with pytest.raises(InsecureEndpointError, match="as.example.com"):
        discover(requests.Session(), stub.url)


def test_http_token_endpoint_off_loopback_is_refused(stub):
    stub.standard(metadata={"token_endpoint": "http://as.example.com/token"})
    with pytest.raises(InsecureEndpointError, match="token endpoint"):
        discover(requests.Session(), stub.url)
    assert not stub.hits("/token")


def test_http_client_metadata_document_url_is_refused():
    with pytest.raises(InsecureEndpointError):
        OAuthProvider(
            "https://mcp.example.com/mcp",
            REDIRECT,
            client_metadata_url="http://example.com/client.json",
        )


# -- metadata ---------------------------------------------------------------------------------


def test_metadata_with_another_issuer_is_discarded(stub):
    stub.standard(metadata={"issuer": "https://attacker.example.com"})
    with pytest.raises(IssuerMismatchError, match="attacker"):
        discover(requests.Session(), stub.url)
    assert not stub.hits("/register") and not stub.hits("/authorize")


def test_authorization_server_without_pkce_s256_is_refused(stub):
    stub.standard(metadata={"code_challenge_methods_supported": None})
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    with pytest.raises(PkceNotSupportedError):
        provider.on_unauthorized(challenge(stub.url))
    assert not stub.hits("/register") and not stub.hits("/authorize")
    stub.standard(metadata={"code_challenge_methods_supported": ["plain"]})
    with pytest.raises(PkceNotSupportedError):
        discover(requests.Session(), stub.url)


def test_protected_resource_metadata_for_another_resource_is_refused(stub):
    stub.standard()
    stub.route(
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        (200, {"resource": "https://evil.example.com/mcp", "authorization_servers": [stub.base]}),
    )
    with pytest.raises(ResourceMismatchError):
        discover(requests.Session(), stub.url)
    assert not stub.hits("/.well-known/oauth-authorization-server")


def test_resource_identity_rules():
    check_resource("https://h.example/mcp", "https://h.example/mcp")
    check_resource("https://h.example", "https://h.example/mcp")
    check_resource("https://H.example:443/", "https://h.example/mcp")
    for bad in (
        "https://h.example/other",
        "https://h.example/mc",
        "http://h.example/mcp",
        "https://h.example:8443/mcp",
        "https://h.example/mcp#frag",
    ):
        with pytest.raises(ResourceMismatchError):
            check_resource(bad, "https://h.example/mcp")


def test_authorization_server_metadata_order():
    assert server_metadata_urls("https://a.example/t1") == [
        "https://a.example/.well-known/oauth-authorization-server/t1",
        "https://a.example/.well-known/openid-configuration/t1",
        "https://a.example/t1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://a.example/") == [
        "https://a.example/.well-known/oauth-authorization-server",
        "https://a.example/.well-known/openid-configuration",
    ]


# -- the redirect ------------------------------------------------------------------------------


def pending(*, iss_required: bool) -> PendingAuthorization:
    return PendingAuthorization(
        state="s",
        code_verifier="v",
        issuer="https://as.example",
        iss_required=iss_required,
        redirect_uri=REDIRECT,
        client_id="c",
    )


@pytest.mark.parametrize(
    "iss", ["https://evil.example", "https://as.example/", "HTTPS://as.example"]
)
def test_iss_other_than_the_issuer_is_refused(iss):
    for required in (True, False):
        with pytest.raises(IssuerMismatchError):
            check_callback(
                pending(iss_required=required), CallbackResult(code="x", state="s", iss=iss)
            )


def test_missing_iss_is_refused_only_when_promised():
    with pytest.raises(IssuerMismatchError):
        check_callback(pending(iss_required=True), CallbackResult(code="x", state="s"))
    assert check_callback(pending(iss_required=False), CallbackResult(code="x", state="s")) == "x"
    assert (
        check_callback(
            pending(iss_required=True),
            CallbackResult(code="x", state="s", iss="https://as.example"),
        )
        == "x"
    )


def test_error_redirect_with_wrong_iss_is_reported_as_mismatch_not_as_the_error():
    result = CallbackResult(state="s", iss="https://evil.example", error="access_denied")
    with pytest.raises(IssuerMismatchError):
        check_callback(pending(iss_required=True), result)


def test_wrong_iss_in_the_redirect_never_reaches_the_token_endpoint(stub):
    stub.standard(iss="https://evil.example")
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    with pytest.raises(IssuerMismatchError):
        provider.on_unauthorized(challenge(stub.url))
    assert stub.hits("/authorize") and not stub.hits("/token")


def test_state_mismatch_is_refused_and_nothing_is_exchanged(stub):
    stub.standard()
    provider = OAuthProvider(stub.url, REDIRECT)  # no handler: the user finishes later
    with pytest.raises(AuthorizationRequired) as raised:
        provider.on_unauthorized(challenge(stub.url))
    assert raised.value.authorization_url.startswith(f"{stub.base}/authorize?")
    with pytest.raises(StateMismatchError):
        provider.authorize(f"{REDIRECT}?code=the-code&state=forged&iss={stub.base}")
    with pytest.raises(StateMismatchError):
        provider.authorize(code="the-code")  # no state at all
    assert not stub.hits("/token")
    # the real redirect still works, once
    url = f"{REDIRECT}?code=the-code&state={raised.value.state}&iss={stub.base}"
    assert provider.authorize(url).access_token == "at-1"
    with pytest.raises(StateMismatchError):
        provider.authorize(url)


def test_authorization_request_carries_pkce_state_and_resource(stub):
    stub.standard()
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    provider.on_unauthorized(challenge(stub.url, header='Bearer scope="a b"'))
    query = stub.hits("/authorize")[0]["query"]
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["resource"] == stub.url and query["scope"] == "a b" and query["state"]
    form = stub.hits("/token")[0]["form"]
    assert form["resource"] == stub.url and form["code_verifier"]
    assert form["grant_type"] == "authorization_code"


# -- credentials stay with their server ---------------------------------------------------------


def test_tokens_are_never_sent_to_another_origin(stub):
    stub.standard()
    provider = signed_in(stub)
    other = Stub()
    try:
        before = len(other.requests)
        with pytest.raises(OAuthError, match="not sent"):
            mcp_sync.connect(other.url, auth=provider)
        assert len(other.requests) == before  # nothing at all reached the other server
        with pytest.raises(OAuthError):
            provider.on_unauthorized(challenge(other.url))
    finally:
        other.close()


def test_tokens_stay_out_of_reprs_logs_and_errors(stub, caplog):
    caplog.set_level(logging.DEBUG, logger="mcp_sync")
    stub.standard(
        tokens=[
            {"access_token": "SECRET-AT", "refresh_token": "SECRET-RT", "expires_in": 3600},
            {"_status": 400, "error": "invalid_grant", "error_description": "no"},
        ]
    )
    provider = signed_in(stub)
    with pytest.raises(InvalidGrantError) as raised:
        provider.refresh()
    text = caplog.text + repr(provider) + repr(provider.tokens) + str(raised.value)
    assert "SECRET" not in text
    assert "SECRET" not in repr(provider)


def test_basic_client_authentication_form_encodes_the_credentials(stub):
    stub.standard(metadata={"token_endpoint_auth_methods_supported": ["client_secret_basic"]})
    signed_in(stub, client_id="id:with space", client_secret="p@ss/wörd")
    header = stub.hits("/token")[0]["headers"]["Authorization"]
    assert base64.b64decode(header.split()[1]).decode() == "id%3Awith%20space:p%40ss%2Fw%C3%B6rd"
    assert "client_secret" not in stub.hits("/token")[0]["form"]


# -- refresh failures --------------------------------------------------------------------------


def test_invalid_grant_on_refresh_falls_back_to_a_new_authorization(stub):
    stub.standard(
        tokens=[
            {"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 3600},
            {"_status": 400, "error": "invalid_grant"},
            {"access_token": "at-2", "refresh_token": "rt-2", "expires_in": 3600},
        ]
    )
    provider = signed_in(stub)
    assert provider.on_unauthorized(challenge(stub.url, token="at-1")) is True
    assert provider.token() == "at-2"
    grants = [hit["form"]["grant_type"] for hit in stub.hits("/token")]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]


def test_an_aborted_refresh_never_falls_back_to_a_new_authorization(stub):
    stub.standard(
        tokens=[
            {"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 3600},
            {"_status": 503, "error": "temporarily_unavailable"},
        ]
    )
    provider = signed_in(stub)
    with pytest.raises(TokenError, match="temporarily_unavailable"):
        provider.on_unauthorized(challenge(stub.url, token="at-1"))
    assert len(stub.hits("/authorize")) == 1  # no second sign-in
    assert provider.tokens is not None and provider.tokens.refresh_token == "rt-1"

    def hang_up(request):
        raise ConnectionResetError

    stub.route("POST", "/token", hang_up)
    with pytest.raises(EndpointUnreachable, match="token endpoint"):
        provider.on_unauthorized(challenge(stub.url, token="at-1"))
    assert len(stub.hits("/authorize")) == 1


def test_a_401_for_a_token_already_replaced_just_retries(stub):
    stub.standard()
    provider = signed_in(stub)
    assert provider.on_unauthorized(challenge(stub.url, token="an-older-token")) is True
    assert len(stub.hits("/token")) == 1


# -- scopes ------------------------------------------------------------------------------------


def test_step_up_requests_the_union_and_stops_at_its_limit(stub):
    stub.standard(tokens=[{"access_token": "at", "scope": "read", "expires_in": 3600}])
    provider = signed_in(stub, max_step_up=2)
    forbidden = 'Bearer error="insufficient_scope", scope="write"'
    for _ in range(2):
        assert provider.on_unauthorized(
            challenge(stub.url, status=403, header=forbidden, token="at")
        )
    assert stub.hits("/authorize")[-1]["query"]["scope"] == "read write"
    with pytest.raises(InsufficientScopeError):
        provider.on_unauthorized(challenge(stub.url, status=403, header=forbidden, token="at"))
    assert len(stub.hits("/authorize")) == 3


def test_offline_access_only_when_the_authorization_server_lists_it(stub):
    stub.standard(metadata={"scopes_supported": ["mcp", "offline_access"]})
    signed_in(stub)  # no scope anywhere: scope omitted, offline_access not added alone
    assert "scope" not in stub.hits("/authorize")[-1]["query"]
    OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect()).on_unauthorized(
        challenge(stub.url, header='Bearer scope="mcp"')
    )
    assert stub.hits("/authorize")[-1]["query"]["scope"] == "mcp offline_access"
    stub.standard(metadata={"scopes_supported": ["mcp"]})
    OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect()).on_unauthorized(
        challenge(stub.url, header='Bearer scope="mcp"')
    )
    assert stub.hits("/authorize")[-1]["query"]["scope"] == "mcp"


def test_dynamic_registration_sends_application_type(stub):
    stub.standard()
    signed_in(stub)
    import json

    body = json.loads(stub.hits("/register")[0]["raw"])
    assert body["application_type"] == "native"
    assert body["redirect_uris"] == [REDIRECT]
    assert "refresh_token" in body["grant_types"]


# -- revocation and the token store ----------------------------------------------------------


@pytest.fixture
def dripping_revocation():
    """A revocation endpoint that drips its answer a byte every 0.1 s
    (tests/helpers/hostile_peer.py)."""
    peer = HostilePeer()
    yield f"{peer.base}/drip"
    peer.close()


@pytest.mark.parametrize(
    ("endpoint", "refusal"),
    [
        ("https://169.254.169.254/revoke", "ForbiddenEndpointError"),  # the cloud metadata host
        ("http://10.1.2.3/revoke", "InsecureEndpointError"),
        ("dripping", "ExchangeTimeout"),
    ],
)
def test_a_refused_revocation_still_forgets_the_tokens(
    stub, tmp_path, caplog, request, endpoint, refusal
):
    """RFC 7009 revocation is a courtesy to the server: the tokens are forgotten whether or
    not it worked, as ``revoke()`` says (before: the refusal was raised and the refresh token
    stayed on disk)."""
    if endpoint == "dripping":
        endpoint = request.getfixturevalue("dripping_revocation")
    stub.standard(metadata={"revocation_endpoint": endpoint})
    path = tmp_path / "oauth.json"
    provider = signed_in(stub, store=FileStateStore(path), timeout=1)
    assert "rt-1" in path.read_text()
    caplog.set_level(logging.WARNING, logger="mcp_sync")
    started = time.monotonic()
    provider.revoke()
    assert time.monotonic() - started < 15
    assert provider.tokens is None
    assert "rt-1" not in path.read_text() and "at-1" not in path.read_text()
    assert refusal in caplog.text and endpoint in caplog.text
    assert OAuthProvider(stub.url, store=FileStateStore(path)).tokens is None


def test_logout_forgets_the_tokens_when_revocation_is_refused(stub, tmp_path, monkeypatch):
    """Before: ``mcp-sync logout`` exited 6 and left the refresh token on disk."""
    stub.standard(metadata={"revocation_endpoint": "https://169.254.169.254/revoke"})
    path = tmp_path / "oauth.json"
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(path))
    signed_in(stub, store=FileStateStore(path))
    err = io.StringIO()
    assert main(["logout", stub.url], out=io.StringIO(), err=err) == 0, err.getvalue()
    assert f"Signed out of {stub.url}" in err.getvalue()
    assert "169.254.169.254" in err.getvalue()  # the warning says revocation failed
    assert "rt-1" not in path.read_text()


def test_the_cli_makes_its_token_store_private_whatever_the_umask(tmp_path):
    """The XDG base directory spec asks for 0700 for a directory it makes; the store file
    and its locks are 0600. Before: ``~/.config/mcp-sync`` was 0755, and 0777 under umask 000."""
    config = tmp_path / "config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config), "PYTHONPATH": str(ROOT)}
    env.pop("MCP_SYNC_OAUTH_FILE", None)
    command = 'umask 000 && exec "$0" -m mcp_sync logout https://mcp.example.invalid/mcp'
    done = subprocess.run(
        ["sh", "-c", command, sys.executable], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    store = config / "mcp-sync" / "oauth.json"
    for folder in (config, store.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for file in store.parent.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert store.exists()


@pytest.mark.parametrize("fault", ["world-writable", "group-writable", "another user's"])
def test_a_token_store_another_user_could_write_is_refused(stub, tmp_path, monkeypatch, fault):
    """Whoever can write the file can swap in their own token endpoint or client: refused,
    naming the file and the fix, as ssh refuses a key file others can read. Before: read
    silently."""
    stub.standard()
    path = tmp_path / "oauth.json"
    signed_in(stub, store=FileStateStore(path))
    if fault == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(path, 65534, 65534)
        says = "owned by uid 65534"
    else:
        path.chmod(0o666 if fault == "world-writable" else 0o620)
        says = "writable by others"
    with pytest.raises(UnsafeStateFile, match=says) as caught:
        FileStateStore(path).load(stub.url)
    assert str(path) in str(caught.value) and isinstance(caught.value, StateStoreError)
    with pytest.raises(UnsafeStateFile):
        FileStateStore(path).save(stub.url, None)
    # the CLI: a config problem (exit 2) naming the file; nothing is sent with its tokens
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(path))
    before = len(stub.hits("/mcp"))
    err = io.StringIO()
    assert main([stub.url, "tools"], out=io.StringIO(), err=err) == 2, err.getvalue()
    assert str(path) in err.getvalue() and says in err.getvalue()
    assert len(stub.hits("/mcp")) == before
    assert "Traceback" not in err.getvalue()
