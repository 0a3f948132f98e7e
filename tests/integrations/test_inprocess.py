"""connect(server_object): the official SDK's MCPServer and fastmcp's FastMCP served in this
process, on a background event loop, through the in-memory transport pair."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading

import pytest
from mcp.server.mcpserver import MCPServer

import mcp_sync
from mcp_sync import ConnectionClosed, McpError
from mcp_sync.integrations.inprocess import InProcessTransport
from tests.helpers.integration_servers import load_server, needs_py311
from tests.helpers.support import wait_until

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def sdk_inprocess(mcp_client_module):
    """One client of tests/servers/sdk_server.py's MCPServer, served in this process and shared
    by this module's tests. (Session scope is tested in a pytest run of its own, in
    tests/test_pytest_plugin.py: a client alive for this whole suite would fail the suite's
    checks that no client thread is left.)"""
    return mcp_client_module(load_server("sdk_server.py").server, request_timeout=20)


def connection_threads() -> list[threading.Thread]:
    """The threads an in-process connection may start: ours, and anyio's worker threads."""
    return [
        t
        for t in threading.enumerate()
        if t.name.startswith("mcp-sync-") or t.name == "AnyIO worker thread"
    ]


def test_module_scoped_client_of_an_sdk_server(sdk_inprocess):
    client = sdk_inprocess
    assert client.server_info.name == "sdk-fixture"
    assert {"add", "weather", "slow", "ask_llm"} <= {t.name for t in client.list_tools()}
    assert client.call_tool("add", {"a": 2, "b": 40}).structured_content == {"result": 42}
    weather = client.call_tool("weather", {"city": "Oslo"})
    assert weather.structured_content == {
        "city": "Oslo",
        "temperature": 21.5,
        "conditions": "sunny",
    }
    failed = client.call_tool("fail", {"message": "nope"})
    assert failed.is_error and "fail" in failed.text
    assert client.read_resource("greeting://ada").contents[0].text == "Hello, ada!"
    assert (
        "rust"
        in client.get_prompt("review", {"code": "x", "language": "rust"}).messages[0].content.text
    )


def test_the_module_client_is_shared(sdk_inprocess, request):
    assert request.getfixturevalue("sdk_inprocess") is sdk_inprocess
    assert sdk_inprocess.state == "connected"


def test_progress_and_many_threads_at_once(sdk_inprocess):
    seen = []
    result = sdk_inprocess.call_tool(
        "slow", {"steps": 3}, on_progress=lambda p: seen.append(p.progress)
    )
    assert result.text == "done after 3 steps" and seen == [1, 2, 3]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        sums = list(
            pool.map(
                lambda n: sdk_inprocess.call_tool("add", {"a": n, "b": n}).structured_content,
                range(40),
            )
        )
    assert sums == [{"result": 2 * n} for n in range(40)]


@pytest.mark.parametrize("protocol", ["handshake", "auto"])
def test_server_requests_reach_the_client(protocol):
    """Sampling and roots: mid-call server requests (handshake era) or input_required (2026)."""
    client = mcp_sync.Client(
        roots=[mcp_sync.types.Root(uri="file:///work", name="work")], protocol=protocol
    )
    client.on_sampling(
        lambda params: {
            "role": "assistant",
            "model": "scripted",
            "content": {"type": "text", "text": "forty-two"},
        }
    )
    with client.connect(InProcessTransport(load_server("sdk_server.py").server)):
        assert client.era == ("handshake" if protocol == "handshake" else "stateless")
        assert client.call_tool("ask_llm", {"question": "the answer?"}).text == "forty-two"
        assert client.call_tool("list_roots", {}).structured_content == {"result": ["file:///work"]}


def test_close_leaves_no_thread_and_fails_later_calls():
    before = set(connection_threads())
    client = mcp_sync.connect(load_server("sdk_server.py").server)
    assert [t for t in connection_threads() if t not in before]  # the server's loop thread
    client.call_tool("add", {"a": 1, "b": 1})
    client.close()
    assert [t for t in connection_threads() if t not in before] == []
    with pytest.raises(McpError):
        client.call_tool("add", {"a": 1, "b": 1})


@needs_py311
def test_fastmcp_server_with_pagination_and_sync_tools():
    before = set(connection_threads())
    server = load_server("fastmcp_server.py").mcp  # pages every list two items at a time
    with mcp_sync.connect(server) as client:
        assert client.server_info.name == "fastmcp-fixture"
        names = [t.name for t in client.list_tools()]
        assert {"add", "multiply", "shout"} <= set(names) and len(names) > 2
        assert client.call_tool("shout", {"text": "hi"}).text == "HI"  # a sync tool: anyio thread
    assert [t for t in connection_threads() if t not in before] == []


def test_a_server_that_fails_to_start_is_named(monkeypatch):
    @contextlib.asynccontextmanager
    async def broken(server):
        raise RuntimeError("database unreachable")
        yield

    # An exception escaping any thread (the memory transport's shutdown raced its start and
    # raised "cannot join thread before it is started" in the server thread) is recorded.
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    server = MCPServer("broken-server", lifespan=broken)
    before = set(connection_threads())
    for _ in range(10):  # the race showed in about half the starts
        with pytest.raises(McpError) as caught:
            mcp_sync.connect(server, timeout=10)
        message = str(caught.value)
        assert "broken-server" in message
        # the cause is in the message itself, once (it was left out, or said twice)
        assert message.count("database unreachable") == 1, message
    assert escaped == []
    assert [t for t in connection_threads() if t not in before] == []


def test_a_crashing_server_ends_the_connection_not_the_caller():
    server = MCPServer("crashing")

    @server.tool()
    def crash() -> str:
        raise KeyboardInterrupt  # escapes the SDK's per-request handling: the server task dies

    client = mcp_sync.connect(server, request_timeout=10)
    with pytest.raises(ConnectionClosed):
        client.call_tool("crash", {})
    wait_until(lambda: client.state == "closed")
    client.close()


def test_not_a_server_object():
    with pytest.raises(TypeError, match="not an MCP server object: int"):
        mcp_sync.connect(42)
