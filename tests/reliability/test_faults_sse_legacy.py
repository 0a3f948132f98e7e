"""SseTransport (HTTP+SSE, 2024-11-05): its exchange and its faults, against the scripted fault
server (no real server can be made to drop its stream, refuse a POST or send a foreign endpoint)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcp_sync.auth import BearerToken
from mcp_sync.errors import ConnectionClosed, HttpError, TransportError
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.sse_legacy import SseTransport
from tests.helpers.http_faults import FaultServer, Inbox, Request, SseWriter
from tests.helpers.support import client_threads

pytestmark = pytest.mark.timeout(30)


class LegacyServer:
    """A 2024-11-05 server: GET /sse names /messages?session=1; answers go on the stream."""

    def __init__(self, endpoint: str = "/messages?session=1", *, end_after: int | None = None):
        self.endpoint = endpoint
        self.end_after = end_after
        self.stream: SseWriter | None = None
        self.stream_lock = threading.Lock()
        self.ready = threading.Event()
        self.fail_posts = False

    def __call__(self, req: Request) -> None:
        if req.method == "GET":
            w = req.open_sse()
            w.raw(": hello\n\n")
            w.event(self.endpoint, event="endpoint")
            self.stream = w
            self.ready.set()
            if self.end_after is not None:
                time.sleep(self.end_after)
                w.end()
                return
            req.hang()
        elif req.method == "POST":
            if self.fail_posts:
                req.reply(500, "nope")
                return
            req.reply(202, "Accepted")
            msg = req.json
            if "id" in msg and "method" in msg:
                with self.stream_lock:
                    assert self.stream is not None
                    self.stream.event(jsonrpc.result_response(msg["id"], {"m": msg["method"]}))
        else:
            req.reply(405)


@pytest.fixture
def opened():
    transports: list[SseTransport] = []
    yield transports
    for transport in transports:
        transport.close()
    deadline = time.monotonic() + 2
    while client_threads("mcp-sync-sse") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not client_threads("mcp-sync-sse")


def open_transport(opened: list[SseTransport], url: str, **kw: Any) -> tuple[SseTransport, Inbox]:
    transport = SseTransport(url, **kw)
    opened.append(transport)
    inbox = Inbox(transport)
    transport.start()
    return transport, inbox


def test_endpoint_post_and_messages_on_the_stream(opened) -> None:
    legacy = LegacyServer()
    with FaultServer(legacy) as server:
        url = server.url.replace("/mcp", "/sse")
        transport, inbox = open_transport(opened, url, auth=BearerToken("tk"), headers={"X-A": "b"})
        assert transport.endpoint == f"http://127.0.0.1:{server.port}/messages?session=1"
        transport.send(jsonrpc.request(1, "initialize", {}))
        transport.send(jsonrpc.notification("notifications/initialized"))
        transport.send(jsonrpc.request(2, "tools/list"))
        assert inbox.response(1)["result"] == {"m": "initialize"}
        assert inbox.response(2)["result"] == {"m": "tools/list"}
        posts = server.of("POST")
        assert [p.json.get("method") for p in posts] == [
            "initialize",
            "notifications/initialized",
            "tools/list",
        ]  # in send() order
        assert all(p.path == "/messages?session=1" for p in posts)
        assert all(p.headers["authorization"] == "Bearer tk" for p in posts)
        assert all(p.headers["x-a"] == "b" for p in posts)
        (get,) = server.of("GET")
        assert get.headers["accept"] == "text/event-stream"
        assert get.headers["authorization"] == "Bearer tk"
        transport.close()
        assert inbox.closes == [None]
        assert not client_threads("mcp-sync-sse")
        with pytest.raises(ConnectionClosed):
            transport.send(jsonrpc.request(3, "ping"))


def test_close_sends_the_notifications_sent_before_it_first(opened) -> None:
    legacy = LegacyServer()
    with FaultServer(legacy) as server:
        transport, _ = open_transport(opened, server.url.replace("/mcp", "/sse"))
        for n in range(3):
            transport.send(jsonrpc.notification(f"notifications/n{n}"))
        transport.close()
        methods = [p.json.get("method") for p in server.of("POST")]
        assert methods == ["notifications/n0", "notifications/n1", "notifications/n2"]


def test_endpoint_on_another_origin_is_refused(opened) -> None:
    with FaultServer(LegacyServer("http://evil.example:8080/messages")) as server:
        with pytest.raises(TransportError, match="another origin"):
            open_transport(opened, server.url)
        assert not client_threads("mcp-sync-sse")


def test_no_endpoint_event_within_connect_timeout(opened) -> None:
    def handler(req: Request) -> None:
        req.open_sse()
        req.hang()

    with FaultServer(handler) as server:
        start = time.monotonic()
        with pytest.raises(TransportError, match="no endpoint event"):
            open_transport(opened, server.url, connect_timeout=0.3)
        assert time.monotonic() - start < 1.0
        assert not client_threads("mcp-sync-sse")


def test_get_error_status_fails_start(opened) -> None:
    def handler(req: Request) -> None:
        req.reply(404, "not here")

    with FaultServer(handler) as server:
        with pytest.raises(HttpError) as info:
            open_transport(opened, server.url)
        assert info.value.status == 404


def test_stream_end_closes_with_connection_closed(opened) -> None:
    with FaultServer(LegacyServer(end_after=0)) as server:
        transport, inbox = open_transport(opened, server.url)
        cause = inbox.wait_for(lambda: inbox.closes and inbox.closes[0])
        assert isinstance(cause, ConnectionClosed)
        assert server.url in str(cause)
        assert transport.closed


def test_failed_post_fails_that_request(opened) -> None:
    legacy = LegacyServer()
    with FaultServer(legacy) as server:
        transport, inbox = open_transport(opened, server.url)
        legacy.fail_posts = True
        transport.send(jsonrpc.request(5, "tools/list"))
        error = inbox.error()
        assert isinstance(error, HttpError) and error.status == 500 and error.request_id == 5


def test_connection_refused_at_start(opened) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/sse"
    with pytest.raises(TransportError, match="connection refused") as info:
        open_transport(opened, url)
    assert url in str(info.value)
