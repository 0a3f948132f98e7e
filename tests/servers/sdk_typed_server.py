"""A fixture server written with the official Python SDK (`mcp` 2.x, MCPServer) whose tools take
rich parameters: pydantic models (``$defs`` and ``$ref``), a model that contains itself (a
``$ref`` cycle), enums and ``Literal``, arrays of models, optional parameters with defaults,
tool names that are not Python identifiers (and two that map to the same one), and a
parameter named like a call's keyword-only extra (``timeout``); ``grow`` adds a tool and
sends ``notifications/tools/list_changed``.

mcp_sync's typed tool functions (``client.functions``, tests/test_functions.py) are built
from these schemas.

    python sdk_typed_server.py stdio
"""

from __future__ import annotations

import enum
import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

server = MCPServer("sdk-typed-fixture")


class Unit(str, enum.Enum):
    celsius = "celsius"
    fahrenheit = "fahrenheit"


class Address(BaseModel):
    street: str = Field(description="street and number")
    city: str
    country: str = "FR"


class Person(BaseModel):
    name: str = Field(description="the person's full name")
    age: int = Field(ge=0, description="age in years")
    address: Address
    tags: list[str] = []


class Node(BaseModel):
    """A tree: each node holds its children (the schema refers to itself)."""

    label: str
    children: list[Node] = []


class Forecast(BaseModel):
    city: str
    unit: Unit
    highs: list[float] = Field(description="one high a day")


@server.tool()
def forecast(
    city: Annotated[str, Field(description="the city to forecast")],
    unit: Unit = Unit.celsius,
    days: Annotated[int, Field(ge=1, le=7, description="how many days")] = 3,
) -> Forecast:
    """The forecast for a city."""
    highs = [20.0 + day for day in range(days)]
    if unit is Unit.fahrenheit:
        highs = [h * 9 / 5 + 32 for h in highs]
    return Forecast(city=city, unit=unit, highs=highs)


@server.tool()
def register(person: Person, mode: Literal["dry-run", "commit"] = "dry-run") -> str:
    """Register a person."""
    return f"{mode}: {person.name} ({person.age}) of {person.address.city}"


@server.tool()
def count_nodes(tree: Node) -> int:
    """Count the nodes of a tree."""
    return 1 + sum(count_nodes(child) for child in tree.children)


@server.tool(name="get-time")
def get_time(zone: str = "UTC") -> str:
    """The time in a zone (a fixed answer)."""
    return f"12:00 in {zone}"


@server.tool(name="class")
def klass(to: list[Annotated[str, Field(min_length=1)]], timeout: float = 1.0) -> str:
    """A tool named like a Python keyword, with a parameter named like a call's extra."""
    return f"{', '.join(to)} within {timeout}"


@server.tool(name="get_time")
def get_time_too() -> str:
    """A second tool whose Python name would be get_time."""
    return "noon"


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool ``name`` that echoes its text, then say the tools changed."""

    def echo(text: str) -> str:
        return text

    server.add_tool(echo, name=name, description=f"Echo, added as {name}.")
    await ctx.session.send_tool_list_changed()  # the handshake era
    await ctx.notify_tools_changed()  # a 2026-07-28 listen subscription
    return name


@server.tool()
def fail(reason: str = "it broke") -> str:
    """Always fails: a tool error."""
    raise ValueError(reason)


if __name__ == "__main__":
    server.run(sys.argv[1] if len(sys.argv) > 1 else "stdio")
