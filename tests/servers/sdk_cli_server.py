"""Servers written with the official Python SDK (`mcp` 2.x) for the CLI's tests (issue 35).

    python sdk_cli_server.py            # MCPServer: pydantic enum and model parameters
    python sdk_cli_server.py lowlevel   # a low-level Server with resources but no templates

The first is how most Python servers describe their parameters: pydantic puts an Enum or a
BaseModel parameter in ``$defs`` and points at it with ``$ref``. Its ``read_bytes`` returns a
summary text and the data in structured content only, as a PDF server's byte-reading tool
does. The second advertises ``resources`` (it serves ``resources/list``) and answers
``resources/templates/list`` with "method not found", as the SDK's low-level server does when
no handler is registered for it.
"""

import json
import sys
import warnings
from enum import Enum

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from pydantic import BaseModel

warnings.simplefilter("ignore")


class Color(str, Enum):
    red = "red"
    green = "green"


class Code(str, Enum):
    ten = "10"
    twenty = "20"


class Item(BaseModel):
    name: str
    qty: int = 1


server = MCPServer("sdk-cli-fixture")


@server.tool()
def paint(color: Color, code: Code, shade: int = 3, trim: Color | None = None) -> str:
    """Echo the arguments."""
    echo = {"color": color.value, "code": code.value, "shade": shade}
    return json.dumps({**echo, "trim": trim.value} if trim else echo)


@server.tool()
def order(item: Item, extras: list[Item] | None = None) -> str:
    """Echo an order (a pydantic model parameter)."""
    return json.dumps({"item": item.model_dump(), "extras": [e.model_dump() for e in extras or []]})


@server.tool()
def files(paths: list[str], counts: list[int] | None = None) -> str:
    """Echo the lists given."""
    return json.dumps({"paths": paths, "counts": counts or []})


@server.tool()
def read_bytes(offset: int = 0, data: str = "JVBE") -> types.CallToolResult:
    """Read some bytes: the text is a summary, the data is in the structured content."""
    chunk = {"offset": offset, "length": 4, "total": 596, "data": data}
    summary = types.TextContent(type="text", text=f"4 bytes at {offset}/596")
    return types.CallToolResult(content=[summary], structured_content=chunk)


async def _list_resources(ctx, params):  # type: ignore[no-untyped-def]
    return types.ListResourcesResult(resources=[types.Resource(uri="memo://one", name="one")])


lowlevel = Server("sdk-cli-lowlevel", on_list_resources=_list_resources)


async def _run_lowlevel() -> None:
    async with stdio_server() as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:] == ["lowlevel"]:
        anyio.run(_run_lowlevel)
    else:
        server.run()
