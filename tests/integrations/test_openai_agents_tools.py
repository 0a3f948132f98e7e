"""MCP tools as OpenAI Agents SDK function tools, run by the SDK's own loop (Runner.run_sync)
with a scripted Model (the SDK's interface for a model; no network), against real servers:
server-everything and the official SDK's server (tests/servers/sdk_server.py)."""

from __future__ import annotations

import pytest
from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    ToolOutputImage,
    ToolOutputText,
    Usage,
)
from agents.exceptions import UserError
from agents.items import ToolCallOutputItem
from integration_servers import SDK_SERVER
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import mcp_sync
from mcp_sync.errors import ConnectionClosed
from mcp_sync.integrations.openai_agents import openai_agents_tools

pytestmark = pytest.mark.timeout(60)

# no trace export: nothing leaves the machine
OFFLINE = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """An Agents SDK model that answers from a script: lists of tool calls, then a text."""

    def __init__(self, *turns):
        self.turns = iter(turns)
        self.offered = []
        self.inputs = []

    async def get_response(self, system_instructions, input, model_settings, tools, *a, **k):
        self.offered.append(tools)
        self.inputs.append(input)
        turn = next(self.turns)
        if isinstance(turn, str):
            output = [
                ResponseOutputMessage(
                    id="msg",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=turn, annotations=[])],
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call", call_id=f"call_{i}", name=name, arguments=args
                )
                for i, (name, args) in enumerate(turn)
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def outputs(result):
    return [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]


def test_runner_calls_tools_with_their_schemas(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        listed = {t.name: t for t in client.list_tools()}
        tools = openai_agents_tools(client, names=["get-sum", "get-tiny-image"])
        model = ScriptedModel(
            [("get-sum", '{"a": 2, "b": 3}'), ("get-tiny-image", "{}")],
            "the sum is 5",
        )
        agent = Agent(name="t", instructions="use the tools", tools=tools, model=model)
        result = Runner.run_sync(agent, "add 2 and 3", run_config=OFFLINE)
    assert result.final_output == "the sum is 5"
    got = outputs(result)
    assert "The sum of 2 and 3 is 5." in got[0]
    text, image = got[1]  # the text (an image described in it), then the image itself
    assert isinstance(text, ToolOutputText) and "[image: image/png" in text.text
    assert isinstance(image, ToolOutputImage) and image.image_url.startswith(
        "data:image/png;base64,"
    )
    offered = {t.name: t for t in model.offered[0]}
    assert set(offered) == {"get-sum", "get-tiny-image"}
    assert offered["get-sum"].description == listed["get-sum"].description
    schema = listed["get-sum"].input_schema
    assert offered["get-sum"].params_json_schema["properties"].keys() == schema["properties"].keys()
    assert offered["get-sum"].strict_json_schema is False
    # the model's second turn saw both outputs
    sent = [
        i
        for i in model.inputs[1]
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    assert len(sent) == 2


def test_an_error_result_and_bad_arguments_reach_the_model():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        names = [t.name for t in client.list_tools()]
        assert "fail" in names
        model = ScriptedModel(
            [("fail", '{"message": "no such city"}'), ("fail", "[1, 2]")],
            "sorry",
        )
        agent = Agent(name="t", tools=openai_agents_tools(client, names=["fail"]), model=model)
        result = Runner.run_sync(agent, "try", run_config=OFFLINE)
    assert result.final_output == "sorry"
    error, bad = outputs(result)
    assert error == "Error: Error executing tool fail"  # the server's own text, as an error
    assert bad.startswith("Error: the arguments of fail must be a JSON object")


def test_a_client_error_raises_out_of_the_run_when_asked():
    client = mcp_sync.connect(SDK_SERVER, request_timeout=20)
    tools = openai_agents_tools(client, names=["add"], on_error="raise")
    client.close()  # the server is gone: the call cannot be made
    model = ScriptedModel([("add", '{"a": 1, "b": 2}')], "never")
    agent = Agent(name="t", tools=tools, model=model)
    with pytest.raises(UserError, match="Error running tool add: connection closed") as raised:
        Runner.run_sync(agent, "add", run_config=OFFLINE)
    assert isinstance(raised.value.__cause__, ConnectionClosed)  # the SDK wraps, keeps the cause
