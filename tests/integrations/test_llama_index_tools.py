"""MCP tools as LlamaIndex tools, driven through LlamaIndex's own tool-calling paths with its
MockFunctionCallingLLM scripted to emit tool calls (predict_and_call, sync; FunctionAgent,
async, calling tools through acall), against real servers."""

from __future__ import annotations

import asyncio
import threading

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import (
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms.mock import MockFunctionCallingLLM

import mcp_sync
from mcp_sync.integrations.llama_index import llama_index_tools
from mcp_sync.llm import tool_input_schema
from mcp_sync.types import CallToolResult
from tests.helpers.integration_servers import SDK_SERVER

pytestmark = [
    pytest.mark.timeout(60),
    # llama-index's own inspection of pydantic models (not ours)
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning"),
]


def scripted_llm(*tool_call_turns, final="done"):
    """LlamaIndex's mock function-calling LLM answering from a script: each turn a list of
    (tool name, arguments), then a final text answer; it records the tools it was offered."""
    turns = iter(tool_call_turns)
    offered = []

    def respond(messages, **kwargs):
        offered.append([t.metadata.to_openai_tool() for t in kwargs.get("tools") or []])
        turn = next(turns, None)
        if turn is None:
            return ChatMessage(role=MessageRole.ASSISTANT, content=final)
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            blocks=[
                ToolCallBlock(tool_call_id=f"call-{i}", tool_name=name, tool_kwargs=args)
                for i, (name, args) in enumerate(turn)
            ],
        )

    return MockFunctionCallingLLM(response_generator=respond), offered


def test_predict_and_call_with_text_image_and_structured_results(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        mcp_tools = {t.name: t for t in client.list_tools()}
        tools = llama_index_tools(client)
        llm, offered = scripted_llm(
            [
                ("get-sum", {"a": 2, "b": 3}),
                ("get-tiny-image", {}),
                ("get-structured-content", {"location": "Chicago"}),
            ]
        )
        response = llm.predict_and_call(tools, "use them", allow_parallel_tool_calls=True)
    # the schema the LLM is given is the server's, as LLM APIs take it (no "$schema")
    for sent in offered[0]:
        function = sent["function"]
        assert function["parameters"] == tool_input_schema(mcp_tools[function["name"]])
        assert function["description"] == mcp_tools[function["name"]].description
    total, image, weather = response.sources
    assert total.content == "The sum of 2 and 3 is 5." and not total.is_error
    assert total.raw_input == {"args": (), "kwargs": {"a": 2, "b": 3}}
    assert isinstance(total.raw_output, CallToolResult)
    (picture,) = [b for b in image.blocks if isinstance(b, ImageBlock)]
    assert (
        picture.image_mimetype == "image/png"
        and picture.resolve_image().read(8) == b"\x89PNG\r\n\x1a\n"
    )
    assert weather.raw_output.structured_content["temperature"] is not None
    assert all(isinstance(b, TextBlock) for b in weather.blocks)


def test_function_agent_calls_tools_off_the_event_loop_and_sees_errors():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = llama_index_tools(client, names=["add", "fail"])
        llm, _ = scripted_llm(
            [("add", {"a": 40, "b": 2}), ("fail", {"message": "no"})], final="42, and fail failed"
        )
        threads = []
        original = client.call_tool

        def spy(*args, **kwargs):
            threads.append(threading.current_thread())
            return original(*args, **kwargs)

        client.call_tool = spy
        agent = FunctionAgent(tools=tools, llm=llm)

        async def main():
            loop_thread = threading.current_thread()
            handler = agent.run("add, then fail")
            outputs = []
            async for event in handler.stream_events():
                if type(event).__name__ == "ToolCallResult":
                    outputs.append(event.tool_output)
            return loop_thread, outputs, await handler

        loop_thread, outputs, answer = asyncio.run(main())
    assert str(answer) == "42, and fail failed"
    by_tool = {o.tool_name: o for o in outputs}
    assert by_tool["add"].raw_output.structured_content == {"result": 42}
    assert not by_tool["add"].is_error
    assert by_tool["fail"].is_error and "fail" in by_tool["fail"].content
    assert len(threads) == 2 and loop_thread not in threads


def test_a_tool_error_is_is_error_on_a_direct_call():
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        (fail,) = llama_index_tools(client, names=["fail"])
        output = fail.call(message="boom")
    assert output.is_error and output.tool_name == "fail"
    assert output.raw_output.is_error
