"""Transports move whole JSON-RPC messages; see :mod:`mcp_sync.transports.base`.

The HTTP transports import ``requests`` and are loaded on first use, so that a stdio-only
program never pays for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import MessageOptions, Transport
from .memory import InMemoryTransport, in_memory_transport_pair
from .stdio import PipeTransport, StdioTransport

if TYPE_CHECKING:
    from ._http.tls import SystemTrustAdapter, tls_session
    from .http import ReconnectOptions, StreamableHttpTransport, fallback_to_sse
    from .sse_legacy import SseTransport

__all__ = [
    "InMemoryTransport",
    "MessageOptions",
    "PipeTransport",
    "ReconnectOptions",
    "SseTransport",
    "StdioTransport",
    "StreamableHttpTransport",
    "SystemTrustAdapter",
    "Transport",
    "fallback_to_sse",
    "in_memory_transport_pair",
    "tls_session",
]

_LAZY = {
    "StreamableHttpTransport": ".http",
    "ReconnectOptions": ".http",
    "fallback_to_sse": ".http",
    "SseTransport": ".sse_legacy",
    "SystemTrustAdapter": "._http.tls",
    "tls_session": "._http.tls",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)
