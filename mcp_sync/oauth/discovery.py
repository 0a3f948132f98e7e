"""Metadata discovery: protected resource (RFC 9728) and authorization server (RFC 8414, OIDC).

The order is the spec's (2025-11-25 and 2026-07-28):

1. Protected resource metadata: the ``resource_metadata`` URL of the ``WWW-Authenticate``
   challenge, else ``/.well-known/oauth-protected-resource/<mcp path>``, else
   ``/.well-known/oauth-protected-resource`` at the server's origin. Its ``resource`` must be
   the server's URL or a parent of it on the same origin; that ``resource`` is then sent,
   exactly as published, as the RFC 8707 ``resource`` parameter.
2. Authorization server metadata for the first of its ``authorization_servers``: for an issuer
   with a path ``/t1``, ``/.well-known/oauth-authorization-server/t1``,
   ``/.well-known/openid-configuration/t1``, ``/t1/.well-known/openid-configuration``; without
   a path, ``/.well-known/oauth-authorization-server`` then ``/.well-known/openid-configuration``.
   A document whose ``issuer`` is not exactly that issuer is discarded.
3. No protected resource metadata at all is a 2025-03-26 server: the authorization server is
   the MCP URL without its path; its RFC 8414 metadata, else ``/authorize``, ``/token`` and
   ``/register`` there.

Every metadata URL must be https, or http on a loopback host.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

from ._http import get_json, origin, require_secure
from .errors import (
    DiscoveryError,
    EndpointUnreachable,
    ExchangeTimeout,
    IssuerMismatchError,
    PkceNotSupportedError,
    ResourceMismatchError,
)

__all__ = [
    "Discovery",
    "ResourceMetadata",
    "ServerMetadata",
    "canonical_resource",
    "check_resource",
    "discover",
    "discover_resource",
    "discover_server",
    "legacy_server",
    "resource_metadata_urls",
    "server_metadata_at",
    "server_metadata_urls",
]

logger = logging.getLogger("mcp_sync.oauth")

#: Sent on discovery requests (the 2025-03-26 spec asks for it on the metadata request).
PROTOCOL_HEADER = {"MCP-Protocol-Version": "2025-11-25"}


def _strings(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(item for item in value if isinstance(item, str))


@dataclass(frozen=True)
class ResourceMetadata:
    """Protected resource metadata (RFC 9728) of an MCP server."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    #: Where the document was fetched.
    url: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any], url: str = "") -> ResourceMetadata:
        resource = value.get("resource")
        servers = _strings(value.get("authorization_servers")) or ()
        if not isinstance(resource, str) or not resource:
            raise DiscoveryError(f"protected resource metadata at {url} has no resource")
        return cls(resource, servers, _strings(value.get("scopes_supported")), url, dict(value))


@dataclass(frozen=True)
class ServerMetadata:
    """Authorization server metadata (RFC 8414 / OpenID Connect discovery)."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    revocation_endpoint: str | None = None
    scopes_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    response_types_supported: tuple[str, ...] | None = None
    client_id_metadata_document_supported: bool = False
    #: RFC 9207 ``authorization_response_iss_parameter_supported``.
    iss_parameter_supported: bool = False
    #: True when the endpoints are the 2025-03-26 defaults (no metadata document was found).
    fallback: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Mapping[str, Any], url: str = "") -> ServerMetadata:
        def text(name: str) -> str | None:
            item = value.get(name)
            return item if isinstance(item, str) and item else None

        issuer = text("issuer")
        authorization = text("authorization_endpoint")
        token = text("token_endpoint")
        if issuer is None or token is None:
            raise DiscoveryError(
                f"authorization server metadata at {url} lacks issuer/token_endpoint"
            )
        return cls(
            issuer=issuer,
            authorization_endpoint=authorization or "",
            token_endpoint=token,
            registration_endpoint=text("registration_endpoint"),
            revocation_endpoint=text("revocation_endpoint"),
            scopes_supported=_strings(value.get("scopes_supported")),
            code_challenge_methods_supported=_strings(
                value.get("code_challenge_methods_supported")
            ),
            token_endpoint_auth_methods_supported=_strings(
                value.get("token_endpoint_auth_methods_supported")
            ),
            grant_types_supported=_strings(value.get("grant_types_supported")),
            response_types_supported=_strings(value.get("response_types_supported")),
            client_id_metadata_document_supported=value.get("client_id_metadata_document_supported")
            is True,
            iss_parameter_supported=value.get("authorization_response_iss_parameter_supported")
            is True,
            raw=dict(value),
        )

    def to_json(self) -> dict[str, Any]:
        """The metadata as stored (the document as fetched, or the fallback endpoints)."""
        if self.raw:
            return dict(self.raw)
        value: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "code_challenge_methods_supported": ["S256"],
        }
        if self.registration_endpoint:
            value["registration_endpoint"] = self.registration_endpoint
        return value

    def supports_pkce(self) -> bool:
        return self.fallback or "S256" in (self.code_challenge_methods_supported or ())


@dataclass(frozen=True)
class Discovery:
    """What a client needs to authorize against one MCP server."""

    #: The MCP server URL.
    server_url: str
    #: The authorization server.
    server: ServerMetadata
    #: The protected resource metadata (None for a 2025-03-26 server).
    resource_metadata: ResourceMetadata | None = None

    @property
    def resource(self) -> str | None:
        """The RFC 8707 ``resource`` to send: the metadata's, exactly as published."""
        return self.resource_metadata.resource if self.resource_metadata else None


