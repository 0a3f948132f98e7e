"""The OAuth extensions fastmcp's authorization server lacks, added in front of it (ASGI).

fastmcp's ``InMemoryOAuthProvider`` knows the authorization code, refresh and (with
``ClientCredentialsGrant``) client credentials grants, with bearer tokens. This middleware adds,
following the RFCs, what the extension flows need, and issues tokens fastmcp's MCP endpoint
accepts (``provider.access_tokens``):

- the JWT bearer grant (RFC 7523 2.1) at ``/token``: a workload JWT signed by the trusted
  workload issuer's key (workload identity federation), or an ID-JAG (``typ``
  ``oauth-id-jag+jwt``) signed by the enterprise IdP's key whose ``client_id`` is the client
  authenticated with ``client_secret_basic`` (SEP-990); ``aud`` must be this issuer;
- an enterprise IdP at ``/idp/token``: RFC 8693 token exchange of an ID token it issued for
  an ID-JAG naming the requested audience and resource;
- DPoP (RFC 9449): the metadata advertises ES256; a token request with a valid proof gets a
  ``DPoP`` token bound to the proof's key (``cnf.jkt`` kept here); the MCP endpoint accepts
  such a token only as ``Authorization: DPoP`` with a fresh proof (``htm``, ``htu``, ``ath``,
  new ``jti``, the bound key), and with ``require_nonce`` both servers demand a nonce first.
  With ``rotate_rs_nonce`` the MCP endpoint hands out a new nonce in the ``DPoP-Nonce`` header
  of every request it accepts (RFC 9449 section 9) and takes the newest two.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

import jwt
from mcp.server.auth.provider import AccessToken
from starlette.responses import JSONResponse

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
AS_NONCE, RS_NONCE = "as-nonce-1", "rs-nonce-1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: dict[str, Any]) -> str:
    members = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    return b64url(hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest())


@dataclass
class Trust:
    """Whom the authorization server trusts, and who the enterprise IdP's clients are."""

    workload_issuer: str = "https://workloads.example.com"
    workload_public_key: str | None = None  # PEM
    idp_issuer: str = "https://idp.example.com"
    idp_private_key: Any = None  # the IdP signs ID tokens and ID-JAGs with it
    idp_client_id: str = "mcp-client-at-idp"
    #: The MCP client's credentials at this authorization server (client_secret_basic).
    clients: dict[str, str] = field(default_factory=dict)
    require_nonce: bool = False
    rotate_rs_nonce: bool = False
    rs_nonces: tuple[str, ...] = (RS_NONCE,)  # the newest first
    rs_nonce_challenges: int = 0  # use_dpop_nonce answers of the MCP endpoint
    dpop_bindings: dict[str, str] = field(default_factory=dict)  # access token -> jkt
    jtis: set[str] = field(default_factory=set)
    grants: list[str] = field(default_factory=list)

    def id_token(self, subject: str = "alice@example.com") -> str:
        """What the user got from signing in to the IdP (OpenID Connect)."""
        now = int(time.time())
        claims = {
            "iss": self.idp_issuer,
            "sub": subject,
            "aud": self.idp_client_id,
            "iat": now,
            "exp": now + 600,
        }
        return jwt.encode(claims, self.idp_private_key, algorithm="ES256")


