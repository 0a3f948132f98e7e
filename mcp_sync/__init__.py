"""mcp_sync: a synchronous, thread-based client for the Model Context Protocol (MCP).

Every call blocks the calling thread until it settles, from any thread, including one where
an asyncio loop runs. The client has no asyncio inside (only the optional in-process server
integration, ``mcp_sync.integrations.inprocess``, runs a Python server's own event loop on a
thread of its own) and no server framework: it is the client side of MCP only.

    import mcp_sync
    with mcp_sync.connect(["mcp-server-time"]) as client:
        print(client.call_tool("get_current_time", {"timezone": "UTC"}).text)
"""

import logging
from typing import TYPE_CHECKING, Any

from ._client.connect import connect
from ._client.targets import Target, TransportOptions, transport_for
from ._client.tasks import Tasks, ToolTask
from ._connection.options import ClientOptions
from ._session.extra_headers import extra_headers
from ._version import __version__ as __version__
from .abort import AbortController, AbortSignal
from .backoff import Backoff
from .client import Client, ClientState, HandlerContext, Subscription
from .errors import (
    Aborted,
    CapabilityError,
    ConfigError,
    ConnectionClosed,
    ConnectionFailure,
    GroupError,
    HiddenCharactersWarning,
    HttpError,
    InvalidStateError,
    InvalidUsage,
    McpError,
    MissingClientCapability,
    NotSupportedInEra,
    OutputValidationError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    SandboxUnavailable,
    ServerConnectError,
    ServerError,
    ServerStartError,
    ServerUnavailable,
    SessionExpired,
    SkillVerificationError,
    TaskCancelled,
    ToolChanged,
    ToolChangedWarning,
    TransportError,
    UnknownName,
    UnsupportedProtocolVersion,
    UrlElicitationRequired,
    WriteTimeout,
)
from .pins import Pins, ToolChange
from .protocol.jsonrpc import Notification
from .protocol.types import __all__ as _moved_to_types
from .protocol.versions import LATEST, SUPPORTED
from .skills import LoadedSkill
from .transports import (
    InMemoryTransport,
    PipeTransport,
    StdioTransport,
    Transport,
    in_memory_transport_pair,
)

if TYPE_CHECKING:
    from ._presentation.repr import ToolParameter, tool_parameters
    from .auth import AuthProvider, BearerToken, UnauthorizedContext
    from .cassette import Cassette
    from .config import connect_all
    from .functions import Functions
    from .group import BreakerStatus, CircuitBreaker, ClientGroup
    from .llm import clean_tool, to_llm_content, to_llm_text
    from .shared import SharedClient, shared_client
    from .transports.http import ReconnectOptions, StreamableHttpTransport
    from .transports.sandbox import Sandbox
    from .transports.sse_legacy import SseTransport


# A library's loggers stay quiet unless the program configures logging (the logging HOWTO's
# rule for libraries): without this, Python's last-resort handler printed our warnings raw.
logging.getLogger("mcp_sync").addHandler(logging.NullHandler())

__all__ = [
    "LATEST",
    "SUPPORTED",
    "AbortController",
    "AbortSignal",
    "Aborted",
    "Backoff",
    "BreakerStatus",
    "CapabilityError",
    "Cassette",
    "CircuitBreaker",
    "Client",
    "ClientOptions",
    "ConfigError",
    "ClientGroup",
    "ClientState",
    "ConnectionClosed",
    "Functions",
    "HandlerContext",
    "HttpError",
    "InMemoryTransport",
    "GroupError",
    "HiddenCharactersWarning",
    "InvalidStateError",
    "LoadedSkill",
    "PipeTransport",
    "Pins",
    "ReconnectOptions",
    "SseTransport",
    "StdioTransport",
    "StreamableHttpTransport",
    "AuthProvider",
    "BearerToken",
    "UnauthorizedContext",
    "connect",
    "connect_all",
    "extra_headers",
    "McpError",
    "ServerError",
    "ConnectionFailure",
    "InvalidUsage",
    "MissingClientCapability",
    "Notification",
    "NotSupportedInEra",
    "OutputValidationError",
    "ProtocolError",
    "RequestTimeout",
    "RpcError",
    "Sandbox",
    "SandboxUnavailable",
    "ServerConnectError",
    "ServerStartError",
    "ServerUnavailable",
    "SessionExpired",
    "SharedClient",
    "SkillVerificationError",
    "TaskCancelled",
    "Tasks",
    "ToolChange",
    "ToolChanged",
    "ToolChangedWarning",
    "ToolTask",
    "Subscription",
    "Transport",
    "TransportError",
    "UnknownName",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
    "WriteTimeout",
    "in_memory_transport_pair",
    "shared_client",
    "clean_tool",
    "to_llm_content",
    "to_llm_text",
    "tool_parameters",
    "TransportOptions",
    "transport_for",
    "Target",
    "ToolParameter",
]

# Loaded on first use only: HTTP pulls in `requests`, and a stdio client needs none of the
# rest (`make bench`'s import row; tests/test_import_footprint.py keeps them out).
_LAZY = {
    "Cassette": "mcp_sync.cassette",
    "BreakerStatus": "mcp_sync.group",
    "CircuitBreaker": "mcp_sync.group",
    "ClientGroup": "mcp_sync.group",
    "connect_all": "mcp_sync.config",
    "Functions": "mcp_sync.functions",
    "clean_tool": "mcp_sync.llm",
    "to_llm_content": "mcp_sync.llm",
    "to_llm_text": "mcp_sync.llm",
    "Sandbox": "mcp_sync.transports.sandbox",
    "SharedClient": "mcp_sync.shared",
    "shared_client": "mcp_sync.shared",
    "ToolParameter": "mcp_sync._presentation.repr",
    "tool_parameters": "mcp_sync._presentation.repr",
    "StreamableHttpTransport": "mcp_sync.transports.http",
    "ReconnectOptions": "mcp_sync.transports.http",
    "SseTransport": "mcp_sync.transports.sse_legacy",
    "AuthProvider": "mcp_sync.auth",
    "BearerToken": "mcp_sync.auth",
    "UnauthorizedContext": "mcp_sync.auth",
}


def __getattr__(name: str) -> Any:
    from importlib import import_module

    if name in _moved_to_types:
        # The wire types were top-level names until 0.1.0's surface was cut (docs/api.md).
        from ._rules.warn import deprecated

        deprecated(f"mcp_sync.{name} is now mcp_sync.types.{name}")
        return getattr(import_module("mcp_sync.types"), name)
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(import_module(module), name)
        globals()[name] = value  # the next look-up finds it without coming here
        return value
    if not name.startswith("_"):
        # A public module not loaded yet: `import mcp_sync; mcp_sync.config.load(...)` works,
        # and `mcp_sync.types.Tool` (as `import mcp` does not).
        try:
            return import_module(f"mcp_sync.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"mcp_sync.{name}":
                raise
    raise AttributeError(f"module 'mcp_sync' has no attribute {name!r}")
