"""The MCP wire types: the pydantic models a client sends and receives.

``from mcp_sync.types import Tool, CallToolResult, TextContent``: the module name the official
SDK's users know (``mcp.types``). Attributes are snake_case; :meth:`~McpModel.to_wire` and
:meth:`~McpModel.from_wire` use the camelCase wire form. The models are defined in
``mcp_sync.protocol.types`` (no I/O there); this is where a user imports them from.
"""

from .protocol.types import *  # noqa: F403
from .protocol.types import __all__ as __all__
