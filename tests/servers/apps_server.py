"""A fixture MCP server (official Python SDK, `mcp` 2.x) for the framework integrations: an MCP
Apps tool only the app's UI may call (``_meta.ui.visibility: ["app"]``), a tool for both, a
result whose ``content`` summarises its ``structuredContent`` (SEP-2200), a tool that never
answers in time, progress and logs during a call, parameters with descriptions, bounds and an
enum, an image result, its own process id, and resources (text and binary) and a prompt.

    python apps_server.py stdio
"""

from __future__ import annotations

import base64
import os
import warnings
from typing import Annotated, Literal

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")

server = MCPServer("apps-fixture")

UI = "ui://dashboard/view.html"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Stock(BaseModel):
    symbol: str
    price: float
    history: list[float]


@server.tool(meta={"ui": {"resourceUri": UI, "visibility": ["model", "app"]}, "team": "markets"})
def quote(symbol: str) -> types.CallToolResult:
    """The price of a stock: a one-line summary for the model, the full series for the app."""
    history = [float(n) for n in range(100)]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{symbol} trades at 99.0")],
        structured_content={"symbol": symbol, "price": 99.0, "history": history},
    )


@server.tool(meta={"ui": {"resourceUri": UI, "visibility": ["app"]}})
def refresh_view(panel: str) -> str:
    """Redraw a panel of the dashboard (the app's UI calls this, not the model)."""
    return f"redrawn {panel}"


@server.tool()
def stock(symbol: str) -> Stock:
    """A stock with its price history (structured output)."""
    return Stock(symbol=symbol, price=1.5, history=[1.0, 1.5])


@server.tool()
async def stall(seconds: float) -> str:
    """Answers after ``seconds``: longer than a short timeout."""
    await anyio.sleep(seconds)
    return "finally"


@server.tool()
def pick(
    count: Annotated[int, Field(ge=1, le=10, description="How many (1-10)")],
    kind: Annotated[Literal["red", "blue"], Field(description="Which colour")] = "red",
) -> str:
    """Pick some marbles (parameters with descriptions, bounds and an enum)."""
    return f"picked {count} {kind}"


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Reports progress and logs at each step."""
    for step in range(1, count + 1):
        await ctx.info(f"step {step} of {count}")
        await ctx.report_progress(step, count, f"step {step}")
    return f"done after {count} steps"


@server.tool()
def snapshot() -> list[types.ContentBlock]:
    """A caption and a one-pixel PNG."""
    image = types.ImageContent(
        type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
    )
    return [types.TextContent(type="text", text="a dot"), image]


@server.tool()
def pid() -> int:
    """This server's process id: which process answered."""
    return os.getpid()


@server.resource("notes://readme", mime_type="text/markdown")
def readme() -> str:
    """The notes."""
    return "# Notes\nhello"


@server.resource("images://dot", mime_type="image/png")
def dot() -> bytes:
    """A one-pixel PNG."""
    return PNG


@server.prompt()
def review(code: str, language: str = "python") -> list[Message]:
    """Review some code: a user turn and the assistant's start."""
    return [UserMessage(f"Review this {language}: {code}"), AssistantMessage("Looking at it now.")]


if __name__ == "__main__":
    server.run()
