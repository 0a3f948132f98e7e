"""MCP tools as smolagents tools, run by smolagents' ToolCallingAgent with a scripted model
that emits tool calls, against real servers: server-everything and the official SDK's server."""

from __future__ import annotations

import io

import pytest
from mcp.server.mcpserver import Image as McpImage
from mcp.server.mcpserver import MCPServer
from PIL import Image
from smolagents import ToolCallingAgent
from smolagents.agent_types import AgentImage
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)

import mcp_sync
from mcp_sync.errors import ToolError
from mcp_sync.integrations.smolagents import python_name, smolagents_tools
from tests.helpers.integration_servers import SDK_SERVER

pytestmark = pytest.mark.timeout(60)


class ScriptedModel(Model):
    """A smolagents model that answers from a script of tool calls."""

    def __init__(self, *turns):
        super().__init__(model_id="scripted")
        self.turns = iter(turns)
        self.offered = []

    def generate(
        self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs
    ):
        self.offered.append([get_tool_json_schema(t) for t in tools_to_call_from or []])
        return next(self.turns)


def calls(*pairs):
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        tool_calls=[
            ChatMessageToolCall(
                id=f"call_{i}",
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=args),
            )
            for i, (name, args) in enumerate(pairs)
        ],
    )


def test_agent_calls_text_image_and_structured_tools(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        mcp_tools = {t.name: t for t in client.list_tools()}
        tools = smolagents_tools(
            client, names=["get-sum", "get-tiny-image", "get-structured-content"]
        )
        model = ScriptedModel(
            calls(
                ("get_sum", {"a": 2, "b": 3}),
                ("get_tiny_image", {}),
                ("get_structured_content", {"location": "Chicago"}),
            ),
            calls(("final_answer", {"answer": "done"})),
        )
        agent = ToolCallingAgent(tools=tools, model=model, max_steps=3, verbosity_level=0)
        assert agent.run("use the tools") == "done"
    # names made identifiers; descriptions and argument types as the server gave them
    assert {t.name: t.mcp_name for t in tools} == {
        "get_sum": "get-sum",
        "get_tiny_image": "get-tiny-image",
        "get_structured_content": "get-structured-content",
    }
    offered = {t["function"]["name"]: t["function"] for t in model.offered[0]}
    assert offered["get_sum"]["description"] == mcp_tools["get-sum"].description
    schema = mcp_tools["get-sum"].input_schema["properties"]
    assert {k: v["type"] for k, v in offered["get_sum"]["parameters"]["properties"].items()} == {
        k: v["type"] for k, v in schema.items()
    }
    step = agent.memory.steps[1]
    assert "The sum of 2 and 3 is 5." in step.observations
    assert "[image: image/png]" in step.observations  # among text, an image is described
    assert "temperature" in step.observations  # structured content


def image_server():
    """An official-SDK server whose tool answers with an image only (served in-process)."""
    server = MCPServer("pictures")
    png = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(png, format="PNG")

    @server.tool()
    def red_pixels() -> McpImage:
        """A small red picture."""
        return McpImage(data=png.getvalue(), format="png")

    return server


def test_an_image_result_is_an_agent_image():
    with mcp_sync.connect(image_server()) as client:
        model = ScriptedModel(calls(("red_pixels", {})), calls(("final_answer", {"answer": "red"})))
        agent = ToolCallingAgent(
            tools=smolagents_tools(client), model=model, max_steps=3, verbosity_level=0
        )
        assert agent.run("draw") == "red"
    assert "Stored 'image.png' in memory." in agent.memory.steps[1].observations
    stored = agent.state["image.png"]
    assert isinstance(stored, AgentImage) and stored.to_raw().size == (3, 2)


def test_tool_outputs_and_errors_directly():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = {t.name: t for t in smolagents_tools(client)}
        assert tools["add"](a=2, b=5) == {"result": 7}
        assert tools["weather"].output_type == "object" and tools["weather"].output_schema
        assert tools["fail"].inputs["message"]["nullable"] is True
        with pytest.raises(ToolError, match="'fail' failed"):
            tools["fail"](message="boom")
        with pytest.raises(ToolError):  # null for an optional argument: the server's default
            tools["fail"](message=None)


def test_a_failing_tool_is_reported_to_the_model():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        model = ScriptedModel(
            calls(("fail", {"message": "boom"})), calls(("final_answer", {"answer": "gave up"}))
        )
        agent = ToolCallingAgent(
            tools=smolagents_tools(client, names=["fail"]),
            model=model,
            max_steps=3,
            verbosity_level=0,
        )
        assert agent.run("try") == "gave up"
    assert "failed" in str(agent.memory.steps[1].error)


def test_python_names():
    assert [python_name(n) for n in ["get-sum", "a.b/c", "9lives", "class", "ok"]] == [
        "get_sum",
        "a_b_c",
        "_9lives",
        "class_",
        "ok",
    ]
