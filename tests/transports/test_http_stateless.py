"""Streamable HTTP in the stateless era (2026-07-28): headers on the wire, no session, no GET.

Each message is sent as the session core sends it: with ``MessageOptions(version=...,
standalone=True)`` (and a tool call's ``Mcp-Param-*`` headers), and with the ``_meta`` a
stateless server needs.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync.abort import AbortController
from mcp_sync.errors import TransportError
from mcp_sync.protocol import jsonrpc
from mcp_sync.protocol.headers import param_headers
from mcp_sync.transports import MessageOptions
from mcp_sync.transports.http import ReconnectOptions
from tests.helpers.http_faults import (
    FaultServer,
    Request,
    discover_result,
    initialize_result,
    started_transports,
)
from tests.helpers.support import wait_until

pytestmark = pytest.mark.timeout(30)

FAST = ReconnectOptions(initial_delay=0.05, max_delay=0.5, max_retries=3)
STATELESS = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}
DISCOVER_RESULT = discover_result(STATELESS)
ALONE = MessageOptions(version=STATELESS, standalone=True)


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def request(id: int, method: str, **params: Any) -> dict[str, Any]:
    return jsonrpc.request(id, method, {**params, "_meta": META})


def mcp_headers(headers: dict[str, str]) -> dict[str, str]:
    """The MCP-specific headers of a recorded request (names lower-cased by the server)."""
    return {k: v for k, v in headers.items() if k.startswith("mcp")}


def stateless_server(req: Request) -> None:
    """A stateless server that (wrongly) also hands out a session id, to see it ignored."""
    msg = req.rpc_request()
    if msg is None:
        return
    method = msg.get("method")
    if method == "server/discover":
        result: dict[str, Any] = DISCOVER_RESULT
    elif method == "initialize":
        result = initialize_result()
    elif method == "tools/call" and msg["params"]["name"] == "unknown_header":
        error = jsonrpc.error_response(msg["id"], -32020, "header mismatch")
        req.reply_json(error, status=400)
        return
    elif method == "nope":
        req.reply_json(jsonrpc.error_response(msg["id"], -32601, "Method not found"), status=404)
        return
    else:
        result = {"echo": method, "resultType": "complete"}
    req.reply_json(jsonrpc.result_response(msg["id"], result), headers={"Mcp-Session-Id": "s-9"})


@pytest.fixture
def make() -> Iterator[Any]:
    with started_transports(reconnect=FAST) as factory:
        yield factory


# -- headers on the wire ------------------------------------------------------------------------


def test_discover_probe_before_any_version_is_stateless(make: Any) -> None:
    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url)
        transport.send(request(1, "server/discover"), options=ALONE)
        assert inbox.response(1)["result"] == DISCOVER_RESULT
        (post,) = server.of("POST")
        assert mcp_headers(post.headers) == {
            "mcp-protocol-version": STATELESS,
            "mcp-method": "server/discover",
        }
        assert post.headers["accept"] == "application/json, text/event-stream"
        assert post.headers["content-type"] == "application/json"
        assert transport.session_id is None  # a stateless request takes no session id


def test_exact_headers_after_negotiation(make: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "loud": {"type": "boolean", "x-mcp-header": "Loud"},
        },
    }

    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url, headers={"X-Custom": "1"})
        arguments = {"region": " Zürich ", "count": 3, "loud": False, "other": "x"}
        with_params = MessageOptions(
            version=STATELESS, standalone=True, headers=param_headers(schema, arguments)
        )
        transport.send(
            request(2, "tools/call", name="get_weather", arguments=arguments), options=with_params
        )
        inbox.response(2)
        transport.send(
            request(3, "tools/call", name="wetter-für-köln", arguments={}), options=ALONE
        )
        inbox.response(3)
        transport.send(request(4, "resources/read", uri="file:///tmp/a b.txt"), options=ALONE)
        inbox.response(4)
        transport.send(request(5, "resources/read", uri="file:///tmp/ß"), options=ALONE)
        inbox.response(5)
        transport.send(request(6, "prompts/get", name="=?base64?trick?="), options=ALONE)
        inbox.response(6)
        transport.send(request(7, "tools/list"), options=ALONE)
        inbox.response(7)
        posts = server.of("POST")
        assert [mcp_headers(p.headers) for p in posts] == [
            {
                "mcp-protocol-version": STATELESS,
                "mcp-method": "tools/call",
                "mcp-name": "get_weather",
                "mcp-param-region": b64(" Zürich "),
                "mcp-param-count": "3",
                "mcp-param-loud": "false",
            },
            {
                "mcp-protocol-version": STATELESS,
                "mcp-method": "tools/call",
                "mcp-name": b64("wetter-für-köln"),
            },
            {
                "mcp-protocol-version": STATELESS,
                "mcp-method": "resources/read",
                "mcp-name": "file:///tmp/a b.txt",
            },
            {
                "mcp-protocol-version": STATELESS,
                "mcp-method": "resources/read",
                "mcp-name": b64("file:///tmp/ß"),
            },
            {
                "mcp-protocol-version": STATELESS,
                "mcp-method": "prompts/get",
                "mcp-name": b64("=?base64?trick?="),
            },
            {"mcp-protocol-version": STATELESS, "mcp-method": "tools/list"},
        ]
        assert all(p.headers["x-custom"] == "1" for p in posts)
        assert transport.session_id is None
        assert not inbox.errors


def test_no_session_no_get_stream_no_delete(make: Any) -> None:
    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url)
        transport.send(request(1, "server/discover"), options=ALONE)
        inbox.response(1)
        # a message that stands alone opens no GET stream, whatever else its options say
        transport.send(
            jsonrpc.notification("notifications/initialized"),
            options=MessageOptions(version=STATELESS, standalone=True, opens_session=True),
        )
        transport.send(
            jsonrpc.notification("notifications/something", {"_meta": META}), options=ALONE
        )
        transport.send(request(2, "tools/list"), options=ALONE)
        inbox.response(2)
        wait_until(lambda: len(server.of("POST")) == 4)
        transport.close()
        posts = server.of("POST")
        assert len(posts) == 4
        for post in posts:
            assert "mcp-session-id" not in post.headers
            assert post.headers["mcp-protocol-version"] == STATELESS
        methods = sorted(post.headers["mcp-method"] for post in posts)
        assert methods == [
            "notifications/initialized",
            "notifications/something",
            "server/discover",
            "tools/list",
        ]
        assert server.of("GET") == []
        assert server.of("DELETE") == []
        assert inbox.closes == [None]


def test_version_header_is_the_one_the_message_states(make: Any) -> None:
    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url)
        meta = {**META, "io.modelcontextprotocol/protocolVersion": "2027-01-01"}
        transport.send(jsonrpc.request(1, "server/discover", {"_meta": meta}), options=ALONE)
        inbox.response(1)
        (post,) = server.of("POST")
        assert post.headers["mcp-protocol-version"] == "2027-01-01"


def test_stateless_error_bodies_are_the_requests_errors(make: Any) -> None:
    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url)
        transport.send(request(1, "tools/call", name="unknown_header", arguments={}), options=ALONE)
        assert inbox.response(1)["error"]["code"] == -32020
        transport.send(request(2, "nope"), options=ALONE)
        assert inbox.response(2)["error"]["code"] == -32601  # a 404, but no session to expire
        assert not inbox.errors


def test_broken_stream_is_not_resumed(make: Any) -> None:
    def handler(req: Request) -> None:
        if req.method != "POST":
            req.reply(405)
            return
        sse = req.open_sse()
        sse.event("", id="e1")  # a priming event: resumable in 2025-11-25, not here
        sse.drop()

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        transport.send(request(1, "tools/list"), options=ALONE)
        error = inbox.error()
        assert isinstance(error, TransportError) and error.request_id == 1
        time.sleep(0.2)
        assert server.of("GET") == []


def test_cancel_closes_the_stream_and_sends_nothing(make: Any) -> None:
    streams: list[Request] = []
    gone = threading.Event()

    def handler(req: Request) -> None:
        if req.method != "POST":
            req.reply(405)
            return
        if req.json.get("method") == "tools/list":
            req.reply_json({"jsonrpc": "2.0", "id": req.json["id"], "result": {"tools": []}})
            return
        sse = req.open_sse()
        sse.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})
        streams.append(req)
        if req.wait_disconnect(5) is not None:
            gone.set()

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        controller = AbortController()
        transport.send(
            request(1, "tools/call", name="slow", arguments={}),
            signal=controller.signal,
            options=ALONE,
        )
        inbox.wait_for(lambda: inbox.messages)
        controller.abort()
        assert gone.wait(5)
        # anything the abort made the transport send would go before this request
        transport.send(request(2, "tools/list"), options=ALONE)
        inbox.response(2)
        sent = [(r.method, (r.json or {}).get("method")) for r in server.requests]
        assert sent == [("POST", "tools/call"), ("POST", "tools/list")]
        assert not inbox.errors


def test_handshake_era_keeps_session_and_version_rules(make: Any) -> None:
    with FaultServer(stateless_server) as server:
        transport, inbox = make(server.url)
        transport.send(jsonrpc.request(1, "initialize", {"protocolVersion": "2025-11-25"}))
        inbox.response(1)
        transport.send(
            jsonrpc.request(2, "tools/call", {"name": "x", "arguments": {}}),
            options=MessageOptions(version="2025-11-25", headers={"X-From-Message": "yes"}),
        )
        inbox.response(2)
        init, call = server.of("POST")
        # Mcp-Method / Mcp-Name on every POST; session and version as in 2025-11-25
        assert mcp_headers(init.headers) == {"mcp-method": "initialize"}
        assert mcp_headers(call.headers) == {
            "mcp-session-id": "s-9",
            "mcp-protocol-version": "2025-11-25",
            "mcp-method": "tools/call",
            "mcp-name": "x",
        }
        assert call.headers["x-from-message"] == "yes"
        transport.close()
        assert len(server.of("DELETE")) == 1


# -- against the official SDK server ------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_port() -> Iterator[int]:
    pytest.importorskip("mcp.server.mcpserver")
    from tests.transports.test_http_real_server import run_server

    yield from run_server("streamable-http")


def test_official_sdk_server_stateless(make: Any, sdk_port: int) -> None:
    transport, inbox = make(f"http://127.0.0.1:{sdk_port}/mcp")
    transport.send(request(1, "server/discover"), options=ALONE)
    discovered = inbox.response(1)["result"]
    assert STATELESS in discovered["supportedVersions"]
    assert transport.session_id is None

    transport.send(request(2, "tools/call", name="add", arguments={"a": 2, "b": 3}), options=ALONE)
    assert inbox.response(2)["result"]["structuredContent"] == {"result": 5}

    # request-scoped notifications on the request's SSE stream, then the answer
    meta = {**META, "io.modelcontextprotocol/logLevel": "info"}
    transport.send(
        jsonrpc.request(
            3, "tools/call", {"name": "count", "arguments": {"steps": 2}, "_meta": meta}
        ),
        options=ALONE,
    )
    assert inbox.response(3)["result"]["content"][0]["text"] == "counted 2"
    logs = [m for m in inbox.messages if m.get("method") == "notifications/message"]
    assert [m["params"]["data"] for m in logs] == ["step 0", "step 1"]

    transport.send(request(4, "no/such/method"), options=ALONE)
    assert inbox.response(4)["error"]["code"] == -32601
    assert not inbox.errors


def test_official_sdk_server_checks_param_headers(make: Any, sdk_port: int) -> None:
    transport, inbox = make(f"http://127.0.0.1:{sdk_port}/mcp")
    transport.send(request(1, "tools/list"), options=ALONE)
    tools = {tool["name"]: tool for tool in inbox.response(1)["result"]["tools"]}
    schema = tools["locate"]["inputSchema"]

    for id, region in enumerate(["eu-west", " Zürich ", "=?base64?x?=", "tab\there"], start=2):
        arguments = {"region": region, "zone": 7}
        options = MessageOptions(
            version=STATELESS, standalone=True, headers=param_headers(schema, arguments)
        )
        transport.send(
            request(id, "tools/call", name="locate", arguments=arguments), options=options
        )
        assert inbox.response(id)["result"]["content"][0]["text"] == f"{region}/7"
    transport.send(
        request(9, "tools/call", name="locate", arguments={"region": "eu"}), options=ALONE
    )
    assert inbox.response(9)["error"]["code"] == -32020  # the header is required
    assert not inbox.errors
