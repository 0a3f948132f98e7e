"""A real MCP server (official Python SDK, ``MCPServer``, Streamable HTTP) that announces
``list_changed`` for its tools, resources and prompts as soon as the client's
``notifications/initialized`` arrives, as servers that register features per client do.

    python http_burst_server.py PORT

It keeps no event store: what it sends before the client's GET stream is open is lost.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from mcp import types
from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

server = MCPServer("http-burst")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def announce(ctx: Any, params: types.NotificationParams) -> None:
    await ctx.session.send_tool_list_changed()
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_prompt_list_changed()


server._lowlevel_server.add_notification_handler(
    "notifications/initialized", types.NotificationParams, announce
)

if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
