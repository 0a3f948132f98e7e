"""The headers of a Streamable HTTP request: the user's, then the message's, then the
protocol's own, which nothing overrides (names compared case-insensitively)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...protocol.headers import PROTOCOL_VERSION_HEADER, merge, standard_headers
from ..base import MessageOptions
from .responses import JSON_TYPE, SSE_TYPE

__all__ = ["SESSION_HEADER", "merge", "post_headers", "session_headers"]

SESSION_HEADER = "Mcp-Session-Id"
_SESSION_MESSAGE = MessageOptions()


def post_headers(
    message: dict[str, Any],
    options: MessageOptions | None,
    *,
    static: Mapping[str, str],
    session_id: str | None,
    negotiated: str | None,
) -> dict[str, str]:
    """All headers of the POST of ``message``: ``static`` (the transport's ``headers=``), then
    ``options.headers`` (the message's own), then the protocol's (``Accept``,
    ``Content-Type``, session, version, ``Mcp-Method`` / ``Mcp-Name``).

    ``options.version``: the version the message is sent at (default ``negotiated``, the
    session's last). ``options.standalone``: the message stands alone (its version headers are
    those of :func:`~mcp_sync.protocol.headers.standard_headers`), with no ``session_id``.
    ``options.begins_session``: the request that opens a new session, which has neither yet.
    """
    options = options or _SESSION_MESSAGE
    protocol = {"Accept": f"{JSON_TYPE}, {SSE_TYPE}", "Content-Type": JSON_TYPE}
    standard = standard_headers(message, options.version or "")
    if not options.standalone:
        # Mcp-Method / Mcp-Name go on every POST; the version header keeps its old rules
        del standard[PROTOCOL_VERSION_HEADER]
        if not options.begins_session:
            if session_id:
                protocol[SESSION_HEADER] = session_id
            version = options.version or negotiated
            if version:
                protocol[PROTOCOL_VERSION_HEADER] = version
    protocol.update(standard)
    return merge(merge(dict(static), options.headers), protocol)


def session_headers(
    accept: str, *, static: Mapping[str, str], session_id: str | None, negotiated: str | None
) -> dict[str, str]:
    """Headers of a GET or DELETE of the session (handshake era only)."""
    protocol = {"Accept": accept}
    if session_id:
        protocol[SESSION_HEADER] = session_id
    if negotiated:
        protocol[PROTOCOL_VERSION_HEADER] = negotiated
    return merge(dict(static), protocol)
