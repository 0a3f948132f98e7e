"""HTTP helpers the OAuth modules share: endpoint checks, JSON GETs and form POSTs.

Redirects are never followed: a redirect could move a credential to another origin or
downgrade it to plain http.
"""

from __future__ import annotations

import ipaddress
import json as _json_module
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import requests

from .errors import InsecureEndpointError

logger = logging.getLogger("mcp_sync.oauth")

#: Seconds to wait for a metadata, registration or token endpoint.
DEFAULT_TIMEOUT = 30.0
_MAX_BODY = 1 << 20


def is_loopback(host: str | None) -> bool:
    """True for ``localhost``, ``*.localhost``, 127.0.0.0/8 and ::1."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url: str, what: str) -> str:
    """``url`` if it is https, or http on a loopback host; else :class:`InsecureEndpointError`."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and is_loopback(parts.hostname):
        return url
    raise InsecureEndpointError(url, what)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with default ports filled in, for same-origin checks."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def get_json(
    session: requests.Session,
    url: str,
    what: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[int, dict[str, Any] | None]:
    """GET ``url``; (status, the JSON object or None if the body is not one)."""
    require_secure(url, what)
    response = session.get(
        url,
        headers={"Accept": "application/json", **(headers or {})},
        timeout=timeout,
        allow_redirects=False,
    )
    with response:
        return response.status_code, _json_object(response)


def post(
    session: requests.Session,
    url: str,
    what: str,
    *,
    data: Mapping[str, str] | None = None,
    json: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[int, dict[str, Any] | None]:
    """POST a form (``data``) or JSON to ``url``; (status, the JSON object or None)."""
    require_secure(url, what)
    response = session.post(
        url,
        data=dict(data) if data is not None else None,
        json=dict(json) if json is not None else None,
        headers={"Accept": "application/json", **(headers or {})},
        timeout=timeout,
        allow_redirects=False,
    )
    with response:
        return response.status_code, _json_object(response)


def _json_object(response: requests.Response) -> dict[str, Any] | None:
    body = response.content
    if len(body) > _MAX_BODY:
        return None
    try:
        value = _json_module.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
