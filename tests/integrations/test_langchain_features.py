"""What langchain-mcp-adapters offers, through LangChain's tool-calling loop (the scripted chat
model of test_langchain_tools) against real official-SDK servers (tests/servers/apps_server.py,
sdk_server.py): resources and prompts, callbacks, interceptors, errors the model sees, per-tool
options, metadata, MCP Apps visibility and SEP-2200."""

from __future__ import annotations

import asyncio
import json
import sys
import time

import pytest

from tests.helpers.integration_servers import APPS_SERVER, SDK_SERVER

if sys.version_info < (3, 11):
    pytest.skip("langchain-core needs Python >= 3.11", allow_module_level=True)

pytestmark = pytest.mark.timeout(60)

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

import mcp_sync  # noqa: E402
from mcp_sync import ClientGroup, StdioTransport  # noqa: E402
from mcp_sync.errors import ConnectionClosed, RequestTimeout  # noqa: E402
from mcp_sync.integrations.langchain import (  # noqa: E402
    McpElicitation,
    McpToolCallbacks,
    langchain_tools,
    load_mcp_blobs,
    load_mcp_documents,
    load_mcp_prompt,
)
from mcp_sync.types import ElicitResult  # noqa: E402
from tests.integrations.test_langchain_tools import call, run_agent, script  # noqa: E402


def tool_messages(messages):
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_app_only_tools_are_not_offered_to_the_model_unless_asked():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        model = script(AIMessage("nothing to do"))
        run_agent(model, langchain_tools(client), "hi")
        offered = [t["function"]["name"] for t in model.bound]
        everything = [t.name for t in langchain_tools(client, include_app_only=True)]
        with pytest.raises(KeyError, match="'refresh_view' .app-only"):
            langchain_tools(client, names=["refresh_view"])
    assert "refresh_view" not in offered and "quote" in offered  # ["model", "app"] is shown
    assert "refresh_view" in everything


def test_a_result_with_both_halves_sends_the_model_its_content_only():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        turns = [AIMessage("", tool_calls=[call("quote", {"symbol": "ACME"}, "q")]), AIMessage("")]
        (content,) = tool_messages(run_agent(script(*turns), langchain_tools(client), "price?"))
        turns = [AIMessage("", tool_calls=[call("quote", {"symbol": "ACME"}, "q")]), AIMessage("")]
        tools = langchain_tools(client, prefer="structured")
        (structured,) = tool_messages(run_agent(script(*turns), tools, "price?"))
    assert content.content == [{"type": "text", "text": "ACME trades at 99.0"}]
    assert len(content.artifact.structured_content["history"]) == 100  # code still has it all
    (block,) = structured.content
    assert json.loads(block["text"])["price"] == 99.0


def test_the_definitions_meta_is_kept_in_the_tools_metadata():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        tools = {t.name: t for t in langchain_tools(client)}
    assert tools["quote"].metadata["mcp_meta"]["team"] == "markets"
    assert tools["quote"].metadata["mcp_meta"]["ui"]["visibility"] == ["model", "app"]


def test_a_timeout_per_tool_is_an_error_tool_message_the_model_reacts_to():
    with mcp_sync.connect(APPS_SERVER, request_timeout=30) as client:
        tools = langchain_tools(client, timeout=1.0)
        model = script(
            AIMessage("", tool_calls=[call("stall", {"seconds": 30}, "s")]),
            AIMessage("the tool is slow today; try later"),
        )
        started = time.monotonic()
        messages = run_agent(model, tools, "go")
        elapsed = time.monotonic() - started
        (failed,) = tool_messages(messages)
        raising = langchain_tools(client, names=["stall"], timeout=1.0, on_error="raise")
        with pytest.raises(RequestTimeout):
            run_agent(script(AIMessage("", tool_calls=[call("stall", {"seconds": 30}, "s")])),
                      raising, "go")  # fmt: skip
    assert elapsed < 10  # the tool's 1 s, not the client's 30 s
    assert failed.status == "error" and "RequestTimeout" in failed.content
    assert messages[-1].content == "the tool is slow today; try later"


