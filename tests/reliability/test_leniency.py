"""Lenient where real servers are sloppy, strict where it matters, and test doubles that fail
like the real thing.

The sloppy server here is ``mcp_sync.testing.MockServer`` (scripted: the real servers we test
against send a ``name`` with every resource and real booleans, so they cannot show these).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, ProtocolError
from mcp_sync.llm import anthropic_tools, openai_tools, tool_input_schema
from mcp_sync.testing import MockServer
from mcp_sync.transports.memory import in_memory_transport_pair
from mcp_sync.types import Tool

pytestmark = pytest.mark.timeout(30)

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _client(server: MockServer, **kwargs: object) -> Client:
    return server.connect(Client("lenient", "1", protocol="handshake", **kwargs))  # type: ignore[arg-type]


def test_a_resource_or_template_without_a_name_is_named_by_its_uri_and_the_rest_kept() -> None:
    server = MockServer(capabilities={"resources": {}})
    server.handle(
        "resources/list",
        lambda p, ctx: {
            "resources": [
                {"uri": "file:///no-name.txt", "mimeType": "text/plain"},
                {"uri": "file:///named.txt", "name": "named"},
            ]
        },
    )
    server.handle(
        "resources/templates/list",
        lambda p, ctx: {
            "resourceTemplates": [
                {"uriTemplate": "file:///logs/{day}"},
                {"uriTemplate": "file:///db/{table}", "name": "table"},
            ]
        },
    )
    with _client(server) as client:
        resources = client.list_resources()
        assert [(r.name, r.uri) for r in resources] == [
            ("file:///no-name.txt", "file:///no-name.txt"),
            ("named", "file:///named.txt"),
        ]
        assert resources[0].mime_type == "text/plain"
        templates = client.list_resource_templates()
        assert [t.name for t in templates] == ["file:///logs/{day}", "table"]


def test_a_handler_returning_none_answers_an_empty_object_never_null() -> None:
    server = MockServer()
    client = Client("lenient", "1", protocol="handshake")
    client.on_sampling(lambda params: None)
    client.on_elicitation(lambda params: None)
    server.connect(client)
    try:
        sampling = {"messages": [], "maxTokens": 10}
        assert server.request("sampling/createMessage", sampling) == {}
        elicit = {"mode": "form", "message": "?", "requestedSchema": {"type": "object"}}
        assert server.request("elicitation/create", elicit) == {}
    finally:
        client.close()
        server.transport.close()


@pytest.mark.parametrize("value", ["yes", "true", 1, "1"], ids=["yes", "true", "one", "one-str"])
def test_protocol_booleans_are_strict(value: object) -> None:
    server = MockServer(capabilities={"tools": {}})
    server.handle("tools/call", lambda p, ctx: {"content": [], "isError": value})
    with _client(server) as client, pytest.raises(ProtocolError, match="isError"):
        client.call_tool("t", {})


def test_the_in_memory_transport_fails_like_a_real_one() -> None:
    client_side, server_side = in_memory_transport_pair()
    message = {"jsonrpc": "2.0", "method": "x"}
    with pytest.raises(ConnectionClosed, match="not started"):
        client_side.send(message)  # before start
    client_side.start()
    with pytest.raises(ConnectionClosed, match="peer 'server' is not started"):
        client_side.send(message)  # nothing reads the other end yet
    server_side.start()
    client_side.send(message)
    client_side.close()
    with pytest.raises(ConnectionClosed):
        client_side.send(message)
    with pytest.raises(RuntimeError, match="closed"):
        client_side.start()  # a transport starts once


def test_llm_tool_schemas_and_the_llm_docs_agree_about_dollar_schema() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/x"}},
        "$defs": {"x": {"type": "string"}},
    }
    tool = Tool(name="t", input_schema=schema)
    for converted in (
        tool_input_schema(tool),
        openai_tools([tool])[0]["function"]["parameters"],
        anthropic_tools([tool])[0]["input_schema"],
    ):
        assert "$schema" not in converted
        assert converted["properties"] == schema["properties"]  # the rest as written
        assert converted["$defs"] == schema["$defs"]
    docs = (DOCS / "llm.md").read_text()
    # the page says what the code does: $schema dropped, everything else passed on
    assert re.search(r"without `\$schema`", docs)
    assert "`$ref` included, is passed on as the server wrote it" in docs
