"""Reading the provider's stored state (one JSON object per MCP server), and its scopes.

The object holds ``tokens``, ``clients`` (one registration per authorization server issuer),
``authorizationServers`` (their metadata), ``pending`` sign-ins, ``stepUp`` and ``dpopKey``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .discovery import Discovery, ServerMetadata
from .flow import TokenSet
from .registration import ClientInfo

__all__ = [
    "fresher_tokens",
    "initial_scope",
    "stored_client",
    "stored_server",
    "stored_tokens",
    "with_offline_access",
]


def stored_tokens(state: Mapping[str, Any]) -> TokenSet | None:
    value = state.get("tokens")
    try:
        return TokenSet.from_json(value) if isinstance(value, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def fresher_tokens(
    state: Mapping[str, Any], stale: str | None, scope: str | None
) -> TokenSet | None:
    """The stored tokens if they are not ``stale`` (the rejected ones) and cover ``scope``."""
    current = stored_tokens(state)
    if current is None or current.access_token == stale:
        return None
    if scope is not None and not set(scope.split()) <= set((current.scope or "").split()):
        return None
    return current


def stored_server(state: Mapping[str, Any], issuer: str) -> ServerMetadata | None:
    value = (state.get("authorizationServers") or {}).get(issuer)
    return ServerMetadata.from_json(value) if isinstance(value, dict) else None


def stored_client(state: Mapping[str, Any], issuer: str) -> ClientInfo | None:
    """The registration stored for ``issuer``, unless its secret has expired."""
    stored = (state.get("clients") or {}).get(issuer)
    client = ClientInfo.from_json(stored) if isinstance(stored, dict) else None
    expired = client is not None and 0 < (client.secret_expires_at or 0) < time.time()
    return None if expired else client


def initial_scope(
    configured: str | None, challenged: str | None, discovery: Discovery, offline: bool
) -> str | None:
    """The scope of a first sign-in: the configured one, else the challenged one, else what
    the resource supports; ``offline_access`` added when ``offline`` and the server has it."""
    if configured is not None:
        scopes = configured.split()
    elif challenged:
        scopes = challenged.split()
    elif discovery.resource_metadata and discovery.resource_metadata.scopes_supported:
        scopes = list(discovery.resource_metadata.scopes_supported)
    else:
        return None
    return " ".join(with_offline_access(scopes, discovery.server, offline)) or None


def with_offline_access(scopes: list[str], server: ServerMetadata, offline: bool) -> list[str]:
    if (
        offline
        and scopes
        and "offline_access" in (server.scopes_supported or ())
        and "offline_access" not in scopes
    ):
        return [*scopes, "offline_access"]
    return scopes