class Extensions:
    """ASGI middleware in front of the fastmcp app (see the module docstring)."""

    def __init__(self, app: Any, server: Any, trust: Trust) -> None:
        self.app, self.server, self.trust = app, server, trust

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == "/.well-known/oauth-authorization-server":
            return await self.metadata(scope, receive, send)
        if method == "POST" and path == "/idp/token":
            form = await _form(receive)
            return await self.token_exchange(form)(scope, receive, send)
        if method == "POST" and path == "/token":
            body = await _body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("grant_type") == JWT_BEARER:
                return await self.jwt_bearer(form, headers)(scope, receive, send)
            if "dpop" in headers:
                return await self.dpop_token(scope, body, headers, send)
            return await self.app(scope, _replay(body), send)
        if path.startswith("/mcp") and headers.get("authorization", "").startswith("DPoP "):
            problem = self.check_resource_proof(method, headers)
            if problem is not None:
                return await problem(scope, receive, send)
            if self.trust.rotate_rs_nonce:
                send = self.with_new_nonce(send)
            token = headers["authorization"][5:]
            scope = dict(
                scope,
                headers=[
                    (k, v)
                    for k, v in scope["headers"]
                    if k.lower() not in (b"authorization", b"dpop")
                ]
                + [(b"authorization", f"Bearer {token}".encode())],
            )
        elif headers.get("authorization", "")[7:] in self.trust.dpop_bindings:
            return await _error(
                401,
                "invalid_token",
                "a DPoP-bound token sent as Bearer",
                'DPoP error="invalid_token"',
            )(scope, receive, send)
        return await self.app(scope, receive, send)

    # -- the authorization server -----------------------------------------------------------

    @property
    def issuer(self) -> str:
        return str(self.server.provider.base_url)

    async def metadata(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        answer: dict[str, Any] = {}

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                answer["body"] = answer.get("body", b"") + message.get("body", b"")

        await self.app(scope, receive, capture)
        document = json.loads(answer["body"])
        document["grant_types_supported"] = [*document.get("grant_types_supported", []), JWT_BEARER]
        document["dpop_signing_alg_values_supported"] = ["ES256"]
        await JSONResponse(document)(scope, receive, send)

    def issue(
        self, client_id: str, scopes: list[str], token_type: str = "Bearer", jkt: str | None = None
    ) -> JSONResponse:
        token = secrets.token_hex(32)
        self.server.provider.access_tokens[token] = AccessToken(
            token=token, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + 3600
        )
        if jkt is not None:
            self.trust.dpop_bindings[token] = jkt
        return JSONResponse(
            {
                "access_token": token,
                "token_type": token_type,
                "expires_in": 3600,
                "scope": " ".join(scopes),
            },
            headers={"Cache-Control": "no-store"},
        )

    def jwt_bearer(self, form: dict[str, str], headers: dict[str, str]) -> Any:
        assertion = form.get("assertion", "")
        audiences = [self.issuer, self.issuer.rstrip("/")]
        try:
            if jwt.get_unverified_header(assertion).get("typ") == "oauth-id-jag+jwt":
                client_id = _basic_client(headers, self.trust.clients)
                if client_id is None:
                    return _error(401, "invalid_client", "client_secret_basic required")
                claims = jwt.decode(
                    assertion,
                    self.trust.idp_private_key.public_key(),
                    algorithms=["ES256"],
                    audience=audiences,
                    issuer=self.trust.idp_issuer,
                )
                if claims.get("client_id") != client_id:
                    return _error(400, "invalid_grant", "the ID-JAG is for another client")
                self.trust.grants.append("id-jag")
            else:
                claims = jwt.decode(
                    assertion,
                    self.trust.workload_public_key,
                    algorithms=["ES256"],
                    audience=audiences,
                    issuer=self.trust.workload_issuer,
                )
                client_id = claims["sub"]
                self.trust.grants.append("workload")
        except jwt.InvalidTokenError as exc:
            return _error(400, "invalid_grant", str(exc))
        return self.issue(client_id, form.get("scope", "").split())

    async def dpop_token(
        self, scope: dict[str, Any], body: bytes, headers: dict[str, str], send: Any
    ) -> None:
        jkt, problem = self.check_proof(
            headers.get("dpop", ""), "POST", self.issuer.rstrip("/") + "/token", None, (AS_NONCE,)
        )
        if problem is not None:
            return await problem(scope, _replay(body), send)
        answer: dict[str, Any] = {"body": b""}

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["body"] += message.get("body", b"")

        await self.app(scope, _replay(body), capture)
        document = json.loads(answer["body"])
        if answer["status"] == 200:
            document["token_type"] = "DPoP"
            self.trust.dpop_bindings[document["access_token"]] = jkt
        await JSONResponse(
            document, status_code=answer["status"], headers={"Cache-Control": "no-store"}
        )(scope, _replay(b""), send)

    # -- the enterprise IdP ------------------------------------------------------------------

    def token_exchange(self, form: dict[str, str]) -> Any:
        if (
            form.get("grant_type") != TOKEN_EXCHANGE
            or form.get("requested_token_type") != ID_JAG
            or form.get("subject_token_type") != ID_TOKEN
        ):
            return _error(400, "invalid_request", "expected a token exchange for an ID-JAG")
        if not form.get("audience") or not form.get("resource"):
            return _error(400, "invalid_request", "audience and resource are required")
        try:
            identity = jwt.decode(
                form.get("subject_token", ""),
                self.trust.idp_private_key.public_key(),
                algorithms=["ES256"],
                audience=self.trust.idp_client_id,
                issuer=self.trust.idp_issuer,
            )
        except jwt.InvalidTokenError as exc:
            return _error(400, "invalid_grant", str(exc))
        now = int(time.time())
        (client_id,) = self.trust.clients  # the MCP client this enterprise provisioned
        grant = jwt.encode(
            {
                "iss": self.trust.idp_issuer,
                "sub": identity["sub"],
                "aud": form["audience"],
                "resource": form["resource"],
                "client_id": client_id,
                "iat": now,
                "exp": now + 300,
                "jti": secrets.token_hex(8),
            },
            self.trust.idp_private_key,
            algorithm="ES256",
            headers={"typ": "oauth-id-jag+jwt"},
        )
        return JSONResponse(
            {
                "access_token": grant,
                "issued_token_type": ID_JAG,
                "token_type": "N_A",
                "expires_in": 300,
            }
        )

    # -- DPoP proofs ---------------------------------------------------------------------------

    def check_proof(
        self, proof: str, method: str, url: str, token: str | None, nonces: tuple[str, ...]
    ) -> tuple[str, Any]:
        """(the proof key's thumbprint, None) or ("", the error response)."""
        try:
            header = jwt.get_unverified_header(proof)
            if header.get("typ") != "dpop+jwt" or "d" in header.get("jwk", {"d": 1}):
                raise jwt.InvalidTokenError("not a DPoP proof with a public jwk")
            key = jwt.PyJWK(header["jwk"], algorithm="ES256").key
            claims = jwt.decode(proof, key, algorithms=["ES256"])
        except (jwt.InvalidTokenError, KeyError, ValueError) as exc:
            return "", _error(400 if token is None else 401, "invalid_dpop_proof", str(exc))
        fresh = claims.get("jti") not in self.trust.jtis and abs(claims["iat"] - time.time()) < 60
        self.trust.jtis.add(claims.get("jti"))
        if not fresh or claims.get("htm") != method or claims.get("htu") != url:
            return "", _error(
                400 if token is None else 401, "invalid_dpop_proof", "htm, htu, iat or jti is wrong"
            )
        if token is not None and claims.get("ath") != b64url(
            hashlib.sha256(token.encode()).digest()
        ):
            return "", _error(401, "invalid_dpop_proof", "ath does not match")
        if self.trust.require_nonce and claims.get("nonce") not in nonces:
            status, challenge = (
                (400, None) if token is None else (401, 'DPoP error="use_dpop_nonce"')
            )
            if token is not None:
                self.trust.rs_nonce_challenges += 1
            return "", _error(
                status,
                "use_dpop_nonce",
                "a nonce is required",
                challenge,
                {"DPoP-Nonce": nonces[0]},
            )
        return thumbprint(header["jwk"]), None

    def with_new_nonce(self, send: Any) -> Any:
        """``send`` adding a new nonce to the response (the previous one stays accepted)."""
        nonce = secrets.token_hex(8)
        self.trust.rs_nonces = (nonce, self.trust.rs_nonces[0])

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"dpop-nonce", nonce.encode())]
                message = dict(message, headers=headers)
            await send(message)

        return sending

    def check_resource_proof(self, method: str, headers: dict[str, str]) -> Any:
        token = headers["authorization"][5:]
        url = self.issuer.rstrip("/") + "/mcp"
        jkt, problem = self.check_proof(
            headers.get("dpop", ""), method, url, token, self.trust.rs_nonces
        )
        if problem is None and self.trust.dpop_bindings.get(token) != jkt:
            problem = _error(
                401,
                "invalid_token",
                "the proof's key is not the token's",
                'DPoP error="invalid_token"',
            )
        return problem


def _basic_client(headers: dict[str, str], clients: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    if not value.startswith("Basic "):
        return None
    client_id, _, secret = base64.b64decode(value[6:]).decode().partition(":")
    client_id, secret = unquote(client_id), unquote(secret)
    return client_id if secrets.compare_digest(clients.get(client_id, "\0"), secret) else None


def _error(
    status: int,
    error: str,
    description: str,
    challenge: str | None = None,
    extra: dict[str, str] | None = None,
) -> JSONResponse:
    headers = dict(extra or {})
    if challenge:
        headers["WWW-Authenticate"] = challenge
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers=headers
    )


async def _body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


async def _form(receive: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs((await _body(receive)).decode()).items()}


def _replay(body: bytes) -> Any:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