def canonical_resource(url: str) -> str:
    """The canonical MCP server URI: lower-case scheme and host, no default port, no fragment,
    no trailing ``/`` (``https://H:443/mcp/`` and ``https://h/mcp`` are one server)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    default = {"http": ":80", "https": ":443"}.get(scheme)
    if default and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def check_resource(resource: str, server_url: str) -> None:
    """Raise :class:`ResourceMismatchError` unless ``resource`` is ``server_url`` or a parent.

    Same origin, and the resource's path is the server's path or a prefix of it that ends at a
    ``/`` (``https://h/`` and ``https://h/mcp`` both protect ``https://h/mcp``).
    """
    if origin(resource) != origin(server_url) or urlsplit(resource).fragment:
        raise ResourceMismatchError(
            f"the protected resource metadata is for {resource}, not for {server_url}"
        )
    have = urlsplit(resource).path.rstrip("/")
    want = urlsplit(server_url).path.rstrip("/")
    if have and want != have and not want.startswith(have + "/"):
        raise ResourceMismatchError(
            f"the protected resource metadata is for {resource}, not for {server_url}"
        )


def resource_metadata_urls(server_url: str, hint: str | None = None) -> list[str]:
    """Where to look for protected resource metadata, in order."""
    parts = urlsplit(server_url)
    root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    urls = [hint] if hint and _is_web_url(hint) else []
    if hint and not urls:
        logger.debug("ignoring resource_metadata %r: not an http(s) URL", hint)
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{root}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{root}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def _is_web_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an issuer's authorization server metadata, in order."""
    parts = urlsplit(issuer)
    root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{root}/.well-known/oauth-authorization-server",
            f"{root}/.well-known/openid-configuration",
        ]
    return [
        f"{root}/.well-known/oauth-authorization-server{path}",
        f"{root}/.well-known/openid-configuration{path}",
        f"{root}{path}/.well-known/openid-configuration",
    ]


def discover_resource(
    session: requests.Session, server_url: str, hint: str | None = None
) -> ResourceMetadata | None:
    """The server's protected resource metadata, checked against ``server_url``; None if absent.

    The ``hint`` (a challenge's ``resource_metadata``) is tried first; if it fails the
    well-known locations are tried.
    """
    for url in resource_metadata_urls(server_url, hint):
        try:
            status, body = get_json(
                session, url, "protected resource metadata", headers=PROTOCOL_HEADER
            )
        except (EndpointUnreachable, ExchangeTimeout) as exc:
            logger.debug("protected resource metadata at %s: %s", url, exc)
            continue
        if status != 200 or body is None:
            logger.debug("protected resource metadata at %s: HTTP %s", url, status)
            continue
        metadata = ResourceMetadata.from_json(body, url)
        check_resource(metadata.resource, server_url)
        return metadata
    return None


