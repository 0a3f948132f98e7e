"""Process-wide hooks on the request path, set by optional integrations.

``around_request`` is None unless an integration installs it
(:func:`mcp_sync.integrations.tracing.instrument`): uninstrumented, a request pays one
module attribute load and a None check. Installed, it is called as
``around_request(server, transport, method, params, send)`` for every request a connected
client sends (each ``input_required`` round is its own request), ``server`` being what the
server said of itself (None while the handshake runs), and must return ``send(params)``'s
result or raise what it raised; it may send changed params (a copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..transports.base import Transport
    from .negotiation import ServerState

__all__ = ["AroundRequest", "around_request"]

Send = Callable[["dict[str, Any] | None"], Any]
AroundRequest = Callable[
    ["ServerState | None", "Transport | None", str, "dict[str, Any] | None", Send], Any
]

around_request: AroundRequest | None = None
