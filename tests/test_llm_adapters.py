"""Tools and results in the OpenAI and Anthropic shapes (plain dicts)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.llm import (
    anthropic_tool_result,
    anthropic_tools,
    llm_tool_names,
    openai_tool_message,
    openai_tools,
    sanitize_tool_name,
    unique_names,
)
from mcp_sync.types import CallToolResult, Tool

TIME = str(Path(sys.executable).parent / "mcp-server-time")


@pytest.fixture(scope="module")
def time_tools() -> list[Tool]:
    with mcp_sync.connect([TIME], request_timeout=20) as client:
        return client.list_tools()


def test_real_tools_in_both_shapes(time_tools):
    tool = next(t for t in time_tools if t.name == "get_current_time")
    assert tool.to_openai() == {
        "type": "function",
        "function": {
            "name": "get_current_time",
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }
    assert tool.to_openai(style="responses") == {
        "type": "function",
        "name": "get_current_time",
        "description": tool.description,
        "parameters": tool.input_schema,
    }
    assert tool.to_anthropic() == {
        "name": "get_current_time",
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    assert [t["function"]["name"] for t in openai_tools(time_tools)] == [t.name for t in time_tools]
    assert [t["name"] for t in anthropic_tools(time_tools)] == [t.name for t in time_tools]


def test_names_are_sanitised_and_made_unique():
    assert sanitize_tool_name("files/read.text") == "files_read_text"
    assert sanitize_tool_name("é" * 3) == "___"
    assert sanitize_tool_name("") == "tool"
    assert len(sanitize_tool_name("x" * 100)) == 64
    names = unique_names(["a.b", "a_b", "a/b", "a_b_2", "ok-name", "y" * 70, "y" * 64])
    assert names == ["a_b", "a_b_3", "a_b_4", "a_b_2", "ok-name", "y" * 64, "y" * 62 + "_2"]
    assert all(len(n) <= 64 for n in names) and len(set(names)) == len(names)
    tools = [Tool(name="search.web"), Tool(name="search_web")]
    assert llm_tool_names(tools) == ["search_web", "search_web_2"]
    assert [t["name"] for t in anthropic_tools(tools)] == ["search_web", "search_web_2"]


def test_schemas_always_have_object_type_and_properties():
    bare = Tool.from_wire({"name": "t", "inputSchema": {"type": "object"}})
    assert bare.to_openai()["function"]["parameters"] == {"type": "object", "properties": {}}
    assert "description" not in bare.to_anthropic()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/Q"}},
        "$defs": {"Q": {"type": "string"}},
    }
    tool = Tool.from_wire({"name": "t", "title": "Search", "inputSchema": schema})
    params = tool.to_anthropic()["input_schema"]
    assert params == {
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/Q"}},
        "$defs": {"Q": {"type": "string"}},
    }  # $ref kept, $schema dropped
    assert tool.to_anthropic()["description"] == "Search"
    params["properties"]["x"] = {}
    assert "x" not in tool.input_schema["properties"]  # a copy


PNG = base64.b64encode(b"\x89PNG fake").decode()


def test_results_for_the_next_request():
    result = CallToolResult.from_wire(
        {
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ]
        }
    )
    assert anthropic_tool_result("toolu_1", result) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    }
    assert openai_tool_message("call_1", result) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "hello\n[image: image/png, 9 bytes]",
    }
    failed = CallToolResult.from_wire(
        {"content": [{"type": "text", "text": "no such city"}], "isError": True}
    )
    assert anthropic_tool_result("t", failed)["is_error"] is True
    assert openai_tool_message("c", failed)["content"] == "Error: no such city"
    big = CallToolResult.from_wire({"content": [{"type": "text", "text": "x" * 50_000}]})
    text = openai_tool_message("c", big, max_text_bytes=20 * 1024)["content"]
    assert "[... 29520 bytes omitted ...]" in text and len(text) < 21 * 1024


def test_the_agent_examples_run_their_loops_against_a_real_server():
    import runpy

    root = Path(__file__).resolve().parents[1] / "examples"
    openai_example = runpy.run_path(str(root / "agent_openai.py"))
    anthropic_example = runpy.run_path(str(root / "agent_anthropic.py"))
    seen: list[list[dict]] = []

    def recording(model):
        def call_model(messages, tools):
            seen.append(tools)
            return model(messages, tools)

        return call_model

    with mcp_sync.connect([TIME], request_timeout=20) as client:
        answer = openai_example["run_agent"](
            client, "time in Paris?", recording(openai_example["scripted_model"])
        )
        assert answer.startswith("In Paris it is 20")
        answer = anthropic_example["run_agent"](
            client, "noon UTC in Tokyo?", recording(anthropic_example["scripted_model"])
        )
        assert '"datetime": "20' in answer and "Asia/Tokyo" in answer
    assert seen[0][0]["type"] == "function" and "input_schema" in seen[-1][0]
