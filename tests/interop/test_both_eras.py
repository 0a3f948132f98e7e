"""One script, unchanged, against servers of both protocol eras over stdio and HTTP.

The 2026-07-28 servers (the official SDK 2.x, fastmcp 4.x, mcp-server-time) are negotiated
through `server/discover`; server-everything (TypeScript SDK 1.x) proves the fallback to the
handshake.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mcp_sync
from tests.helpers.support import NODE, PEERS, SERVERS, HttpServer, free_port, needs_fastmcp

EVERYTHING = str(PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")


def one_script(
    target: str | list[str], tool: str, arguments: dict, expected: str, **options
) -> mcp_sync.Client:
    """What a user writes: connect, look around, call a tool, close."""
    with mcp_sync.connect(target, request_timeout=30, **options) as client:
        names = [t.name for t in client.list_tools()]
        assert tool in names
        if client.server_capabilities.prompts is not None:
            client.list_prompts()
        if client.server_capabilities.resources is not None:
            client.list_resources()
        result = client.call_tool(tool, arguments)
        assert not result.is_error, result.text
        assert expected in (result.text or str(result.structured_content))
        client.ping()
    return client


def sdk_stdio() -> list[str]:
    return [sys.executable, str(SERVERS / "sdk_server.py"), "stdio"]


def fastmcp_stdio() -> list[str]:
    return [sys.executable, str(SERVERS / "fastmcp_server.py"), "stdio"]


@pytest.mark.parametrize(
    ("target", "era"),
    [
        (sdk_stdio, "stateless"),
        pytest.param(fastmcp_stdio, "stateless", marks=needs_fastmcp),
        (lambda: [str(Path(sys.executable).parent / "mcp-server-time")], "stateless"),
        (lambda: [str(NODE), EVERYTHING, "stdio"], "handshake"),
    ],
    ids=["sdk", "fastmcp", "time", "everything"],
)
def test_stdio_servers_of_both_eras(target, era):
    argv = target()
    tool, arguments, expected = {
        "sdk_server.py": ("add", {"a": 20, "b": 22}, "42"),
        "fastmcp_server.py": ("add", {"a": 20, "b": 22}, "42"),
        "index.js": ("echo", {"message": "both eras"}, "both eras"),
    }.get(
        Path(argv[1]).name if len(argv) > 1 else "",
        ("get_current_time", {"timezone": "UTC"}, "UTC"),
    )
    client = one_script(argv, tool, arguments, expected)
    assert client.era == era


@needs_fastmcp
def test_legacy_can_be_forced_on_a_dual_era_server():
    client = one_script(fastmcp_stdio(), "add", {"a": 1, "b": 2}, "3", protocol="handshake")
    assert client.protocol_version == "2025-11-25"


@pytest.mark.parametrize("protocol", ["auto", "handshake"])
def test_sdk_server_over_streamable_http(protocol):
    port = free_port()
    with HttpServer(
        [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)], port
    ) as server:
        client = one_script(server.url(), "add", {"a": 2, "b": 3}, "5", protocol=protocol)
        assert client.era == ("stateless" if protocol == "auto" else "handshake")


@needs_fastmcp
def test_fastmcp_over_http_pages_through_every_list():
    port = free_port()
    argv = [sys.executable, str(SERVERS / "fastmcp_server.py"), "http", str(port)]
    with HttpServer(argv, port) as server, mcp_sync.connect(server.url()) as client:
        assert client.era == "stateless"
        first = client.list_tools_page()
        assert len(first.tools) == 2 and first.next_cursor
        assert [t.name for t in client.list_tools()] == [
            "add",
            "multiply",
            "shout",
            "chatty",
            "fail",
        ]
        assert len(client.list_resources()) == 5
        assert len(client.list_prompts()) == 3
        progress = []
        assert (
            client.call_tool("chatty", {"steps": 3}, on_progress=progress.append).text
            == "chatted 3 times"
        )


def test_server_everything_over_http_falls_back_to_the_handshake():
    port = free_port()
    with HttpServer(
        [str(NODE), EVERYTHING, "streamableHttp"], port, env={"PORT": str(port)}
    ) as server:
        client = one_script(server.url(), "echo", {"message": "hi"}, "hi")
        assert client.era == "handshake"


def test_server_everything_legacy_sse_endpoint_via_connect():
    port = free_port()
    with HttpServer([str(NODE), EVERYTHING, "sse"], port, env={"PORT": str(port)}) as server:
        client = one_script(server.url("/sse"), "echo", {"message": "old"}, "old")
        assert client.era == "handshake"
