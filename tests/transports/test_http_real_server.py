"""The HTTP transports against the official Python SDK server (tests/servers/http_fixture_server.py).

Driven with raw JSON-RPC dicts: these test the transports, not the client.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_sync
from mcp_sync.errors import HttpError, SessionExpired
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.base import MessageOptions
from mcp_sync.transports.http import (
    ReconnectOptions,
    StreamableHttpTransport,
    fallback_to_sse,
)
from mcp_sync.transports.sse_legacy import SseTransport
from tests.helpers.http_faults import INIT, Inbox
from tests.helpers.support import client_threads, free_port, wait_listening

pytest.importorskip("mcp.server.mcpserver")
pytestmark = pytest.mark.timeout(30)

SERVER = Path(__file__).resolve().parent.parent / "servers" / "http_fixture_server.py"


def run_server(*args: str) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), args[0], str(port), *args[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        wait_listening(proc, port)
    except AssertionError as exc:
        proc.kill()
        proc.wait()
        pytest.fail(f"fixture server did not start: {exc}")
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def sse_server_port() -> Iterator[int]:
    yield from run_server("streamable-http")


@pytest.fixture(scope="module")
def json_server_port() -> Iterator[int]:
    yield from run_server("streamable-http", "--json")


@pytest.fixture(scope="module")
def legacy_server_port() -> Iterator[int]:
    yield from run_server("sse")


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    transports: list[Any] = []
    yield transports
    for transport in transports:
        transport.close()
    deadline = time.monotonic() + 2
    while client_threads(("mcp-sync-http", "mcp-sync-sse")) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not client_threads(("mcp-sync-http", "mcp-sync-sse"))


def handshake(transport: Any, inbox: Inbox) -> dict[str, Any]:
    transport.send(INIT)
    result: dict[str, Any] = inbox.response(1)["result"]
    # at the negotiated version, as the session sends it (the later messages go at it too)
    opens = MessageOptions(version=result["protocolVersion"], opens_session=True)
    transport.send(jsonrpc.notification("notifications/initialized"), options=opens)
    return result


def exercise(transport: Any, inbox: Inbox, *, logs_expected: bool = True) -> None:
    handshake(transport, inbox)
    transport.send(jsonrpc.request(2, "tools/list"))
    names = {tool["name"] for tool in inbox.response(2)["result"]["tools"]}
    assert {"add", "count", "echo"} <= names
    transport.send(jsonrpc.request(3, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    result = inbox.response(3)["result"]
    assert result["content"][0]["text"] == "5"
    transport.send(jsonrpc.request(4, "tools/call", {"name": "count", "arguments": {"steps": 3}}))
    assert inbox.response(4)["result"]["content"][0]["text"] == "counted 3"
    logs = [m for m in inbox.messages if m.get("method") == "notifications/message"]
    if not logs_expected:  # a JSON response has no room for them: the SDK drops them
        return
    assert [m["params"]["data"] for m in logs] == ["step 0", "step 1", "step 2"]
    # the log messages came before the answer, in order
    index = {id(m): i for i, m in enumerate(inbox.messages)}
    assert all(index[id(m)] < index[id(inbox.response(4))] for m in logs)


@pytest.mark.parametrize("mode", ["sse", "json"])
def test_streamable_http_against_the_sdk_server(
    mode: str, sse_server_port: int, json_server_port: int, opened: list[Any]
) -> None:
    port = sse_server_port if mode == "sse" else json_server_port
    url = f"http://127.0.0.1:{port}/mcp"
    transport = StreamableHttpTransport(url)
    opened.append(transport)
    inbox = Inbox(transport)
    transport.start()
    exercise(transport, inbox, logs_expected=mode == "sse")
    assert transport.session_id
    assert any(
        t.name == "mcp-sync-http-reader" for t in client_threads(("mcp-sync-http", "mcp-sync-sse"))
    )  # GET stream open
    # Concurrent calls, each on its own POST.
    for i in range(10, 30):
        transport.send(
            jsonrpc.request(i, "tools/call", {"name": "echo", "arguments": {"text": str(i)}})
        )
    for i in range(10, 30):
        assert inbox.response(i)["result"]["content"][0]["text"] == str(i)
    assert not inbox.errors
    session_id = transport.session_id
    transport.close()
    assert inbox.closes == [None]

    # close() DELETEd the session: the server no longer knows it.
    stale = StreamableHttpTransport(url, open_get_stream=False)
    opened.append(stale)
    stale_inbox = Inbox(stale)
    stale.start()
    stale.session_id = session_id
    stale.send(jsonrpc.request(5, "tools/list"), options=MessageOptions(version="2025-11-25"))
    error = stale_inbox.error()
    assert isinstance(error, SessionExpired) and error.request_id == 5


def test_sdk_server_resume_500_is_given_up(sse_server_port: int, opened: list[Any]) -> None:
    # The SDK server keeps no events: a GET with Last-Event-ID gets HTTP 500. A resuming stream
    # gives up after its budget and reports, the transport goes on.
    url = f"http://127.0.0.1:{sse_server_port}/mcp"
    transport = StreamableHttpTransport(
        url, open_get_stream=False, reconnect=ReconnectOptions(0.01, 0.05, 2)
    )
    opened.append(transport)
    inbox = Inbox(transport)
    transport.start()
    handshake(transport, inbox)
    exchange = transport._new_exchange()
    try:
        with pytest.raises(Exception) as info:
            transport._streams.resume(9, exchange, "no-such-event", None, "test")
    finally:
        transport._forget(exchange)
    assert "resuming it failed" in str(info.value)
    transport.send(jsonrpc.request(2, "tools/list"))
    inbox.response(2)


def test_legacy_sse_against_the_sdk_server(legacy_server_port: int, opened: list[Any]) -> None:
    url = f"http://127.0.0.1:{legacy_server_port}/sse"
    transport = SseTransport(url)
    opened.append(transport)
    inbox = Inbox(transport)
    transport.start()
    assert transport.endpoint and transport.endpoint.startswith(
        f"http://127.0.0.1:{legacy_server_port}/messages/"
    )
    exercise(transport, inbox)
    assert not inbox.errors
    transport.close()
    assert inbox.closes == [None]


def test_streamable_http_on_a_legacy_server_says_fall_back(
    legacy_server_port: int, opened: list[Any]
) -> None:
    transport = StreamableHttpTransport(f"http://127.0.0.1:{legacy_server_port}/sse")
    opened.append(transport)
    inbox = Inbox(transport)
    transport.start()
    transport.send(INIT)
    error = inbox.error()
    assert isinstance(error, HttpError) and error.request_id == 1
    assert fallback_to_sse(error), error


@pytest.mark.parametrize("kind", ["streamable-http", "sse"])
def test_connect_reaches_both_http_transports(
    kind: str, sse_server_port: int, legacy_server_port: int
) -> None:
    if kind == "sse":  # Streamable HTTP first, then the fallback to HTTP+SSE
        url = f"http://127.0.0.1:{legacy_server_port}/sse"
    else:
        url = f"http://127.0.0.1:{sse_server_port}/mcp"
    with mcp_sync.connect(url) as client:
        assert {tool.name for tool in client.list_tools()} >= {"add", "count", "echo"}
        assert client.call_tool("add", {"a": 40, "b": 2}).text == "42"
    assert not client_threads(("mcp-sync-http", "mcp-sync-sse"))
