"""MCP tools as a pydantic-ai toolset, run by pydantic-ai's own agent loop (Agent.run_sync)
with its FunctionModel scripting the tool calls (no network), against real servers:
server-everything and the official SDK's server (tests/servers/sdk_server.py)."""

from __future__ import annotations

import sys

import pytest

if sys.version_info < (3, 11):
    pytest.skip("pydantic-ai needs Python >= 3.11", allow_module_level=True)

from integration_servers import SDK_SERVER
from pydantic_ai import Agent, BinaryContent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

import mcp_sync
from mcp_sync.integrations.pydantic_ai import pydantic_ai_toolset

pytestmark = pytest.mark.timeout(60)


def scripted(*turns):
    """A FunctionModel answering each request from a script; it records what it was offered."""
    script = iter(turns)
    offered = []

    def answer(messages, info):
        offered.append({t.name: t for t in info.function_tools})
        turn = next(script)
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        return ModelResponse(
            parts=[
                ToolCallPart(name, args, tool_call_id=f"c{i}")
                for i, (name, args) in enumerate(turn)
            ]
        )

    return FunctionModel(answer), offered


def parts(result, kind):
    return [
        p for m in result.all_messages() for p in getattr(m, "parts", []) if isinstance(p, kind)
    ]


def test_agent_runs_the_tools_through_the_toolset(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        listed = {t.name: t for t in client.list_tools()}
        toolset = pydantic_ai_toolset(
            client, names=["get-sum", "get-tiny-image", "get-structured-content"]
        )
        model, offered = scripted(
            [
                ("get-sum", {"a": 2, "b": 3}),
                ("get-tiny-image", {}),
                ("get-structured-content", {"location": "Chicago"}),
            ],
            "done",
        )
        result = Agent(model, toolsets=[toolset]).run_sync("use the tools")
    assert result.output == "done"
    returned = {p.tool_name: p.content for p in parts(result, ToolReturnPart)}
    assert returned["get-sum"] == "The sum of 2 and 3 is 5."
    image = returned["get-tiny-image"]
    assert any(isinstance(x, BinaryContent) and x.media_type == "image/png" for x in image)
    assert "temperature" in returned["get-structured-content"]  # structured content, a dict
    shown = offered[0]["get-sum"]
    assert shown.description == listed["get-sum"].description
    assert (
        shown.parameters_json_schema["properties"].keys()
        == listed["get-sum"].input_schema["properties"].keys()
    )


def test_an_error_result_is_a_retry_the_model_sees():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        model, _offered = scripted([("fail", {})], [("add", {"a": 1, "b": 2})], "three")
        agent = Agent(
            model, toolsets=[pydantic_ai_toolset(client, names=["fail", "add"], max_retries=1)]
        )
        result = agent.run_sync("try")
    assert result.output == "three"
    # the server's error text went back to the model as a retry prompt, and the run went on
    fail, add = parts(result, ToolReturnPart)
    assert (fail.tool_name, fail.content, fail.outcome) == (
        "fail",
        "Error executing tool fail",
        "retried",
    )
    assert add.content == {"result": 3}