def test_a_closed_connection_is_an_error_tool_message():
    client = mcp_sync.connect(SDK_SERVER, request_timeout=20)
    tools = langchain_tools(client, names=["add"])
    listed = client.list_tools()
    client.close()
    model = script(AIMessage("", tool_calls=[call("add", {"a": 1, "b": 2}, "a")]), AIMessage("ok"))
    (failed,) = tool_messages(run_agent(model, tools, "add"))
    assert failed.status == "error" and "ConnectionClosed" in failed.content
    (raising,) = langchain_tools(client, tools=listed, names=["add"], on_error="raise")
    with pytest.raises(ConnectionClosed):
        raising.invoke(call("add", {"a": 1, "b": 2}, "a"))


def test_a_name_prefix_without_a_group():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = langchain_tools(client, names=["add"], prefix="calc_")
        model = script(AIMessage("", tool_calls=[call("calc_add", {"a": 4, "b": 5}, "a")]),
                       AIMessage("9"))  # fmt: skip
        (added,) = tool_messages(run_agent(model, tools, "add"))
    assert [t["function"]["name"] for t in model.bound] == ["calc_add"]
    assert added.artifact.structured_content == {"result": 9}


def test_interceptors_change_arguments_add_meta_retry_and_transform():
    seen = []

    def double_b(request, call_next):
        request.arguments = {**request.arguments, "b": request.arguments["b"] * 2}
        request.meta["trace"] = "t-1"
        return call_next(request)

    def retry_once(request, call_next):
        try:
            return call_next(request)
        except RequestTimeout:
            seen.append("retried")
            return call_next(request)

    def as_sentence(request, call_next):
        result = call_next(request)
        seen.append(request.meta)
        return f"{request.name} gave {result.structured_content['result']}"

    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = langchain_tools(
            client, names=["add"], interceptors=[as_sentence, retry_once, double_b]
        )
        model = script(AIMessage("", tool_calls=[call("add", {"a": 1, "b": 2}, "a")]),
                       AIMessage("5"))  # fmt: skip
        (added,) = tool_messages(run_agent(model, tools, "add"))
    assert added.content == "add gave 5" and added.status == "success"
    assert seen == [{"trace": "t-1"}]


def test_progress_and_logs_reach_langchain_callbacks_and_a_callbacks_object():
    events, reported = [], []

    class Handler(BaseCallbackHandler):
        def on_custom_event(self, name, data, *, run_id, **kwargs):
            events.append((name, data))

    class Reported(McpToolCallbacks):
        def on_progress(self, call, progress):
            reported.append(("progress", call.name, progress.progress))

        def on_log(self, call, message):
            reported.append(("log", call.name, message.data))

    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        client.set_logging_level("info")
        (steps,) = langchain_tools(client, names=["steps"], callbacks=Reported())
        message = steps.invoke(call("steps", {"count": 2}, "s"), config={"callbacks": [Handler()]})
    assert message.status == "success"
    progress = [data["progress"] for name, data in events if name == "mcp_progress"]
    logs = [data["data"] for name, data in events if name == "mcp_log"]
    assert progress == [1, 2] and logs == ["step 1 of 2", "step 2 of 2"]
    assert ("progress", "steps", 2) in reported and ("log", "steps", "step 2 of 2") in reported


def test_resources_as_blobs_and_documents_from_a_client_and_a_group():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        blobs = load_mcp_blobs(client)
        documents = load_mcp_documents(client, ["notes://readme"])
    by_uri = {blob.metadata["uri"]: blob for blob in blobs}
    assert by_uri["notes://readme"].as_string() == "# Notes\nhello"
    assert by_uri["notes://readme"].mimetype == "text/markdown"
    assert by_uri["images://dot"].as_bytes().startswith(b"\x89PNG")
    assert by_uri["images://dot"].mimetype == "image/png"
    assert str(by_uri["images://dot"].source) == "images://dot"
    (document,) = documents
    assert (
        document.page_content == "# Notes\nhello" and document.metadata["uri"] == "notes://readme"
    )
    with ClientGroup({"apps": APPS_SERVER, "sdk": SDK_SERVER}, request_timeout=20) as group:
        group.list_resources()
        grouped = {b.metadata["uri"]: b for b in load_mcp_blobs(group)}
    assert grouped["images://dot"].as_bytes() == by_uri["images://dot"].as_bytes()
    assert json.loads(grouped["config://app"].as_string()) == {"debug": True}


