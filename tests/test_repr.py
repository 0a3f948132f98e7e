"""Readable tools, prompts, resources and results in Jupyter (HTML / Markdown)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync._presentation.repr import html_for, register_ipython
from mcp_sync.types import CallToolResult

SDK = [sys.executable, str(Path(__file__).parent / "servers" / "sdk_server.py")]


@pytest.fixture(scope="module")
def listed():
    with mcp_sync.connect(SDK, request_timeout=20) as client:
        yield {
            "tools": client.list_tools(),
            "prompts": client.list_prompts(),
            "resources": client.list_resources(),
            "templates": client.list_resource_templates(),
            "weather": client.call_tool("weather", {"city": "Paris"}),
            "fail": client.call_tool("fail", {"message": "<b>boom</b>"}),
            "prompt": client.get_prompt("review", {"code": "<b>x</b> < 1"}),
            "read": client.read_resource("config://app"),
        }


def test_tool_table_shows_names_descriptions_and_parameters(listed):
    page = html_for(listed["tools"])
    assert f"<caption>{len(listed['tools'])} tools</caption>" in page
    assert "<td><code>add</code></td><td>Add two integers.</td>" in page
    assert "<code>a</code>: <i>integer</i> <b>(required)</b>" in page
    one = listed["tools"][0]
    assert one._repr_html_().count("<tr>") == 2  # header + the tool
    md = one._repr_markdown_()
    assert md.splitlines()[0] == "| tool | description | parameters |"
    assert "`a`*: integer" in md


def test_results_prompts_and_resources_render(listed):
    weather = listed["weather"]._repr_html_()
    assert "structured content" in weather and "&quot;city&quot;: &quot;Paris&quot;" in weather
    failed = listed["fail"]._repr_html_()
    assert "<b>Tool error</b></p><pre>Error executing tool fail</pre>" in failed
    assert "<code>review</code>" in listed["prompts"][0]._repr_html_()
    prompt = listed["prompt"]._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt; &lt; 1" in prompt and "<b>x</b>" not in prompt  # escaped
    assert "<code>config://app</code>" in html_for(listed["resources"])
    assert "greeting://{name}" in listed["templates"][0]._repr_markdown_()
    assert "{&quot;debug&quot;: true}" in listed["read"]._repr_html_()


def test_images_are_inline():
    result = CallToolResult.from_wire(
        {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
    )
    assert '<img src="data:image/png;base64,iVBORw0KGgo="' in result._repr_html_()
    assert "![image](data:image/png;base64,iVBORw0KGgo=)" in result._repr_markdown_()


def test_ipython_renders_plain_lists_as_tables(listed):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert register_ipython(shell)
        data, _ = shell.display_formatter.format(listed["tools"])
        assert f"<caption>{len(listed['tools'])} tools</caption>" in data["text/html"]
        data, _ = shell.display_formatter.format([1, 2])  # other lists: IPython's default
        assert "text/html" not in data and data["text/plain"] == "[1, 2]"
        data, _ = shell.display_formatter.format(listed["weather"])
        assert "structured content" in data["text/html"]
    finally:
        InteractiveShell.clear_instance()


def test_tool_parameters_summarise_a_tool_for_people(listed):
    tools = {tool.name: tool for tool in listed["tools"]}
    assert mcp_sync.tool_parameters(tools["add"]) == [
        mcp_sync.ToolParameter("a", "integer", True, "A"),
        mcp_sync.ToolParameter("b", "integer", True, "B"),
    ]
    [message] = mcp_sync.tool_parameters(tools["fail"].input_schema)  # a schema works too
    assert (message.name, message.type, message.required) == ("message", "string", False)
    schema = {
        "type": "object",
        "required": ["when"],
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels"},
            "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert [
        (p.name, p.type, p.required, p.description) for p in mcp_sync.tool_parameters(schema)
    ] == [("when", "string | null", True, ""), ("tags", "array of string", False, "Labels")]
