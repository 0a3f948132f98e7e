"""Who the client is to an authorization server, in the spec's order of preference:

1. a pre-registered client (``client_id`` / ``client_secret`` given by the user, optionally
   tied to one issuer),
2. a Client ID Metadata Document (``client_id`` is an https URL serving the client's
   metadata), when the authorization server advertises
   ``client_id_metadata_document_supported``,
3. dynamic client registration (RFC 7591) at the ``registration_endpoint``, sending
   ``application_type`` (2026-07-28).

Registered clients are kept per authorization server issuer: a client registered with one
authorization server is never presented to another.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import requests

from ._http import is_loopback, post
from .discovery import ServerMetadata
from .errors import RegistrationError

__all__ = ["ClientInfo", "ClientMetadata", "choose_auth_method", "register", "select_client"]

logger = logging.getLogger("mcp_sync.oauth")

AuthMethod = Literal["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]
Source = Literal["pre-registered", "metadata-document", "dynamic"]


@dataclass
class ClientMetadata:
    """The client metadata sent in dynamic registration (RFC 7591 section 2).

    ``redirect_uris`` defaults to the provider's redirect URL. ``token_endpoint_auth_method``
    None lets the client pick from what the authorization server supports (``none`` first: a
    desktop or CLI client cannot keep a secret). ``application_type`` None means ``native``
    for loopback and custom-scheme redirects, ``web`` otherwise. ``extra`` is sent as is.
    """

    client_name: str = "mcp-sync"
    redirect_uris: Sequence[str] = ()
    grant_types: Sequence[str] = ("authorization_code", "refresh_token")
    response_types: Sequence[str] = ("code",)
    token_endpoint_auth_method: str | None = None
    application_type: str | None = None
    scope: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    contacts: Sequence[str] = ()
    software_id: str | None = None
    software_version: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self, redirect_url: str | None = None) -> dict[str, Any]:
        """The registration request body."""
        redirect_uris = list(self.redirect_uris) or ([redirect_url] if redirect_url else [])
        value: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": redirect_uris,
            "grant_types": list(self.grant_types),
            "response_types": list(self.response_types),
            "application_type": self.application_type or _application_type(redirect_uris),
        }
        for name in (
            "token_endpoint_auth_method",
            "scope",
            "client_uri",
            "logo_uri",
            "software_id",
            "software_version",
        ):
            item = getattr(self, name)
            if item:
                value[name] = item
        if self.contacts:
            value["contacts"] = list(self.contacts)
        value.update(self.extra)
        return value


def _application_type(redirect_uris: Sequence[str]) -> str:
    for uri in redirect_uris:
        parts = urlsplit(uri)
        if parts.scheme == "https" and not is_loopback(parts.hostname):
            return "web"
    return "native"


@dataclass
class ClientInfo:
    """A client identity at one authorization server."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    #: The authorization server issuer this identity belongs to (None: any, pre-registered).
    issuer: str | None = None
    source: Source = "pre-registered"
    #: RFC 7591 ``client_secret_expires_at`` (0 or None: never).
    secret_expires_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "clientId": self.client_id,
            "tokenEndpointAuthMethod": self.token_endpoint_auth_method,
            "issuer": self.issuer,
            "source": self.source,
        }
        if self.client_secret is not None:
            value["clientSecret"] = self.client_secret
        if self.secret_expires_at:
            value["clientSecretExpiresAt"] = self.secret_expires_at
        return value

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ClientInfo:
        return cls(
            client_id=str(value["clientId"]),
            client_secret=value.get("clientSecret") or None,
            token_endpoint_auth_method=str(value.get("tokenEndpointAuthMethod") or "none"),
            issuer=value.get("issuer"),
            source=value.get("source") or "dynamic",
            secret_expires_at=value.get("clientSecretExpiresAt"),
        )


def choose_auth_method(supported: Sequence[str] | None, has_secret: bool) -> str:
    """The token endpoint auth method for a client with (or without) a secret.

    RFC 8414: an absent ``token_endpoint_auth_methods_supported`` means client_secret_basic.
    """
    if not has_secret:
        return "none"
    if supported is None or "client_secret_basic" in supported:
        return "client_secret_basic"
    if "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def _requested_auth_method(supported: Sequence[str] | None) -> str:
    # A public client when allowed. Else client_secret_post first: some servers (the official
    # Python SDK's) accept only it at their revocation endpoint.
    if supported is None or "none" in supported:
        return "none"
    for method in ("client_secret_post", "client_secret_basic"):
        if method in supported:
            return method
    return supported[0] if supported else "none"


def register(
    session: requests.Session,
    server: ServerMetadata,
    metadata: ClientMetadata,
    redirect_url: str | None,
) -> ClientInfo:
    """Register with dynamic client registration (RFC 7591)."""
    if not server.registration_endpoint:
        raise RegistrationError(
            f"the authorization server {server.issuer} has no registration endpoint and no "
            "client_id was given: pass client_id (and client_secret) to OAuthProvider"
        )
    body = metadata.to_json(redirect_url)
    body.setdefault(
        "token_endpoint_auth_method",
        _requested_auth_method(server.token_endpoint_auth_methods_supported),
    )
    status, answer = post(session, server.registration_endpoint, "registration endpoint", json=body)
    if status not in (200, 201) or answer is None or not isinstance(answer.get("client_id"), str):
        error = (answer or {}).get("error", f"HTTP {status}")
        description = (answer or {}).get("error_description")
        text = f"client registration at {server.registration_endpoint} failed: {error}"
        if isinstance(description, str):
            text += f" ({description[:300]})"
        if error == "invalid_redirect_uri":
            text += "; the authorization server refused the redirect URL"
        raise RegistrationError(text)
    raw_secret = answer.get("client_secret")
    # an empty secret is no secret: never send Basic with one
    secret = raw_secret if isinstance(raw_secret, str) and raw_secret else None
    method = answer.get("token_endpoint_auth_method")
    if not isinstance(method, str) or (method != "none" and secret is None):
        method = choose_auth_method(
            server.token_endpoint_auth_methods_supported, secret is not None
        )
    expires = answer.get("client_secret_expires_at")
    logger.info("registered with %s as client %s", server.issuer, answer["client_id"])
    return ClientInfo(
        client_id=answer["client_id"],
        client_secret=secret,
        token_endpoint_auth_method=method,
        issuer=server.issuer,
        source="dynamic",
        secret_expires_at=float(expires) if isinstance(expires, (int, float)) and expires else None,
    )


def select_client(
    session: requests.Session,
    server: ServerMetadata,
    *,
    pre_registered: ClientInfo | None,
    stored: ClientInfo | None,
    metadata_url: str | None,
    metadata: ClientMetadata,
    redirect_url: str | None,
) -> ClientInfo:
    """The client identity to use with ``server``, registering one if needed."""
    if pre_registered is not None and pre_registered.issuer in (None, server.issuer):
        method = pre_registered.token_endpoint_auth_method
        if not method or method == "auto":
            method = choose_auth_method(
                server.token_endpoint_auth_methods_supported,
                pre_registered.client_secret is not None,
            )
        return ClientInfo(
            pre_registered.client_id,
            pre_registered.client_secret,
            method,
            server.issuer,
            "pre-registered",
        )
    if stored is not None and stored.issuer == server.issuer:
        return stored
    if metadata_url and server.client_id_metadata_document_supported:
        return ClientInfo(metadata_url, None, "none", server.issuer, "metadata-document")
    return register(session, server, metadata, redirect_url)