def discover_server(session: requests.Session, issuer: str) -> ServerMetadata:
    """The metadata of ``issuer``: the first document whose ``issuer`` is exactly ``issuer``."""
    require_secure(issuer, "authorization server")
    mismatched: str | None = None
    unreachable: EndpointUnreachable | None = None
    answered = False
    for url in server_metadata_urls(issuer):
        try:
            status, body = get_json(
                session, url, "authorization server metadata", headers=PROTOCOL_HEADER
            )
        except EndpointUnreachable as exc:
            logger.debug("authorization server metadata at %s: %s", url, exc)
            unreachable = unreachable or exc
            continue
        except ExchangeTimeout as exc:
            logger.debug("authorization server metadata at %s: %s", url, exc)
            continue
        answered = True
        if status != 200 or body is None:
            continue
        metadata = ServerMetadata.from_json(body, url)
        if metadata.issuer != issuer:
            logger.warning(
                "discarding authorization server metadata at %s: issuer %r is not %r",
                url,
                metadata.issuer,
                issuer,
            )
            mismatched = metadata.issuer
            continue
        return metadata
    if unreachable is not None and not answered:
        raise unreachable  # nothing answered: say why, naming the URL
    if mismatched is not None:
        raise IssuerMismatchError(
            f"the authorization server metadata for {issuer} names issuer {mismatched!r}"
        )
    raise DiscoveryError(f"no authorization server metadata found for {issuer}")


def legacy_server(session: requests.Session, server_url: str) -> ServerMetadata:
    """A 2025-03-26 server's authorization server: metadata at its origin, else default paths."""
    parts = urlsplit(server_url)
    base = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    try:
        return discover_server(session, base)
    except IssuerMismatchError:
        raise
    except DiscoveryError:
        pass
    logger.debug("no authorization server metadata at %s: using the default endpoints", base)
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=f"{base}/authorize",
        token_endpoint=f"{base}/token",
        registration_endpoint=f"{base}/register",
        code_challenge_methods_supported=("S256",),
        fallback=True,
    )


def server_metadata_at(session: requests.Session, url: str) -> ServerMetadata:
    """The authorization server metadata document at exactly ``url`` (configured by the user,
    for deployments without protected resource metadata); its ``issuer`` is taken as is."""
    try:
        status, body = get_json(
            session, url, "authorization server metadata", headers=PROTOCOL_HEADER
        )
    except ExchangeTimeout as exc:
        raise DiscoveryError(f"authorization server metadata at {url}: {exc}") from exc
    if status != 200 or body is None:
        raise DiscoveryError(f"no authorization server metadata at {url} (HTTP {status})")
    return ServerMetadata.from_json(body, url)


def discover(
    session: requests.Session,
    server_url: str,
    resource_metadata_url: str | None = None,
    *,
    server_metadata_url: str | None = None,
    authorization_code: bool = True,
) -> Discovery:
    """Everything needed to authorize against ``server_url``, in the spec's order.

    ``server_metadata_url``: a configured authorization server metadata document, used
    instead of the one the protected resource metadata names (which is still read, if
    there is one, for its ``resource``). With ``authorization_code`` (the default) the
    authorization server must support that flow: :class:`PkceNotSupportedError` when it does
    not advertise S256, :class:`DiscoveryError` when ``response_types_supported`` lacks
    ``code``. Also raises :class:`ResourceMismatchError` and :class:`IssuerMismatchError`.
    """
    resource = discover_resource(session, server_url, resource_metadata_url)
    if server_metadata_url is not None:
        server = server_metadata_at(session, server_metadata_url)
    elif resource is None:
        server = legacy_server(session, server_url)
    else:
        if not resource.authorization_servers:
            raise DiscoveryError(f"{resource.url} names no authorization server")
        server = discover_server(session, resource.authorization_servers[0])
    if authorization_code:
        _require_authorization_code(server)
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        url = getattr(server, name)
        if url:
            require_secure(url, name.replace("_", " "))
    return Discovery(server_url, server, resource)


def _require_authorization_code(server: ServerMetadata) -> None:
    if not server.supports_pkce():
        raise PkceNotSupportedError(
            f"the authorization server {server.issuer} does not advertise PKCE S256 "
            "(code_challenge_methods_supported); refusing to authorize"
        )
    types = server.response_types_supported
    if types is not None and "code" not in types:
        raise DiscoveryError(
            f"the authorization server {server.issuer} does not offer the authorization code "
            f"flow (response_types_supported: {', '.join(types) or 'none'})"
        )
