"""MCP tools for the OpenAI Agents SDK, as function tools and as a server the SDK lists per run,
run by the SDK's own loop (Runner.run_sync) with a scripted Model (the SDK's interface for a
model; no network), against real servers: server-everything and the official SDK's servers
(tests/servers/: sdk_server.py, apps_server.py, rug_pull_server.py)."""

from __future__ import annotations

import asyncio

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
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import mcp_sync
from mcp_sync import StdioTransport
from mcp_sync.errors import ConnectionClosed
from mcp_sync.integrations.openai_agents import openai_agents_server, openai_agents_tools
from tests.helpers.integration_servers import APPS_SERVER, SDK_SERVER
from tests.helpers.support import PYTHON, SERVERS

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp_sync.HiddenCharactersWarning"),
]

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


def run(agent_tools, *turns, prompt="go", **agent_options):
    model = ScriptedModel(*turns)
    agent = Agent(name="t", model=model, **agent_tools, **agent_options)
    return Runner.run_sync(agent, prompt, run_config=OFFLINE), model


def function_outputs(model, turn=1):
    return [
        item["output"]
        for item in model.inputs[turn]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


@pytest.mark.parametrize("form", ["tools", "server"])
def test_a_timeout_or_a_lost_server_is_told_to_the_model_and_the_run_goes_on(form):
    calls = []

    def count_calls(call, call_next):
        calls.append(call.name)
        return call_next(call)

    with mcp_sync.connect(APPS_SERVER, request_timeout=30) as client:
        options = dict(names=["stall"], prefix="apps_", timeout=1, interceptors=[count_calls])
        if form == "tools":
            tools = {"tools": openai_agents_tools(client, **options)}
        else:
            tools = {"mcp_servers": [openai_agents_server(client, **options)]}
        result, _model = run(tools, [("apps_stall", '{"seconds": 30}')], "too slow")
    assert result.final_output == "too slow"
    (told,) = outputs(result)
    if form == "server":  # the SDK's own MCP path hands the model a text item
        told = told["text"]
    assert told.startswith("Error: RequestTimeout")
    assert calls == ["stall"]
    if form == "tools":  # (the server form lists at the start of a run: that fails)
        lost, _model = run(tools, [("apps_stall", '{"seconds": 0}')], "it is gone")
        assert lost.final_output == "it is gone"
        assert outputs(lost)[0].startswith("Error: ConnectionClosed")


@pytest.mark.parametrize("form", ["tools", "server"])
def test_images_reach_a_responses_model_as_images(form):
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        if form == "tools":
            tools = {"tools": openai_agents_tools(client, names=["snapshot"])}
        else:
            tools = {"mcp_servers": [openai_agents_server(client, names=["snapshot"])]}
        _result, model = run(tools, [("snapshot", "{}")], "a dot")
    (sent,) = function_outputs(model)
    assert sent[0] == {"type": "input_text", "text": "a dot\n[image: image/png, 70 bytes]"}
    assert sent[1]["type"] == "input_image"
    assert sent[1]["image_url"].startswith("data:image/png;base64,iVBORw0KGgo")


def test_the_server_form_lists_the_tools_again_on_each_run(tmp_path):
    transport = StdioTransport(PYTHON, [str(SERVERS / "rug_pull_server.py"), str(tmp_path / "s")])
    with mcp_sync.Client(protocol="handshake").connect(transport) as client:
        fixed = openai_agents_tools(client)
        server = openai_agents_server(client)
        model = ScriptedModel([("rug_pull", "{}")], "pulled", "second run")
        agent = Agent(name="t", mcp_servers=[server], model=model)
        Runner.run_sync(agent, "pull the rug", run_config=OFFLINE)
        Runner.run_sync(agent, "again", run_config=OFFLINE)
        # the SDK's own option puts the server's name in each tool's name
        named = ScriptedModel("ok")
        config = {"include_server_in_tool_names": True}
        Runner.run_sync(
            Agent(name="t", mcp_servers=[server], model=named, mcp_config=config),
            "names",
            run_config=OFFLINE,
        )
    first, second = ({t.name for t in model.offered[i]} for i in (0, 2))
    assert "farewell" in first and "exfiltrate" not in first
    assert "exfiltrate" in second and "farewell" not in second
    assert "exfiltrate" not in {t.name for t in fixed}  # function tools are made once
    assert "mcp_rug-pull__exfiltrate" in {t.name for t in named.offered[0]}


def test_the_server_form_offers_the_servers_prompts_and_resources():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        server = openai_agents_server(client)

        async def read():
            prompts = await server.list_prompts()
            prompt = await server.get_prompt("review", {"code": "x = 1"})
            resources = await server.list_resources()
            readme = await server.read_resource("notes://readme")
            return prompts, prompt, resources, readme

        prompts, prompt, resources, readme = asyncio.run(read())
    assert server.name == "apps-fixture"
    assert [p.name for p in prompts.prompts] == ["review"]
    assert "Review this python: x = 1" in prompt.messages[0].content.text
    assert {str(r.uri) for r in resources.resources} == {"notes://readme", "images://dot"}
    assert readme.contents[0].text == "# Notes\nhello"
