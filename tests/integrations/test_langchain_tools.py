"""MCP tools as LangChain tools, driven through LangChain's tool-calling path (bind_tools, a
chat model that emits tool calls, tool.invoke / tool.ainvoke of each ToolCall) with a scripted
chat model, against real servers: server-everything and the official SDK's server."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from tests.helpers.integration_servers import SDK_SERVER

if sys.version_info < (3, 11):
    pytest.skip("langchain-core needs Python >= 3.11", allow_module_level=True)

pytestmark = pytest.mark.timeout(60)


from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from pydantic import Field  # noqa: E402

import mcp_sync  # noqa: E402
from mcp_sync.integrations.langchain import langchain_tools  # noqa: E402
from mcp_sync.types import CallToolResult  # noqa: E402


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, answering from a script; bind_tools records the tool
    definitions the model would be sent."""

    bound: list = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        self.bound = [convert_to_openai_tool(tool) for tool in tools]
        return self


def script(*turns):
    return ScriptedChatModel(messages=iter(turns))


def call(name, args, call_id):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def run_agent(model, tools, question):
    """The tool-calling loop of LangChain's docs: invoke the model, run each tool call."""
    by_name = {tool.name: tool for tool in tools}
    bound = model.bind_tools(tools)
    messages = [HumanMessage(question)]
    while True:
        reply = bound.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        messages += [by_name[c["name"]].invoke(c) for c in reply.tool_calls]


async def run_agent_async(model, tools, question):
    by_name = {tool.name: tool for tool in tools}
    bound = model.bind_tools(tools)
    messages = [HumanMessage(question)]
    while True:
        reply = await bound.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        messages += await asyncio.gather(*(by_name[c["name"]].ainvoke(c) for c in reply.tool_calls))


def test_text_image_and_structured_results(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        mcp_tools = client.list_tools()
        tools = langchain_tools(client)
        model = script(
            AIMessage(
                "",
                tool_calls=[
                    call("get-sum", {"a": 2, "b": 3}, "c1"),
                    call("get-tiny-image", {}, "c2"),
                    call("get-structured-content", {"location": "Chicago"}, "c3"),
                ],
            ),
            AIMessage("all done"),
        )
        messages = run_agent(model, tools, "do things")
    # names, descriptions and argument schemas reach the model as the server gave them
    assert [t["function"]["name"] for t in model.bound] == [t.name for t in mcp_tools]
    by_name = {t.name: t for t in mcp_tools}
    for sent in model.bound:
        mcp_tool = by_name[sent["function"]["name"]]
        assert sent["function"]["description"] == mcp_tool.description
        assert sent["function"]["parameters"]["properties"] == mcp_tool.input_schema.get(
            "properties", {}
        )
    total, image, weather = [m for m in messages if isinstance(m, ToolMessage)]
    assert total.tool_call_id == "c1" and total.status == "success"
    assert total.content == [{"type": "text", "text": "The sum of 2 and 3 is 5."}]
    assert isinstance(total.artifact, CallToolResult)
    (picture,) = [b for b in image.content if b["type"] == "image"]
    assert picture["mime_type"] == "image/png" and len(picture["base64"]) > 100
    assert weather.artifact.structured_content["temperature"] is not None
    assert messages[-1].content == "all done"


def test_a_tool_error_is_an_error_tool_message():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = langchain_tools(client, names=["fail", "add"])
        messages = run_agent(
            script(
                AIMessage("", tool_calls=[call("fail", {"message": "no"}, "x")]), AIMessage("sorry")
            ),
            tools,
            "try",
        )
    (failed,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert failed.status == "error" and "fail" in failed.content
    assert [t.name for t in tools] == ["add", "fail"]


def test_ainvoke_runs_on_langchains_executor_not_the_event_loop():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        (add,) = langchain_tools(client, names=["add"])
        loop_thread = []
        calls = [call("add", {"a": n, "b": 1}, f"c{n}") for n in range(4)]

        async def main():
            loop_thread.append(threading.current_thread())
            return await run_agent_async(
                script(AIMessage("", tool_calls=calls), AIMessage("ok")), [add], "add"
            )

        seen_threads = []
        original = client.call_tool

        def spy(*args, **kwargs):
            seen_threads.append(threading.current_thread())
            return original(*args, **kwargs)

        client.call_tool = spy
        messages = asyncio.run(main())
    results = [m.artifact.structured_content for m in messages if isinstance(m, ToolMessage)]
    assert results == [{"result": n + 1} for n in range(4)]
    assert seen_threads and loop_thread[0] not in seen_threads


def test_unknown_names_are_named():
    with (
        mcp_sync.connect(SDK_SERVER, request_timeout=20) as client,
        pytest.raises(KeyError, match="'nope'"),
    ):
        langchain_tools(client, names=["add", "nope"])
