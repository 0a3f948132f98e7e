"""Run by test_inprocess_sdk1.py with tests/peers/mcp1-venv's Python (mcp 1.x, which the main
venv's mcp 2.x excludes): connect() to an mcp 1.x FastMCP object in this process, as a user
would, and print what happened as one JSON line."""

from __future__ import annotations

import importlib.metadata
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.fastmcp import Context, FastMCP

import mcp_sync

lifespan_events: list[str] = []


@asynccontextmanager
async def lifespan(server: FastMCP) -> AsyncIterator[dict[str, str]]:
    lifespan_events.append("enter")
    try:
        yield {"greeting": "Hello"}
    finally:
        lifespan_events.append("exit")


server = FastMCP("sdk1-fixture", lifespan=lifespan)


@server.tool()
def greet(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Greet someone with the greeting the lifespan set up."""
    return f"{ctx.request_context.lifespan_context['greeting']}, {name}!"


with mcp_sync.connect(server, timeout=20) as client:
    report = {
        "mcp": importlib.metadata.version("mcp"),
        "server": client.server_info.name,
        "tools": [tool.name for tool in client.list_tools()],
        "text": client.call_tool("greet", {"name": "Ada"}).text,
    }
report["lifespan"] = lifespan_events
report["threads_left"] = [
    t.name
    for t in threading.enumerate()
    if t.name.startswith("mcp-sync-") or t.name == "AnyIO worker thread"
]
print(json.dumps(report))
