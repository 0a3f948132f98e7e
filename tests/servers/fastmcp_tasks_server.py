"""A fastmcp server with the 2026 tasks extension (``io.modelcontextprotocol/tasks``,
SEP-2663) from the ``fastmcp-tasks`` package, in-memory backend.

fastmcp-tasks pins an older fastmcp than the test extra's, so `make test` installs it in its
own virtualenv (tests/peers/tasks-venv); tests run this file with that venv's Python.

    python fastmcp_tasks_server.py            # stdio, protocol 2026-07-28
"""

from __future__ import annotations

import asyncio
import warnings
from datetime import timedelta

import mcp_types as types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")

mcp = FastMCP("tasks-fixture")
mcp.add_extension(TasksExtension(url="memory://"))
#: Tools that may run as tasks, polled every 50 ms (the default asks for 5 s).
TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=50))


@mcp.tool(task=TASK)
async def crunch(n: int) -> str:
    """Count to ``n`` slowly (a task when the client supports them)."""
    await asyncio.sleep(0.2 * n)
    return f"crunched {n}"


@mcp.tool(task=TASK)
async def forever() -> str:
    """Never finishes on its own: cancel it."""
    while True:
        await asyncio.sleep(0.1)


@mcp.tool(task=TASK)
async def broken() -> str:
    """Fails."""
    raise ValueError("crunching failed")


@mcp.tool(task=TASK)
async def protocol_error() -> str:
    """Fails with a JSON-RPC error: the task ends "failed", not completed with isError."""
    raise MCPError(code=-32602, message="no such dataset")


@mcp.tool(task=TASK)
async def ask_name(ctx: Context) -> str | types.InputRequiredResult:
    """Asks the client for a name: the task goes input_required until it is answered."""
    answer = (ctx.input_responses or {}).get("name")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }
        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message="What is your name?", requested_schema=schema
            )
        )
        return types.InputRequiredResult(input_requests={"name": ask})
    return f"hello {answer.content['name']}"


@mcp.tool
def add(a: int, b: int) -> int:
    """A plain tool."""
    return a + b


if __name__ == "__main__":
    mcp.run(show_banner=False)
