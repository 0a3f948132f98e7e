"""Everything the client offers, over stdio, against the official Python SDK's MCPServer."""

from __future__ import annotations

import pytest

import mcp_sync
from mcp_sync import Client, StdioTransport
from mcp_sync.types import (
    CreateMessageResult,
    ElicitResult,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
)
from tests.helpers.support import wait_until


@pytest.fixture(params=["handshake", "auto"])
def client(request, sdk_server_cmd, tmp_path):
    answered = []

    def sample(params, ctx):
        answered.append(params)
        question = params.messages[0].content.text
        return CreateMessageResult(
            role="assistant", content=TextContent(text=f"echo: {question}"), model="test-model"
        )

    c = Client("interop", "1.0", roots=[tmp_path], request_timeout=20, protocol=request.param)
    c.on_sampling(sample)
    c.on_elicitation(lambda params: ElicitResult(action="accept", content={"name": "Ada"}))
    c.connect(StdioTransport(sdk_server_cmd[0], sdk_server_cmd[1:]))
    c.sampled = answered
    c.asked_for = request.param
    yield c
    c.close()


def test_both_eras_are_negotiated(client):
    assert client.server_info.name == "sdk-fixture"
    assert client.instructions.startswith("A fixture server")
    expected = "2025-11-25" if client.era == "handshake" else "2026-07-28"
    assert client.protocol_version == expected
    assert client.era == ("handshake" if client.asked_for == "handshake" else "stateless")


def test_tools_structured_output_and_errors(client):
    tools = {tool.name: tool for tool in client.list_tools()}
    assert {"add", "weather", "fail", "slow", "ask_llm", "ask_name", "list_roots"} <= set(tools)
    assert tools["weather"].output_schema["properties"]["temperature"]["type"] == "number"
    assert client.call_tool("add", {"a": 2, "b": 40}, validate=True).structured_content == {
        "result": 42
    }
    weather = client.call_tool("weather", {"city": "Oslo"}, validate=True)
    assert weather.structured_content["city"] == "Oslo"
    failed = client.call_tool("fail", {"message": "nope"})
    assert failed.is_error and "fail" in failed.text


def test_progress_and_logs(client):
    logs, progress = [], []
    client.on_log(logs.append)
    if client.era == "stateless":
        client.set_logging_level("info")  # 2026: no level in _meta, no log messages
    result = client.call_tool("slow", {"steps": 3}, on_progress=progress.append)
    assert result.text == "done after 3 steps"
    wait_until(lambda: len(progress) == 3 and len(logs) >= 3)
    assert [p.progress for p in progress] == [1, 2, 3]
    assert progress[-1].message == "step 3"
    assert [m.data for m in logs][:3] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]


def test_sampling_elicitation_and_roots_requests(client, tmp_path):
    assert client.call_tool("ask_llm", {"question": "2+2?"}).text == "echo: 2+2?"
    assert client.sampled[0].max_tokens == 50
    assert client.call_tool("ask_name").text == "hello Ada, age 30"  # age: the schema's default
    roots = client.call_tool("list_roots").structured_content["result"]
    assert roots == [tmp_path.resolve().as_uri()]


def test_resources_templates_prompts_and_completion(client):
    assert [r.uri for r in client.list_resources()] == ["config://app"]
    assert client.read_resource("config://app").contents[0].text == '{"debug": true}'
    assert client.list_resource_templates()[0].uri_template == "greeting://{name}"
    assert client.read_resource("greeting://Bob").contents[0].text == "Hello, Bob!"
    prompt = client.get_prompt("review", {"code": "x = 1", "language": "perl"})
    assert "perl code" in prompt.messages[0].content.text
    assert client.list_prompts()[0].name == "review"
    values = client.complete(PromptReference(name="review"), "language", "p").completion.values
    assert values == ["python", "perl", "php"]
    names = client.complete(ResourceTemplateReference(uri="greeting://{name}"), "name", "a")
    assert names.completion.values == ["alice"]


def test_connect_one_liner(sdk_server_cmd):
    with mcp_sync.connect(sdk_server_cmd) as client:
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}
    assert client.state == "closed"
