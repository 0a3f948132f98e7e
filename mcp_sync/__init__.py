"""mcp_sync: a synchronous, thread-based client for the Model Context Protocol (MCP).

Every call blocks the calling thread until it settles, from any thread, including one where
an asyncio loop runs. There is no asyncio in this library and no server framework: it is the
client side of MCP only.

    import mcp_sync
    with mcp_sync.connect(["mcp-server-time"]) as client:
        print(client.call_tool("get_current_time", {"timezone": "UTC"}).text)
"""

from ._handlers import HandlerContext
from .abort import AbortController, AbortSignal
from .client import Client, ClientState, Subscription
from .errors import (
    Aborted,
    CapabilityError,
    ConnectionClosed,
    HttpError,
    InvalidStateError,
    McpError,
    MissingClientCapability,
    NotSupportedInEra,
    ProtocolError,
    RequestTimeout,
    RpcError,
    SessionExpired,
    TransportError,
    UnsupportedProtocolVersion,
    UrlElicitationRequired,
)
from .llm import to_llm_content
from .protocol.types import *  # noqa: F403
from .protocol.types import __all__ as _types_all
from .protocol.validation import OutputValidationError
from .protocol.versions import LATEST, SUPPORTED
from .transports import InMemoryTransport, Transport, in_memory_transport_pair

__version__ = "0.1.0"

__all__ = [
    "LATEST",
    "SUPPORTED",
    "AbortController",
    "AbortSignal",
    "Aborted",
    "CapabilityError",
    "Client",
    "ClientState",
    "ConnectionClosed",
    "HandlerContext",
    "HttpError",
    "InMemoryTransport",
    "InvalidStateError",
    "McpError",
    "MissingClientCapability",
    "NotSupportedInEra",
    "OutputValidationError",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "SessionExpired",
    "Subscription",
    "Transport",
    "TransportError",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
    "in_memory_transport_pair",
    "to_llm_content",
    *_types_all,
]
