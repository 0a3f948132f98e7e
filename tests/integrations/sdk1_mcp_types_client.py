"""Run by test_mcp_types_sdk1.py with tests/peers/mcp1-venv's Python (mcp 1.x, mcpadapt and
google-genai, which the main venv's mcp 2.x excludes): to_mcp/from_mcp against mcp 1.x's
types, and to_mcp as the route into mcpadapt's google-genai adapter, as a user of both would
take it, against server-everything (argv[1:]). Prints what happened as one JSON line."""

from __future__ import annotations

import importlib.metadata
import json
import sys

import mcp.types
from google.genai import types as genai_types
from mcpadapt.google_genai_adapter import GoogleGenAIAdapter

import mcp_sync
from mcp_sync.integrations.mcp_types import from_mcp, to_mcp

report: dict[str, object] = {"mcp": importlib.metadata.version("mcp")}
with mcp_sync.connect(sys.argv[1:], request_timeout=30) as client:
    tools = client.list_tools()
    sdk_tools = to_mcp(tools)
    report["sdk_tool_types"] = sorted(
        {type(t).__module__ + "." + type(t).__name__ for t in sdk_tools}
    )
    report["tools_round_trip"] = from_mcp(sdk_tools) == tools
    result = client.call_tool("get-sum", {"a": 2, "b": 3})
    sdk_result = to_mcp(result)
    report["result_type"] = type(sdk_result).__name__
    report["result_round_trip"] = from_mcp(sdk_result) == result
    structured = client.call_tool("get-structured-content", {"location": "Chicago"})
    report["structured_round_trip"] = from_mcp(to_mcp(structured)) == structured

    # mcpadapt's adapters take an mcp.types.Tool and a function returning an
    # mcp.types.CallToolResult: to_mcp gives both from the synchronous client
    adapter = GoogleGenAIAdapter()
    by_name = {t.name: t for t in tools}

    def caller(name: str):
        return lambda arguments: to_mcp(client.call_tool(name, arguments or {}))

    # mcpadapt hands google-genai the input schema as it is, and google-genai refuses keys
    # such as "$schema" (server-everything sends one): the user takes it out (docs say so)
    with_schema_key = "$schema" in by_name["get-sum"].input_schema
    sdk_tool = to_mcp(by_name["get-sum"])
    schema = {k: v for k, v in sdk_tool.inputSchema.items() if k != "$schema"}
    shown = sdk_tool.model_copy(update={"inputSchema": schema})
    genai_tool, (name, call) = adapter.adapt(caller("get-sum"), shown)
    assert isinstance(genai_tool, genai_types.Tool)
    (declaration,) = genai_tool.function_declarations
    report["declared"] = {
        "name": declaration.name,
        "raw_had_schema_key": with_schema_key,
        "description": declaration.description == by_name["get-sum"].description,
        "properties": sorted(declaration.parameters.properties),
    }
    answer = call({"a": 4, "b": 5})
    report["adapted_call"] = {
        "type": type(answer).__name__,
        "is_sdk": isinstance(answer, mcp.types.CallToolResult),
        "text": answer.content[0].text,
    }
print(json.dumps(report))
