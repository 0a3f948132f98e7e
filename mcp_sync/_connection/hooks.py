"""Process-wide hooks on the request path, set by optional integrations.

``around_request`` is None unless an integration installs it
(:func:`mcp_sync.integrations.tracing.instrument`): uninstrumented, a request pays one
module attribute load and a None check. Installed, it is called as
``around_request(server, transport, outgoing, send)`` for every request a connected client
sends (each ``input_required`` round is its own request), ``server`` being what the server
said of itself (None while the handshake runs) and ``outgoing`` the request
(:class:`~mcp_sync._session.outgoing.Outgoing`: its method, row, params), and must return
``send(outgoing)``'s result or raise what it raised; it may send a changed one
(``outgoing.with_params(...)``, the params a copy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._session.outgoing import Outgoing
    from ..transports.base import Transport
    from .negotiation import ServerState

__all__ = ["AroundRequest", "around_request"]

Send = Callable[["Outgoing"], Any]
AroundRequest = Callable[["ServerState | None", "Transport | None", "Outgoing", Send], Any]

around_request: AroundRequest | None = None
