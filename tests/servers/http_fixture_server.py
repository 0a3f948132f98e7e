"""A tiny real MCP server (official Python SDK, ``MCPServer``) for the HTTP transport tests.

python http_fixture_server.py streamable-http PORT [--json]
python http_fixture_server.py sse PORT
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

warnings.simplefilter("ignore")

server = MCPServer("http-fixture")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Log one message per step, then answer (notifications before the response)."""
    for step in range(steps):
        await ctx.info(f"step {step}")
    return f"counted {steps}"


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def locate(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    zone: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Zone"})] = 0,
) -> str:
    """Answer with the region (2026-07-28: mirrored in the Mcp-Param-Region header)."""
    return f"{region}/{zone}"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """Answer with the value of the HTTP request header ``name`` ("" when absent)."""
    request = ctx.request_context.request
    return "" if request is None else request.headers.get(name, "")


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "streamable-http":
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            json_response="--json" in sys.argv,
        )
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=port)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
