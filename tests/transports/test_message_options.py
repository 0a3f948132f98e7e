"""Per-message options (``MessageOptions``): what the session core tells a transport about one
message, so the transport never reads ``params._meta`` or method names for it.

The header checks need a server that records what came in (tests/helpers/http_faults.py); the
``Mcp-Param-*`` headers against the official SDK server, which rejects a call without them, are
in test_http_stateless.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync.protocol import jsonrpc
from mcp_sync.transports import (
    InMemoryTransport,
    MessageOptions,
    PipeTransport,
    SseTransport,
    StdioTransport,
    StreamableHttpTransport,
    in_memory_transport_pair,
)
from tests.helpers.http_faults import (
    INIT,
    FaultServer,
    Inbox,
    Request,
    discover_result,
    initialize_result,
)
from tests.helpers.support import wait_until

pytestmark = pytest.mark.timeout(30)

STATELESS = "2026-07-28"


#: What the session core puts in a stateless-era request (the server needs it; the transport
#: does not read it).
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


def mcp_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.startswith("mcp")}


def server(req: Request) -> None:
    """Answers like a server of both eras; hands out a session id on ``initialize`` only."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "initialize":
        result, headers = initialize_result(), {"Mcp-Session-Id": "s-1"}
    elif msg["method"] == "server/discover":
        result, headers = discover_result(STATELESS), {}
    else:
        result, headers = {"echo": msg["method"]}, {}
    req.reply_json(jsonrpc.result_response(msg["id"], result), headers=headers)


@pytest.fixture
def http() -> Iterator[tuple[StreamableHttpTransport, Inbox, FaultServer]]:
    with FaultServer(server) as fault_server:
        transport = StreamableHttpTransport(fault_server.url)
        inbox = Inbox(transport)
        transport.start()
        try:
            yield transport, inbox, fault_server
        finally:
            transport.close()


def test_standalone_option_sends_a_standalone_stateless_post(http: Any) -> None:
    transport, inbox, fault_server = http
    # no params._meta and no session: only the options say which era this is
    options = MessageOptions(version=STATELESS, standalone=True, headers={"Mcp-Param-Region": "eu"})
    transport.send(
        jsonrpc.request(1, "tools/call", {"name": "get", "arguments": {}}), options=options
    )
    inbox.response(1)
    (post,) = fault_server.of("POST")
    assert mcp_headers(post.headers) == {
        "mcp-protocol-version": STATELESS,
        "mcp-method": "tools/call",
        "mcp-name": "get",
        "mcp-param-region": "eu",
    }


def test_a_message_not_standalone_joins_the_session_at_its_version(http: Any) -> None:
    transport, inbox, fault_server = http
    transport.send(INIT, options=MessageOptions())
    inbox.response(1)
    # params._meta names a stateless version, but the options say "the session's": they win
    meta = {"io.modelcontextprotocol/protocolVersion": STATELESS}
    transport.send(
        jsonrpc.request(2, "tools/list", {"_meta": meta}),
        deadline=time.monotonic() + 10,
        options=MessageOptions(version="2025-11-25", headers={"X-Extra": "1"}),
    )
    inbox.response(2)
    _, post = fault_server.of("POST")
    assert mcp_headers(post.headers) == {
        "mcp-session-id": "s-1",
        "mcp-protocol-version": "2025-11-25",
        "mcp-method": "tools/list",
    }
    assert post.headers["x-extra"] == "1"


def test_without_options_a_message_is_the_sessions_whatever_it_says(http: Any) -> None:
    transport, inbox, fault_server = http
    transport.send(INIT)
    inbox.response(1)
    # neither params._meta nor the method name makes the transport treat a message otherwise
    meta = {"io.modelcontextprotocol/protocolVersion": STATELESS}
    transport.send(jsonrpc.notification("notifications/initialized", {"_meta": meta}))
    transport.send(jsonrpc.request(2, "tools/list", {"_meta": meta}))
    inbox.response(2)
    _, initialized, listed = fault_server.of("POST")
    for post in (initialized, listed):
        assert post.headers["mcp-session-id"] == "s-1"
    assert fault_server.of("GET") == []  # nothing said this message opens the session


