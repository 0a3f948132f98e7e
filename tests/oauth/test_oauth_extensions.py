"""The extension flows end to end: fastmcp's OAuth server with the RFC 7523 / 8693 / 9449
additions of oauth_extensions, and the real MCP endpoint accepting the tokens."""

from __future__ import annotations

import time

import pytest

from tests.helpers.support import FASTMCP_MISSING

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

import mcp_sync
from mcp_sync.oauth import (
    ClientCredentialsProvider,
    DPoPKey,
    IdJagExchange,
    InvalidGrantError,
    JwtBearerProvider,
)
from tests.helpers.oauth_extensions import Trust
from tests.helpers.oauth_fastmcp_server import MachineClient, serve
from tests.oauth.test_oauth_e2e import mcp_post_status, provider_for


def pem_pair() -> tuple[ec.EllipticCurvePrivateKey, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return key, public.decode()


@pytest.fixture
def trust():
    workload_key, workload_public = pem_pair()
    idp_key, _ = pem_pair()
    value = Trust(
        workload_public_key=workload_public,
        idp_private_key=idp_key,
        clients={"enterprise-app": "app-secret"},
    )
    value.workload_key = workload_key  # type: ignore[attr-defined]
    return value


def workload_jwt(trust, audience: str, *, expires_in: int = 300) -> str:
    now = int(time.time())
    return jwt.encode(
        {
            "iss": trust.workload_issuer,
            "sub": "ci-runner",
            "aud": audience,
            "iat": now,
            "exp": now + expires_in,
        },
        trust.workload_key,
        algorithm="ES256",
    )


@pytest.mark.timeout(60)
def test_workload_identity_federation(trust):
    with serve(trust=trust) as server:
        audiences: list[str] = []

        def assertion(audience: str, resource: str) -> str:
            audiences.append(audience)
            assert resource == server.url
            return workload_jwt(trust, audience)

        provider = JwtBearerProvider(server.url, assertion)
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
        assert trust.grants == ["workload"] and audiences == [str(server.provider.base_url)]


@pytest.mark.timeout(60)
def test_a_refused_assertion_is_raised_not_retried(trust):
    with serve(trust=trust) as server:
        expired = workload_jwt(trust, str(server.provider.base_url), expires_in=-120)
        provider = JwtBearerProvider(server.url, expired)
        with pytest.raises(InvalidGrantError):
            mcp_sync.connect(server.url, auth=provider)
        assert trust.grants == []


@pytest.mark.timeout(60)
def test_enterprise_managed_authorization_trades_the_id_token_for_an_id_jag(trust):
    with serve(trust=trust) as server:
        idp = IdJagExchange(
            f"{server.base_url}/idp/token", trust.id_token(), client_id=trust.idp_client_id
        )
        provider = JwtBearerProvider(
            server.url, idp, client_id="enterprise-app", client_secret="app-secret"
        )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
        assert trust.grants == ["id-jag"]
        token = provider.tokens.access_token
        assert server.provider.access_tokens[token].client_id == "enterprise-app"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("require_nonce", [False, True])
def test_dpop_bound_tokens_with_a_fresh_proof_per_request(trust, require_nonce):
    trust.require_nonce = require_nonce
    with serve(trust=trust) as server:
        key = DPoPKey()
        provider, _, _ = provider_for(server, dpop=key)
        with mcp_sync.connect(server.url, auth=provider) as client:
            for n in range(3):
                assert client.call_tool("add", {"a": n, "b": 1}).text == str(n + 1)
        tokens = provider.tokens
        assert tokens.token_type == "DPoP"
        assert trust.dpop_bindings[tokens.access_token] == key.thumbprint
        assert len(trust.jtis) >= 4  # one proof per request, never reused
        # a stolen DPoP token is useless as a bearer token
        assert mcp_post_status(server, tokens.access_token) == 401


@pytest.mark.timeout(60)
@pytest.mark.parametrize("grant", ["authorization_code", "client_credentials"])
def test_a_nonce_the_resource_server_sends_with_its_answers_is_used_without_a_challenge(
    trust, grant
):
    # RFC 9449 section 9: a resource server may hand out the next nonce in any response
    trust.require_nonce = trust.rotate_rs_nonce = True
    machines = {"machine": MachineClient(secret="s3cret")}
    with serve(machine_clients=machines, trust=trust) as server:
        if grant == "authorization_code":
            provider, _, _ = provider_for(server, dpop=DPoPKey())
        else:
            provider = ClientCredentialsProvider(
                server.url, "machine", client_secret="s3cret", dpop=DPoPKey()
            )
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 0, "b": 1}).text == "1"
            challenged = trust.rs_nonce_challenges  # the first request had no nonce yet
            assert challenged >= 1
            for n in range(10):
                assert client.call_tool("add", {"a": n, "b": 1}).text == str(n + 1)
            assert trust.rs_nonce_challenges == challenged  # each answer's nonce was used


@pytest.mark.timeout(60)
def test_dpop_is_used_when_the_authorization_server_advertises_it(trust):
    with serve(trust=trust) as server:
        provider, _, _ = provider_for(server)  # dpop=None: automatic
        with mcp_sync.connect(server.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        assert provider.tokens.token_type == "DPoP"
    with serve() as plain:  # no DPoP advertised: bearer tokens
        provider, _, _ = provider_for(plain)
        with mcp_sync.connect(plain.url, auth=provider) as client:
            assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        assert provider.tokens.token_type == "Bearer"


def test_dpop_keys_survive_a_restart_through_their_pem():
    key = DPoPKey()
    again = DPoPKey.from_pem(key.private_pem())
    assert again.thumbprint == key.thumbprint
    proof = again.proof("post", "https://mcp.example.com/mcp?x=1#f", access_token="at")
    header = jwt.get_unverified_header(proof)
    claims = jwt.decode(
        proof, jwt.PyJWK(header["jwk"], algorithm="ES256").key, algorithms=["ES256"]
    )
    assert header["typ"] == "dpop+jwt" and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"
    assert requests.utils.quote(claims["ath"]) == claims["ath"]
