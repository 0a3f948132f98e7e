"""MCP tools as a pydantic-ai toolset, run by pydantic-ai's own agent loop (Agent.run_sync)
with its FunctionModel scripting the tool calls (no network), against real servers:
server-everything and the official SDK's servers (tests/servers/: sdk_server.py,
apps_server.py, rug_pull_server.py)."""

from __future__ import annotations

import sys
import threading

import pytest

if sys.version_info < (3, 11):
    pytest.skip("pydantic-ai needs Python >= 3.11", allow_module_level=True)

from pydantic_ai import Agent, BinaryContent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

import mcp_sync
from mcp_sync import StdioTransport
from mcp_sync.integrations.pydantic_ai import pydantic_ai_toolset
from tests.helpers.integration_servers import APPS_SERVER, SDK_SERVER
from tests.helpers.support import PYTHON, SERVERS

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::mcp_sync.HiddenCharactersWarning"),
]


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


def test_a_timeout_or_a_lost_server_is_a_retry_and_never_escapes_run_sync():
    calls = []

    def count_calls(call, call_next):
        calls.append(call.name)
        return call_next(call)

    with mcp_sync.connect(APPS_SERVER, request_timeout=30) as client:
        toolset = pydantic_ai_toolset(
            client, names=["stall"], prefix="apps_", timeout=1, interceptors=[count_calls]
        )
        model, offered = scripted([("apps_stall", {"seconds": 30})], "too slow")
        slow = Agent(model, toolsets=[toolset]).run_sync("wait")
        client.close()  # the server is gone when the model calls again
        model, _offered = scripted([("apps_stall", {"seconds": 0})], "it is gone")
        lost = Agent(model, toolsets=[toolset]).run_sync("again")
    assert list(offered[0]) == ["apps_stall"]
    assert slow.output == "too slow" and lost.output == "it is gone"
    (timed_out,) = parts(slow, ToolReturnPart)
    (closed,) = parts(lost, ToolReturnPart)
    assert timed_out.outcome == closed.outcome == "retried"
    assert timed_out.content.startswith("RequestTimeout")
    assert closed.content.startswith("ConnectionClosed")
    assert calls == ["stall", "stall"]


def test_the_tools_are_listed_again_after_the_server_says_they_changed(tmp_path):
    transport = StdioTransport(PYTHON, [str(SERVERS / "rug_pull_server.py"), str(tmp_path / "s")])
    with mcp_sync.Client(protocol="handshake").connect(transport) as client:
        changed = threading.Event()

        def handled(call, call_next):
            # the notification is handled on the client's dispatcher thread, in arrival
            # order: once a listener added after the toolset's has run, the toolset's has
            result = call_next(call)
            if call.name == "rug_pull":
                assert changed.wait(30), "no tools/list_changed"
            return result

        toolset = pydantic_ai_toolset(client, interceptors=[handled])
        client.on_list_changed("tools", changed.set)
        model, offered = scripted([("rug_pull", {})], [("exfiltrate", {"path": "/x"})], "done")
        result = Agent(model, toolsets=[toolset]).run_sync("pull the rug")
    assert "exfiltrate" not in offered[0] and "farewell" in offered[0]
    assert "exfiltrate" in offered[1] and "farewell" not in offered[1]
    _pulled, read = parts(result, ToolReturnPart)
    assert read.content == {"result": "would read /x"}


def test_progress_resources_and_prompts_in_pydantic_ais_terms():
    seen = []
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        toolset = pydantic_ai_toolset(
            client, names=["steps"], on_progress=lambda call, p: seen.append((call.name, p))
        )
        model, _offered = scripted([("steps", {"count": 2})], "done")
        Agent(model, toolsets=[toolset]).run_sync("step")
        readme = toolset.read_resource("notes://readme")
        dot = toolset.read_resource("images://dot")
        history = toolset.get_prompt("review", {"code": "x = 1"})
        model, _offered = scripted("reviewed")
        reviewed = Agent(model, toolsets=[toolset]).run_sync("go on", message_history=history)
    assert [(name, p.progress, p.total) for name, p in seen] == [("steps", 1, 2), ("steps", 2, 2)]
    assert readme == "# Notes\nhello"
    assert isinstance(dot, BinaryContent) and dot.media_type == "image/png"
    user, assistant = history
    assert user.parts[0].content == "Review this python: x = 1"
    assert assistant.parts[0].content == "Looking at it now."
    assert reviewed.output == "reviewed"
