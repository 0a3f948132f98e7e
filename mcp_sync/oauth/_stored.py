"""Reading what an :class:`~mcp_sync.oauth.OAuthProvider` keeps in its state store: the
tokens, the authorization servers' metadata and the client registrations, each by issuer.

The state is one JSON object per provider key; a value that does not parse reads as absent
(the provider then discovers, registers or signs in again, as on a first run)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .discovery import ServerMetadata
from .flow import TokenSet
from .registration import ClientInfo

__all__ = ["stored_client", "stored_server", "stored_tokens"]


def stored_tokens(state: Mapping[str, Any]) -> TokenSet | None:
    """The stored tokens, if any parse."""
    value = state.get("tokens")
    try:
        return TokenSet.from_json(value) if isinstance(value, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def stored_server(state: Mapping[str, Any], issuer: str) -> ServerMetadata | None:
    """The stored metadata of the authorization server ``issuer``."""
    value = (state.get("authorizationServers") or {}).get(issuer)
    return ServerMetadata.from_json(value) if isinstance(value, dict) else None


def stored_client(state: Mapping[str, Any], issuer: str) -> ClientInfo | None:
    """The registration stored for ``issuer``, unless its secret has expired."""
    stored = (state.get("clients") or {}).get(issuer)
    client = ClientInfo.from_json(stored) if isinstance(stored, dict) else None
    expired = client is not None and 0 < (client.secret_expires_at or 0) < time.time()
    return None if expired else client
