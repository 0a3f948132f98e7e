"""The OAuth 2.1 exchanges themselves: the authorization request, the redirect, token requests.

No state is kept here: :mod:`mcp_sync.oauth.provider` decides what to do and stores the
results. Token values never reach a repr, a log record or an exception message.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import requests

from . import pkce
from ._http import exchange, origin, post
from .discovery import ServerMetadata
from .dpop import DPoPKey
from .errors import (
    AuthorizationDenied,
    IssuerMismatchError,
    OAuthError,
    StateMismatchError,
    TokenError,
    token_error,
)
from .registration import ClientInfo

__all__ = [
    "CallbackResult",
    "PendingAuthorization",
    "TokenSet",
    "check_callback",
    "check_landed",
    "client_credentials_grant",
    "exchange_code",
    "jwt_bearer_grant",
    "refresh",
    "revoke",
    "start_authorization",
]

logger = logging.getLogger("mcp_sync.oauth")

#: RFC 7523's grant type: a JWT as the authorization grant.
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass(frozen=True)
class TokenSet:
    """Tokens from one token response, and where they may be used."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    #: Seconds since the epoch when the access token expires (None: not said).
    expires_at: float | None = None
    #: The granted scope (the token response's, else the requested one).
    scope: str | None = None
    #: The issuer of the authorization server that issued them.
    issuer: str | None = None
    #: The RFC 8707 resource they were requested for.
    resource: str | None = None
    #: Seconds since the epoch when they were issued (None: not known).
    issued_at: float | None = None

    def expires_within(self, seconds: float) -> bool:
        return self.expires_at is not None and self.expires_at - time.time() <= seconds

    def refresh_due(self, margin: float) -> bool:
        """True within ``margin`` seconds of expiry, the margin capped at a quarter of the
        token's lifetime: a 30 s token is not refreshed on every call under a 60 s margin."""
        if self.expires_at is not None and self.issued_at is not None:
            margin = min(margin, (self.expires_at - self.issued_at) / 4)
        return self.expires_within(margin)

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"accessToken": self.access_token, "tokenType": self.token_type}
        for key, item in (
            ("refreshToken", self.refresh_token),
            ("expiresAt", self.expires_at),
            ("scope", self.scope),
            ("issuer", self.issuer),
            ("resource", self.resource),
            ("issuedAt", self.issued_at),
        ):
            if item is not None:
                value[key] = item
        return value

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TokenSet:
        return cls(
            access_token=str(value["accessToken"]),
            token_type=str(value.get("tokenType") or "Bearer"),
            refresh_token=value.get("refreshToken"),
            expires_at=value.get("expiresAt"),
            scope=value.get("scope"),
            issuer=value.get("issuer"),
            resource=value.get("resource"),
            issued_at=value.get("issuedAt"),
        )


@dataclass(frozen=True)
class PendingAuthorization:
    """An authorization request sent to a browser, waiting for its redirect."""

    state: str
    code_verifier: str = field(repr=False)
    #: The issuer recorded for the RFC 9207 ``iss`` check.
    issuer: str
    #: True when the authorization server promised ``iss`` in its responses.
    iss_required: bool
    redirect_uri: str
    client_id: str
    scope: str | None = None
    resource: str | None = None
    authorization_url: str = field(default="", repr=False)
    created_at: float = field(default_factory=time.time)
    #: True for a step-up (insufficient_scope) authorization.
    step_up: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "codeVerifier": self.code_verifier,
            "issuer": self.issuer,
            "issRequired": self.iss_required,
            "redirectUri": self.redirect_uri,
            "clientId": self.client_id,
            "scope": self.scope,
            "resource": self.resource,
            "authorizationUrl": self.authorization_url,
            "createdAt": self.created_at,
            "stepUp": self.step_up,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> PendingAuthorization:
        return cls(
            state=str(value["state"]),
            code_verifier=str(value["codeVerifier"]),
            issuer=str(value["issuer"]),
            iss_required=bool(value.get("issRequired")),
            redirect_uri=str(value["redirectUri"]),
            client_id=str(value["clientId"]),
            scope=value.get("scope"),
            resource=value.get("resource"),
            authorization_url=str(value.get("authorizationUrl") or ""),
            created_at=float(value.get("createdAt") or 0.0),
            step_up=bool(value.get("stepUp")),
        )


@dataclass(frozen=True)
class CallbackResult:
    """The parameters of the redirect back from the authorization server."""

    code: str | None = field(default=None, repr=False)
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None

    @classmethod
    def from_url(cls, url: str) -> CallbackResult:
        """Parse a redirect URL (or just its query string)."""
        query = urlsplit(url).query if "?" in url or "://" in url else url
        params = {key: values[0] for key, values in parse_qs(query, keep_blank_values=True).items()}
        return cls(
            code=params.get("code"),
            state=params.get("state"),
            iss=params.get("iss"),
            error=params.get("error"),
            error_description=params.get("error_description"),
        )