def test_a_prompt_as_langchain_messages_from_a_client_and_a_group():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        messages = load_mcp_prompt(client, "review", {"code": "x = 1", "language": "rust"})
    assert [type(m) for m in messages] == [HumanMessage, AIMessage]
    assert messages[0].content == "Review this rust: x = 1"
    assert messages[1].content == "Looking at it now."
    with ClientGroup({"apps": APPS_SERVER, "sdk": SDK_SERVER}, request_timeout=20) as group:
        group.list_prompts()
        (grouped,) = load_mcp_prompt(group, "sdk__review", {"code": "print(1)"})
    assert grouped.content == "Please review this python code:\nprint(1)"


def test_tools_across_a_group_call_their_server():
    with ClientGroup({"apps": APPS_SERVER, "sdk": SDK_SERVER}, request_timeout=20) as group:
        tools = langchain_tools(group, names=["sdk__add", "apps__quote"])
        model = script(
            AIMessage("", tool_calls=[call("sdk__add", {"a": 1, "b": 1}, "a"),
                                      call("apps__quote", {"symbol": "X"}, "q")]),
            AIMessage("done"),
        )  # fmt: skip
        added, quoted = tool_messages(run_agent(model, tools, "go"))
        assert "apps__refresh_view" not in [t.name for t in langchain_tools(group)]
    assert added.artifact.structured_content == {"result": 2}
    assert quoted.content == [{"type": "text", "text": "X trades at 99.0"}]


def test_ainvoke_reports_progress_and_hands_interceptors_the_tool_call_id():
    events, ids = [], []

    class Handler(BaseCallbackHandler):
        def on_custom_event(self, name, data, *, run_id, **kwargs):
            events.append(name)

    def note_id(request, call_next):
        ids.append(request.tool_call_id)
        return call_next(request)

    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        (steps,) = langchain_tools(client, names=["steps"], interceptors=[note_id])
        message = asyncio.run(
            steps.ainvoke(call("steps", {"count": 2}, "s-9"), config={"callbacks": [Handler()]})
        )
    assert message.status == "success" and message.tool_call_id == "s-9"
    assert ids == ["s-9"] and events.count("mcp_progress") == 2


def test_an_elicitation_during_a_call_reaches_the_tools_run_and_callbacks():
    events, reported = [], []

    class Handler(BaseCallbackHandler):
        def on_custom_event(self, name, data, *, run_id, **kwargs):
            events.append((name, data))

    class Reported(McpToolCallbacks):
        def on_elicitation(self, call, params):
            reported.append((call.name, params.message))

    elicit = McpElicitation(lambda params: ElicitResult(action="accept", content={"name": "Ada"}))
    client = mcp_sync.Client("langchain-test", "1.0", request_timeout=20)
    client.on_elicitation(elicit)
    client.connect(StdioTransport(SDK_SERVER[0], SDK_SERVER[1:]))
    with client:
        (ask,) = langchain_tools(client, names=["ask_name"], elicitation=elicit,
                                 callbacks=Reported())  # fmt: skip
        message = ask.invoke(call("ask_name", {}, "e"), config={"callbacks": [Handler()]})
    assert message.content == [{"type": "text", "text": "hello Ada, age 30"}]
    (data,) = [d for n, d in events if n == "mcp_elicitation"]
    assert data["tool"] == "ask_name" and data["message"] == "What is your name?"
    assert reported == [("ask_name", "What is your name?")]
