"""A tool list built to break generated Python, on the official Python SDK's low-level API.

What ``client.functions`` and ``mcp-sync stubs`` must survive from a server they did not
write: tool, parameter and field names that are keywords, dunders, builtins, the stub module's
own names (``Tools``, ``Literal``, ``bind``, ``pydantic``), pydantic's (``schema``,
``model_dump``), unicode, leading digits and underscores, names that collide once made
identifiers; nested schemas titled like those names; the same model taken and returned; a
``null`` default on an integer, and a default that does not fit its type; and each schema
shape (enum, const, anyOf, oneOf, a list of types, arrays, maps, ``$ref`` and its cycle,
boolean schemas, ``allOf`` of two).

Each tool answers a call with a text naming itself and echoing its arguments, and, when it has
an ``outputSchema``, the structured content :data:`RESULTS` holds for it.

    python hostile_tools_server.py            # stdio
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

warnings.simplefilter("ignore")

#: Names that break generated Python: a keyword, builtins the stub uses, the stub module's own
#: names, Functions' own attributes, dunders, IPython's probes, pydantic's attributes, digits,
#: underscores, unicode (all of it becomes ``__``), and pairs that meet once made identifiers.
NAMES = [
    "class",
    "None",
    "self",
    "str",
    "list",
    "int",
    "Any",
    "Literal",
    "Tools",
    "bind",
    "cast",
    "pydantic",
    "annotations",
    "tools",
    "refresh",
    "invalidate",
    "__init__",
    "__getattr__",
    "__class__",
    "_repr_html_",
    "_private",
    "__x",
    "2d",
    "天気",
    "天",
    "__",
    "get-time",
    "get_time",
    "schema",
    "model_dump",
    "timeout",
    "signal",
    "Address",
]

_ADDRESS = {
    "title": "Address",
    "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
    "required": ["street", "city"],
}

#: A parameter of each name, and a few shapes.
_EVERY_NAME = {
    "type": "object",
    "properties": {name: {"type": "string"} for name in NAMES},
    "required": ["self", "class"],
}

_SHAPES = {
    "type": "object",
    "$defs": {
        "Tools": {"type": "object", "properties": {"a": {"type": "integer"}}},
        "Literal": {"type": "object", "properties": {"b": {"type": "string"}}},
        "Node": {
            "title": "Any",
            "type": "object",
            "properties": {"label": {"type": "string"}, "next": {"$ref": "#/$defs/Node"}},
        },
    },
    "properties": {
        "tools": {"$ref": "#/$defs/Tools"},
        "literal": {"$ref": "#/$defs/Literal"},
        "node": {"$ref": "#/$defs/Node"},
        "count": {"type": "integer", "default": None},
        "ratio": {"type": "number", "default": "half"},
        "flag": {"type": "boolean", "default": 0},
        "mode": {"enum": ["a", 1, True, None, 'it\'s "quoted"\n']},
        "fixed": {"const": "only"},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "one": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "number"}}]},
        "typed": {"type": ["string", "null"]},
        "table": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "anything": True,
        "nothing": False,
        "both": {"allOf": [{"type": "string"}, {"minLength": 1}]},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        "keys": {
            "title": "pydantic",
            "type": "object",
            "properties": {
                "class": {"type": "string"},
                "str": {"type": "integer"},
                "Required": {"type": "string"},
                "__init__": {"type": "string"},
                "a b": {"type": "string"},
            },
        },
        "shadow": {
            "title": "str",
            "type": "object",
            "properties": {"str": {"type": "integer"}, "int": {"type": "string"}},
            "required": ["str"],
        },
    },
}

#: Fields of a result that pydantic or the stub module would take for their own.
_RESULT_FIELDS = ["schema", "json", "copy", "dict", "model_config", "model_fields", "_id"]
_RESULT_FIELDS += ["f_id", "__x__", "self", "str", "Literal", "pydantic", "validate", "2d", "天気"]

_RESULT = {
    "type": "object",
    "title": "Tools",
    "properties": {name: {"type": "string"} for name in _RESULT_FIELDS},
    "required": ["schema"],
}

TOOLS: list[types.Tool] = [
    types.Tool(name=name, description=f"The tool {name!r}.", input_schema={"type": "object"})
    for name in NAMES
]
TOOLS += [
    types.Tool(
        name="geocode",
        description="Takes an Address and returns one: the same model in and out.",
        input_schema={
            "type": "object",
            "$defs": {"Address": _ADDRESS},
            "properties": {"address": {"$ref": "#/$defs/Address"}},
            "required": ["address"],
        },
        output_schema=_ADDRESS,
    ),
    types.Tool(
        name="every_name", description="A parameter of each name.", input_schema=_EVERY_NAME
    ),
    types.Tool(name="shapes", description="Each schema shape.", input_schema=_SHAPES),
    types.Tool(
        name="fields",
        description="A result whose fields pydantic would take.",
        input_schema={"type": "object"},
        output_schema=_RESULT,
    ),
]

#: The structured content each tool with an outputSchema returns.
RESULTS: dict[str, dict[str, Any]] = {
    "geocode": {"street": "1 rue de Rivoli", "city": "Paris"},
    "fields": {name: f"the {name}" for name in _RESULT_FIELDS},
}


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = f"{params.name} {json.dumps(params.arguments or {}, sort_keys=True)}"
    content = [types.TextContent(type="text", text=text)]
    return types.CallToolResult(content=content, structured_content=RESULTS.get(params.name))


server = Server("hostile-tools", on_list_tools=_list_tools, on_call_tool=_call_tool)


async def main() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    sys.exit(anyio.run(main))