def start_authorization(
    server: ServerMetadata,
    client: ClientInfo,
    redirect_uri: str,
    *,
    scope: str | None,
    resource: str | None,
    step_up: bool = False,
) -> PendingAuthorization:
    """A new authorization request: PKCE S256, ``state``, ``resource``, ``scope``."""
    verifier = pkce.new_verifier()
    state = pkce.new_state()
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge(verifier),
        "code_challenge_method": "S256",
        "state": state,
    }
    if scope:
        params["scope"] = scope
        if "offline_access" in scope.split():
            params["prompt"] = "consent"  # OpenID Connect issues refresh tokens only then
    if resource:
        params["resource"] = resource
    parts = urlsplit(server.authorization_endpoint)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    return PendingAuthorization(
        state=state,
        code_verifier=verifier,
        issuer=server.issuer,
        iss_required=server.iss_parameter_supported,
        redirect_uri=redirect_uri,
        client_id=client.client_id,
        scope=scope,
        resource=resource,
        authorization_url=url,
        step_up=step_up,
    )


def check_callback(pending: PendingAuthorization, result: CallbackResult) -> str:
    """The authorization code, once the redirect passed the RFC 9207 check.

    ``iss`` present: it must be exactly the recorded issuer (no normalization). Absent: fine
    unless the authorization server promised it. This runs before an ``error`` is looked at,
    so an error from a mix-up attacker is never surfaced as the real server's.
    """
    if result.iss is not None:
        if result.iss != pending.issuer:
            raise IssuerMismatchError(
                f"the authorization response came from issuer {result.iss!r}, "
                f"not {pending.issuer!r}; the code was not used"
            )
    elif pending.iss_required:
        raise IssuerMismatchError(
            f"the authorization server {pending.issuer} promised an iss parameter and the "
            "authorization response has none; the code was not used"
        )
    if result.error:
        raise AuthorizationDenied(result.error, result.error_description)
    if not result.code:
        raise AuthorizationDenied("invalid_request", "the redirect carried no code")
    return result.code


def check_landed(landed_url: str | None, redirect_uri: str) -> None:
    """A pasted redirect URL must be the redirect URI's origin and path (a query alone passes):
    else :class:`StateMismatchError`, and the code is not used."""
    if landed_url is None or "://" not in landed_url:
        return
    same = origin(landed_url) == origin(redirect_uri) and (
        urlsplit(landed_url).path.rstrip("/") == urlsplit(redirect_uri).path.rstrip("/")
    )
    if not same:
        raise StateMismatchError(
            f"the pasted URL is not this client's redirect URI ({redirect_uri}); "
            "the code was not used"
        )


def client_authentication(
    client: ClientInfo,
    server: ServerMetadata,
    data: dict[str, str],
    private_key: tuple[str | bytes, str] | None,
) -> dict[str, str]:
    """Add client authentication to a token request; returns the extra headers."""
    method = client.token_endpoint_auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        # RFC 6749 2.3.1: id and secret are form-encoded before base64.
        # client_id also goes in the body: RFC 6749 allows it, and some authorization servers
        # (the official Python SDK's) look the client up there before reading the header.
        data["client_id"] = client.client_id
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    if method == "client_secret_post" and client.client_secret is not None:
        data["client_id"] = client.client_id
        data["client_secret"] = client.client_secret
        return {}
    if method == "private_key_jwt":
        if private_key is None:
            raise TokenError("invalid_client", "private_key_jwt needs a private key")
        from ._jwt import client_assertion

        pem, algorithm = private_key
        data["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        data["client_assertion"] = client_assertion(client.client_id, server.issuer, pem, algorithm)
        return {}
    if client.client_id:
        data["client_id"] = client.client_id
    return {}


def token_request(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    data: dict[str, str],
    *,
    private_key: tuple[str | bytes, str] | None = None,
    requested_scope: str | None = None,
    resource: str | None = None,
    dpop: DPoPKey | None = None,
) -> TokenSet:
    """POST to the token endpoint; the tokens, or a :class:`TokenError`.

    With ``dpop`` every attempt carries a fresh proof, a ``use_dpop_nonce`` answer is retried
    once with the server's nonce, and a ``DPoP`` token type is accepted.
    """
    endpoint = server.token_endpoint
    for attempt in (1, 2):
        form = dict(data)
        headers = client_authentication(client, server, form, private_key)
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        answer = exchange(session, "POST", endpoint, "token endpoint", data=form, headers=headers)
        status, body = answer.status, answer.json
        if dpop is not None:
            dpop.remember_nonce(endpoint, answer.headers.get("DPoP-Nonce"))
            if (
                attempt == 1
                and status in (400, 401)
                and body is not None
                and body.get("error") == "use_dpop_nonce"
                and answer.headers.get("DPoP-Nonce")
            ):
                continue
        break
    if status != 200 or body is None or not isinstance(body.get("access_token"), str):
        error = body.get("error") if body else None
        description = body.get("error_description") if body else None
        raise token_error(
            error if isinstance(error, str) else "invalid_response",
            description if isinstance(description, str) else None,
            status,
        )
    token_type = str(body.get("token_type") or "Bearer")
    if token_type.lower() == "dpop" and dpop is not None:
        token_type = "DPoP"
    elif token_type.lower() == "bearer":
        token_type = "Bearer"
    else:
        raise TokenError(
            "unsupported_token_type", f"token_type {token_type!r} is not Bearer", status
        )
    expires_in = body.get("expires_in")
    refresh_token = body.get("refresh_token")
    scope = body.get("scope")
    now = time.time()
    return TokenSet(
        access_token=body["access_token"],
        token_type=token_type,
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        expires_at=now + float(expires_in)
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool)
        else None,
        scope=scope if isinstance(scope, str) else requested_scope,
        issuer=server.issuer,
        resource=resource,
        issued_at=now,
    )