def test_what_the_transport_sends_on_its_own_goes_at_the_sessions_last_version(http: Any) -> None:
    """The GET stream and the DELETE carry no message, so no options: they go at the version
    of the session's last message; a standalone message leaves it as it was."""
    transport, inbox, fault_server = http
    transport.send(INIT, options=MessageOptions(begins_session=True))
    inbox.response(1)
    transport.send(
        jsonrpc.notification("notifications/initialized"),
        options=MessageOptions(version="2025-06-18", opens_session=True),
    )
    wait_until(lambda: len(fault_server.of("GET")) == 1)
    transport.send(
        jsonrpc.request(2, "tools/list"),
        options=MessageOptions(version=STATELESS, standalone=True),
    )
    inbox.response(2)
    transport.close()
    init, initialized, listed = fault_server.of("POST")
    assert "mcp-protocol-version" not in init.headers
    assert initialized.headers["mcp-protocol-version"] == "2025-06-18"
    assert listed.headers["mcp-protocol-version"] == STATELESS
    assert "mcp-session-id" not in listed.headers
    (get,) = fault_server.of("GET")
    (delete,) = fault_server.of("DELETE")
    for own in (get, delete):
        assert own.headers["mcp-protocol-version"] == "2025-06-18"
        assert own.headers["mcp-session-id"] == "s-1"


def test_option_headers_never_override_the_protocols_own(http: Any) -> None:
    transport, inbox, fault_server = http
    transport.headers["X-Trace"] = "static"
    options = MessageOptions(
        version=STATELESS,
        standalone=True,
        headers={"mcp-method": "evil", "MCP-PROTOCOL-VERSION": "1999", "x-trace": "message"},
    )
    transport.send(jsonrpc.request(1, "tools/list"), options=options)
    inbox.response(1)
    (post,) = fault_server.of("POST")
    assert post.headers["mcp-method"] == "tools/list"
    assert post.headers["mcp-protocol-version"] == STATELESS
    assert post.headers["x-trace"] == "message"  # the message's beat the transport's


def test_opens_session_option_opens_the_get_stream_first(http: Any) -> None:
    transport, inbox, fault_server = http
    transport.send(INIT)
    inbox.response(1)
    initialized = jsonrpc.notification("notifications/initialized")
    # the method name alone opens nothing when the options do not say so
    transport.send(initialized, options=MessageOptions())
    transport.send(jsonrpc.request(2, "ping"))
    inbox.response(2)
    assert fault_server.of("GET") == []
    transport.send(
        jsonrpc.notification("notifications/roots/list_changed"),
        options=MessageOptions(opens_session=True),
    )
    wait_until(lambda: len(fault_server.of("POST")) == 4)
    (get,) = fault_server.of("GET")
    last_post = fault_server.of("POST")[-1]
    assert last_post.json["method"] == "notifications/roots/list_changed"
    assert get.time <= last_post.time  # opened before the message went out
    assert get.headers["mcp-session-id"] == "s-1"


def test_only_streamable_http_cancels_by_closing_the_stream() -> None:
    assert StreamableHttpTransport.cancels_by_closing_stream
    for cls in (StdioTransport, PipeTransport, SseTransport, InMemoryTransport):
        assert not cls.cancels_by_closing_stream, cls


def test_in_memory_transport_ignores_options() -> None:
    client_end, server_end = in_memory_transport_pair()
    received: list[Any] = []
    arrived = threading.Event()
    server_end.on_message(lambda message: (received.append(message), arrived.set()))
    server_end.start()
    client_end.start()
    try:
        message = jsonrpc.request(1, "ping")
        options = MessageOptions(version=STATELESS, standalone=True, opens_session=True)
        client_end.send(message, deadline=time.monotonic() + 5, options=options)
        assert arrived.wait(5)
        assert received == [message]
    finally:
        client_end.close()