def exchange_code(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    pending: PendingAuthorization,
    code: str,
    *,
    dpop: DPoPKey | None = None,
) -> TokenSet:
    """Exchange an authorization code (with its PKCE verifier) for tokens."""
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": pending.redirect_uri,
        "code_verifier": pending.code_verifier,
    }
    if pending.resource:
        data["resource"] = pending.resource
    return token_request(
        session,
        server,
        client,
        data,
        requested_scope=pending.scope,
        resource=pending.resource,
        dpop=dpop,
    )


def refresh(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    tokens: TokenSet,
    *,
    dpop: DPoPKey | None = None,
) -> TokenSet:
    """Refresh ``tokens``; a response without a new refresh token keeps the old one."""
    if tokens.refresh_token is None:
        raise TokenError("invalid_grant", "no refresh token")
    data = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    if tokens.resource:
        data["resource"] = tokens.resource
    fresh = token_request(
        session,
        server,
        client,
        data,
        requested_scope=tokens.scope,
        resource=tokens.resource,
        dpop=dpop,
    )
    if fresh.refresh_token is None:
        fresh = replace(fresh, refresh_token=tokens.refresh_token)
    return fresh


def client_credentials_grant(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    *,
    scope: str | None,
    resource: str | None,
    private_key: tuple[str | bytes, str] | None = None,
    dpop: DPoPKey | None = None,
) -> TokenSet:
    """The client credentials grant (machine to machine)."""
    data = {"grant_type": "client_credentials"}
    return _machine_grant(session, server, client, data, scope, resource, private_key, dpop)


def jwt_bearer_grant(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    assertion: str,
    *,
    scope: str | None,
    resource: str | None,
    private_key: tuple[str | bytes, str] | None = None,
    dpop: DPoPKey | None = None,
) -> TokenSet:
    """The JWT bearer grant (RFC 7523 section 2.1): ``assertion`` is the authorization grant."""
    data = {"grant_type": JWT_BEARER_GRANT, "assertion": assertion}
    return _machine_grant(session, server, client, data, scope, resource, private_key, dpop)


def _machine_grant(
    session: requests.Session,
    server: ServerMetadata,
    client: ClientInfo,
    data: dict[str, str],
    scope: str | None,
    resource: str | None,
    private_key: tuple[str | bytes, str] | None,
    dpop: DPoPKey | None,
) -> TokenSet:
    """A grant without a user: ``data`` with ``scope`` and ``resource`` added when given."""
    if scope:
        data["scope"] = scope
    if resource:
        data["resource"] = resource
    return token_request(
        session,
        server,
        client,
        data,
        private_key=private_key,
        requested_scope=scope,
        resource=resource,
        dpop=dpop,
    )


def revoke(
    session: requests.Session, server: ServerMetadata, client: ClientInfo, tokens: TokenSet
) -> None:
    """Revoke the refresh and access tokens at ``server`` (RFC 7009), when it has a revocation
    endpoint. A failure (the endpoint refused by the rules for server-named URLs, unreachable,
    too slow) is logged, not raised, and ends the revocation: the caller forgets the tokens
    either way."""
    if not server.revocation_endpoint:
        return
    client = _revocation_client(client, server)
    for value, hint in (
        (tokens.refresh_token, "refresh_token"),
        (tokens.access_token, "access_token"),
    ):
        if not value:
            continue
        data = {"token": value, "token_type_hint": hint}
        headers = client_authentication(client, server, data, None)
        try:
            post(
                session,
                server.revocation_endpoint,
                "revocation endpoint",
                data=data,
                headers=headers,
            )
        except OAuthError as exc:
            logger.warning(
                "revocation at %s failed (%s: %s); the tokens are forgotten here all the same",
                server.revocation_endpoint,
                type(exc).__name__,
                exc,
            )
            return


def _revocation_client(client: ClientInfo, server: ServerMetadata) -> ClientInfo:
    """The client as it authenticates at the revocation endpoint: as at the token endpoint,
    unless ``revocation_endpoint_auth_methods_supported`` rules that method out."""
    methods = server.raw.get("revocation_endpoint_auth_methods_supported")
    if client.client_secret is None or not isinstance(methods, list) or not methods:
        return client
    if client.token_endpoint_auth_method in methods:
        return client
    for method in ("client_secret_basic", "client_secret_post"):
        if method in methods:
            return replace(client, token_endpoint_auth_method=method)
    return client
