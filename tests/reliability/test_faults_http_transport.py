"""StreamableHttpTransport against the scripted fault server (tests/helpers/http_faults.py)."""

from __future__ import annotations

import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from mcp_sync.abort import AbortController
from mcp_sync.auth import AuthProvider, BearerToken, UnauthorizedContext
from mcp_sync.errors import (
    ConnectionClosed,
    HttpError,
    McpError,
    SessionExpired,
    TransportError,
)
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import (
    ReconnectOptions,
    StreamableHttpTransport,
    fallback_to_sse,
)
from tests.helpers.http_faults import (
    INIT,
    INITIALIZED,
    OPENS_SESSION,
    FaultServer,
    Inbox,
    Request,
    answer,
    started_transports,
)
from tests.helpers.support import client_threads, wait_until

FAST = ReconnectOptions(initial_delay=0.05, max_delay=0.5, max_retries=3)

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def make() -> Iterator[Any]:
    with started_transports(reconnect=FAST) as factory:
        yield factory


def initialize(transport: StreamableHttpTransport, inbox: Inbox) -> None:
    """``initialize`` and its answer, without the initialized notification."""
    transport.send(INIT)
    inbox.response(1)


def handshake(transport: StreamableHttpTransport, inbox: Inbox) -> None:
    initialize(transport, inbox)
    transport.send(INITIALIZED, options=OPENS_SESSION)


def call(id: int, name: str = "t") -> dict[str, Any]:
    return jsonrpc.request(id, "tools/call", {"name": name, "arguments": {}})


# -- plain exchanges ----------------------------------------------------------------------------


def test_json_answers_session_headers_and_delete_on_close(make) -> None:
    with FaultServer(answer) as server:
        transport, inbox = make(server.url, auth=BearerToken("tok-123"))
        handshake(transport, inbox)
        transport.send(jsonrpc.request(2, "tools/list"))
        assert inbox.response(2)["result"] == {"echo": "tools/list"}
        assert transport.session_id == "s-1"
        init, initialized, listed = server.of("POST")
        assert init.headers["accept"] == "application/json, text/event-stream"
        assert init.headers["content-type"] == "application/json"
        assert "mcp-session-id" not in init.headers
        assert "mcp-protocol-version" not in init.headers
        for later in (initialized, listed):
            assert later.headers["mcp-session-id"] == "s-1"
            assert later.headers["mcp-protocol-version"] == "2025-11-25"
            assert later.headers["authorization"] == "Bearer tok-123"
        assert listed.json == jsonrpc.request(2, "tools/list")
        assert len(server.of("GET")) == 1  # 405: no stream, no retry
        transport.close()
        (delete,) = server.of("DELETE")
        assert delete.headers["mcp-session-id"] == "s-1"
        assert delete.headers["authorization"] == "Bearer tok-123"
        assert inbox.closes == [None]
        assert not client_threads("mcp-sync-http")
        assert not inbox.errors
        with pytest.raises(ConnectionClosed):
            transport.send(jsonrpc.request(3, "ping"))


def test_sse_answer_with_crlf_comments_multiline_and_related_messages(make) -> None:
    def handler(req: Request) -> None:
        msg = req.json
        if req.method == "POST" and msg.get("method") == "tools/call":
            w = req.open_sse()
            w.raw(": keep-alive\r\n\r\n")
            w.event(jsonrpc.notification("notifications/progress", {"progress": 1}), eol="\r\n")
            body = json.dumps(jsonrpc.result_response(msg["id"], {"ok": True}), indent=1)
            w.event(body, eol="\r\n")  # multi-line data
            w.end()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        transport.send(call(2))
        assert inbox.response(2)["result"] == {"ok": True}
        assert inbox.messages[1]["method"] == "notifications/progress"
        assert not inbox.errors


def test_202_to_a_request_fails_only_that_request(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/list":
            req.reply(202)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(jsonrpc.request(2, "tools/list"))
        error = inbox.error()
        assert isinstance(error, TransportError)
        assert error.request_id == 2
        assert "202" in str(error)
        transport.send(jsonrpc.request(3, "ping"))
        inbox.response(3)


def test_http_error_status_is_an_http_error_for_that_request(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/list":
            req.reply(500, "kaputt " * 3000, {"Content-Type": "text/plain"})
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(jsonrpc.request(2, "tools/list"))
        error = inbox.error()
        assert isinstance(error, HttpError)
        assert (error.status, error.request_id) == (500, 2)
        assert error.body.startswith("kaputt") and len(error.body) == 8192
        assert not fallback_to_sse(error)


def test_id_null_error_body_fails_the_request_that_got_it(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            req.reply_json(jsonrpc.error_response(None, -32600, "Bad Request: nope"), status=400)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(7))
        response = inbox.response(7)
        assert response["error"]["code"] == -32600
        assert not inbox.errors


def test_session_404_is_session_expired(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/list":
            req.reply_json(jsonrpc.error_response(None, -32600, "Session not found"), status=404)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(jsonrpc.request(2, "tools/list"))
        error = inbox.error()
        assert isinstance(error, SessionExpired)
        assert error.request_id == 2


def test_initialize_fallback_signals() -> None:
    assert fallback_to_sse(HttpError(405, "Method Not Allowed"))
    assert fallback_to_sse(HttpError(404, "<html>not found</html>"))
    assert fallback_to_sse(HttpError(400, ""))
    assert not fallback_to_sse(HttpError(400, json.dumps(jsonrpc.error_response(None, -1, "x"))))
    assert not fallback_to_sse(HttpError(401, ""))
    assert not fallback_to_sse(SessionExpired("gone", request_id=1))
    assert not fallback_to_sse(TransportError("refused"))


def test_connection_refused_names_the_url(make) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    transport, inbox = make(url)
    transport.send(INIT)
    error = inbox.error()
    assert isinstance(error, TransportError)
    assert error.request_id == 1
    assert "connection refused" in str(error) and url in str(error)


def test_already_aborted_signal_sends_nothing(make) -> None:
    with FaultServer(answer) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        controller = AbortController()
        controller.abort("too late")
        transport.send(call(7), signal=controller.signal)
        transport.send(INIT)  # sent after it: once this is answered, the first was not sent
        inbox.response(1)
        sent = [(r.method, (r.json or {}).get("method")) for r in server.requests]
        assert sent == [("POST", "initialize")]


@pytest.mark.alone("a median round trip under 30 ms: other tests' load would decide it")
def test_sequential_post_latency_has_no_nagle_delay(make) -> None:
    with FaultServer(answer) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        times = []
        for i in range(100, 140):
            start = time.perf_counter()
            transport.send(jsonrpc.request(i, "ping"))
            inbox.response(i)
            times.append(time.perf_counter() - start)
        median = statistics.median(times)
        print(f"\nsequential JSON POST round trip: median {median * 1e3:.2f} ms")
        assert median < 0.03  # Nagle and delayed ACK would make it 40 ms or more
        assert server.connections <= 2  # kept alive
        # Headers and body are two writes: without TCP_NODELAY the body could wait 40 ms.
        pool = transport._client().session.get_adapter(server.url).poolmanager
        keys = pool.pools.keys()  # (the container refuses plain iteration)
        conns = [c for key in keys for c in pool.pools[key].pool.queue]
        socks = [c.sock for c in conns if c is not None and c.sock is not None]
        assert socks
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in socks)


# -- abort and close release readers ------------------------------------------------------------


@pytest.mark.parametrize("send_headers", [True, False], ids=["after-headers", "before-headers"])
def test_abort_releases_a_reader_blocked_on_a_silent_server(make, send_headers: bool) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            if send_headers:
                req.send_headers_only()
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        controller = AbortController()
        transport.send(call(2), signal=controller.signal)
        wait_until(lambda: len(server.of("POST")) == 3)
        time.sleep(0.1)  # the reader is now blocked in recv
        assert transport._exchanges
        start = time.perf_counter()
        controller.abort("timed out")
        wait_until(lambda: not transport._exchanges, timeout=1)
        elapsed = time.perf_counter() - start
        print(
            f"\nabort released a reader blocked {'after' if send_headers else 'before'} "
            f"headers in {elapsed * 1e3:.2f} ms"
        )
        assert elapsed < 0.5  # at once, not when the server answers (it never does)
        assert not inbox.errors  # an aborted request is the session's business


def test_close_releases_every_reader_and_joins(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            req.hang()
        elif req.method == "GET":
            req.open_sse()
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        for i in range(2, 6):
            transport.send(call(i))
        wait_until(lambda: len(server.of("POST")) == 6)
        start = time.perf_counter()
        transport.close()
        elapsed = time.perf_counter() - start
        print(f"\nclose() with 4 blocked requests and a GET stream: {elapsed * 1e3:.1f} ms")
        assert elapsed < 1.5
        assert not client_threads("mcp-sync-http")
        assert inbox.closes == [None]


# -- SSE response streams: drops, resumption, polling, limits ------------------------------------


def test_response_stream_dropped_without_event_ids_fails_that_request(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.event(jsonrpc.notification("notifications/progress", {"progress": 1}))
            w.drop()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, TransportError) and error.request_id == 2
        assert str(error).startswith("response stream failed")
        assert not server.of("GET")


def test_response_stream_dropped_with_event_ids_resumes_with_last_event_id(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.event(jsonrpc.notification("notifications/progress", {"progress": 1}), id="e1")
            w.drop()
        elif req.method == "GET" and req.header("Last-Event-ID") == "e1":
            w = req.open_sse()
            w.event(jsonrpc.result_response(2, {"resumed": True}), id="e2")
            w.end()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(2))
        assert inbox.response(2)["result"] == {"resumed": True}
        (get,) = server.of("GET")
        assert get.headers["last-event-id"] == "e1"
        assert get.headers["mcp-session-id"] == "s-1"
        assert not inbox.errors


def test_response_stream_resumption_gets_the_same_budget_as_the_get_stream(make) -> None:
    # The break is the run's first failure, then max_retries attempts (it made one more).
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.event(jsonrpc.notification("notifications/progress", {"progress": 1}), id="e1")
            w.drop()
        elif req.method == "GET":
            req.reply(503)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, TransportError) and error.request_id == 2
        assert "resuming it failed 3 times in a row (last: HTTP 503)" in str(error)
        assert len(server.of("GET")) == FAST.max_retries


def test_response_stream_ended_while_idle_is_resumed_until_the_answer(make) -> None:
    # Each resumed stream says nothing, stays open longer than the reconnect delay and is ended
    # (a proxy's idle timeout): no outage, so the budget renews, past max_retries, until the
    # answer comes. It used to give up after max_retries + 1 such ends.
    idle_ends = FAST.max_retries + 3

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.event("", id="p1")  # priming, then the server closes early
            w.end()
        elif req.method == "GET" and req.header("Last-Event-ID") == "p1":
            w = req.open_sse()
            if len(server.of("GET")) <= idle_ends:
                req.server.stopping.wait(0.3)  # idle, longer than any delay before it
            else:
                w.event(jsonrpc.result_response(2, {"at": "last"}), id="p2")
            w.end()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(2))
        assert inbox.response(2, timeout=15)["result"] == {"at": "last"}
        assert len(server.of("GET")) == idle_ends + 1
        assert not inbox.errors


def test_polling_priming_event_then_wait_retry_then_get(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.event("", id="p1", retry=300)  # priming: id and empty data
            w.end()  # the server closes early
        elif req.method == "GET" and req.header("Last-Event-ID") == "p1":
            w = req.open_sse()
            w.event(jsonrpc.result_response(2, {"polled": True}), id="p2")
            w.end()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        transport.send(call(2))
        assert inbox.response(2)["result"] == {"polled": True}
        post = server.of("POST")[-1]
        (get,) = server.of("GET")
        waited = get.time - post.time
        assert 0.29 <= waited < 1.0, waited
        assert not inbox.errors


def test_sse_event_over_the_size_limit_fails_the_request_memory_bounded(make) -> None:
    sent = []

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            w.raw("data: ")
            for _ in range(200):  # up to 12.8 MB, unless the client hangs up
                w.raw("x" * 65536)
                sent.append(1)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False, max_message_bytes=1 << 20)
        handshake(transport, inbox)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, TransportError) and error.request_id == 2
        assert "max_message_bytes" in str(error)
        assert len(sent) < 200  # the client hung up: it did not read the 12.8 MB


def test_json_body_over_the_size_limit_fails_the_request(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            req.reply_json(jsonrpc.result_response(2, {"blob": "y" * 300_000}))
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False, max_message_bytes=100_000)
        handshake(transport, inbox)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, TransportError) and error.request_id == 2
        assert "max_message_bytes" in str(error)


def test_slow_drip_stream_is_reassembled(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            w = req.open_sse()
            data = b"data: " + json.dumps(jsonrpc.result_response(2, {"drip": True})).encode()
            for i in range(len(data)):
                w.raw(data[i : i + 1])
                time.sleep(0.002)
            w.raw("\r")
            time.sleep(0.02)
            w.raw("\n\r\n")  # CRLF CRLF, split after the CR
            req.hang(2)
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, open_get_stream=False)
        handshake(transport, inbox)
        controller = AbortController()
        transport.send(call(2), signal=controller.signal)
        assert inbox.response(2)["result"] == {"drip": True}
        controller.abort("answered")  # what the session does: the linger is cut by close()
        assert not inbox.errors


# -- the GET stream ------------------------------------------------------------------------------


def test_a_request_does_not_overtake_the_initialized_notification(make) -> None:
    """A scripted server slow to acknowledge ``notifications/initialized``: the request sent
    right after it must not reach the server first (the official Python SDK's server rejects a
    request that comes before that notification)."""
    events: list[str] = []
    request_came = threading.Event()

    def handler(req: Request) -> None:
        msg = req.json if req.method == "POST" else None
        if msg is not None and msg.get("method") == "notifications/initialized":
            request_came.wait(0.5)  # a slow acknowledgement (cut short if a request came)
            events.append("initialized acknowledged")
        elif msg is not None and msg.get("method") == "tools/list":
            events.append("tools/list arrived")
            request_came.set()
        answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        initialize(transport, inbox)
        transport.send(INITIALIZED)
        transport.send(jsonrpc.request(2, "tools/list"), deadline=time.monotonic() + 20)
        inbox.response(2)
        assert events == ["initialized acknowledged", "tools/list arrived"]


def test_a_notification_never_acknowledged_holds_a_request_up_only_briefly(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "notifications/initialized":
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        initialize(transport, inbox)
        transport.send(INITIALIZED)
        transport.send(jsonrpc.request(2, "tools/list"), deadline=time.monotonic() + 60)
        # answered after the lane's stall (1 s), long before the request's own deadline
        assert inbox.response(2, timeout=10)["result"] == {"echo": "tools/list"}


def test_close_sends_the_notifications_sent_before_it_first(make) -> None:
    """A scripted server slow to acknowledge the first of two notifications; close() right
    after sending both still delivers both (within the lane's bound)."""
    acknowledge = threading.Event()

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "notifications/first":
            acknowledge.wait(0.3)  # a slow acknowledgement
        answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        initialize(transport, inbox)
        transport.send(jsonrpc.notification("notifications/first"))
        transport.send(jsonrpc.notification("notifications/second"))
        transport.close()
        got = [r.json.get("method") for r in server.of("POST")]
        assert got == ["initialize", "notifications/first", "notifications/second"]


def test_initialized_returns_once_the_get_stream_is_open(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "GET":
            time.sleep(0.3)
            w = req.open_sse()
            w.event(jsonrpc.request(0, "roots/list"))
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        transport.send(INIT)
        inbox.response(1)
        start = time.monotonic()
        transport.send(INITIALIZED, options=OPENS_SESSION)
        assert time.monotonic() - start >= 0.29
        inbox.wait_for_method("roots/list", timeout=1)
        (get,) = server.of("GET")
        assert get.headers["accept"] == "text/event-stream"
        assert get.headers["mcp-session-id"] == "s-1"


def test_get_stream_503_then_200_reconnects(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "GET":
            if len(server.of("GET")) == 1:
                req.reply(503)
                return
            w = req.open_sse()
            w.event(jsonrpc.notification("notifications/tools/list_changed"))
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        inbox.wait_for_method("notifications/tools/list_changed")
        assert len(server.of("GET")) == 2
        assert not inbox.errors


def test_get_stream_429_honours_retry_after(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "GET":
            if len(server.of("GET")) == 1:
                req.reply(429, headers={"Retry-After": "1"})
                return
            req.open_sse()
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, reconnect=ReconnectOptions(0.05, 5.0, 3))
        handshake(transport, inbox)
        wait_until(lambda: len(server.of("GET")) == 2, timeout=3)
        first, second = server.of("GET")
        assert 0.95 <= second.time - first.time < 2.0


def test_get_stream_405_means_no_stream(make) -> None:
    with FaultServer(answer) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        time.sleep(0.2)
        assert len(server.of("GET")) == 1
        assert not inbox.errors
        wait_until(lambda: not client_threads("mcp-sync-http-reader"))


def test_get_stream_auth_errors_are_not_retried(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "GET":
            req.reply(403, "forbidden")
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        error = inbox.error()
        assert isinstance(error, HttpError) and error.status == 403 and error.request_id is None
        time.sleep(0.2)
        assert len(server.of("GET")) == 1


def test_get_stream_resume_500_gives_up_after_the_retry_budget(make) -> None:
    # The official Python SDK server answers a GET with Last-Event-ID with 500.
    def handler(req: Request) -> None:
        if req.method == "GET":
            if req.header("Last-Event-ID"):
                req.reply(500, "Internal Server Error")
                return
            w = req.open_sse()
            w.event(jsonrpc.notification("notifications/message", {"data": 1}), id="g1")
            w.drop()
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url)
        handshake(transport, inbox)
        error = inbox.error(timeout=5)
        assert isinstance(error, TransportError) and "giving up" in str(error)
        resumes = [g for g in server.of("GET") if g.headers.get("last-event-id") == "g1"]
        assert len(resumes) == FAST.max_retries
        assert inbox.messages[-1]["method"] == "notifications/message"


def test_reconnect_options_delays() -> None:
    policy = ReconnectOptions(initial_delay=1.0, max_delay=30.0, max_retries=5)
    assert [policy.delay(n) for n in (1, 2, 3, 6, 10)] == [1.0, 2.0, 4.0, 30.0, 30.0]
    assert policy.delay(3, server_retry=0.25) == 0.25
    assert policy.delay(3, server_retry=99) == 30.0
    assert policy.delay(1, retry_after=7, server_retry=0.25) == 7
    with pytest.raises(ValueError):
        ReconnectOptions(initial_delay=-1)
    with pytest.raises(AttributeError):
        policy.max_retries = 3  # type: ignore[misc]


# -- auth ---------------------------------------------------------------------------------------


class RefreshingProvider(AuthProvider):
    def __init__(self, token: str, new_token: str, *, grant: bool = True) -> None:
        self.current = token
        self.new_token = new_token
        self.grant = grant
        self.calls: list[UnauthorizedContext] = []

    def token(self) -> str | None:
        return self.current

    def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
        self.calls.append(ctx)
        time.sleep(0.2)
        if not self.grant:
            return False
        self.current = self.new_token
        return True


def test_concurrent_401s_call_on_unauthorized_once(make) -> None:
    def handler(req: Request) -> None:
        if req.header("Authorization") != "Bearer fresh":
            req.reply(401, "no", {"WWW-Authenticate": 'Bearer resource_metadata="http://x/prm"'})
        else:
            answer(req)

    with FaultServer(handler) as server:
        provider = RefreshingProvider("stale", "fresh")
        transport, inbox = make(server.url, auth=provider, open_get_stream=False)
        for i in range(10, 16):
            transport.send(call(i))
        for i in range(10, 16):
            assert "result" in inbox.response(i)
        assert len(provider.calls) == 1
        ctx = provider.calls[0]
        assert ctx.status == 401 and ctx.token == "stale" and ctx.url == server.url
        assert ctx.resource_metadata == "http://x/prm"
        assert "stale" not in repr(ctx)
        assert not inbox.errors


def test_403_insufficient_scope_steps_up(make) -> None:
    def handler(req: Request) -> None:
        if req.header("Authorization") != "Bearer scoped":
            challenge = 'Bearer error="insufficient_scope", scope="tools:call"'
            req.reply(403, "", {"WWW-Authenticate": challenge})
        else:
            answer(req)

    with FaultServer(handler) as server:
        provider = RefreshingProvider("basic", "scoped")
        transport, inbox = make(server.url, auth=provider, open_get_stream=False)
        transport.send(call(2))
        assert "result" in inbox.response(2)
        (ctx,) = provider.calls
        assert ctx.status == 403 and ctx.insufficient_scope and ctx.scope == "tools:call"


def test_refused_authorization_fails_without_leaking_the_token(make) -> None:
    def handler(req: Request) -> None:
        req.reply(401, "denied", {"WWW-Authenticate": "Bearer"})

    with FaultServer(handler) as server:
        provider = RefreshingProvider("s3cr3t-token", "never", grant=False)
        transport, inbox = make(server.url, auth=provider, open_get_stream=False)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, HttpError) and error.status == 401 and error.request_id == 2
        assert len(provider.calls) == 1 and len(server.of("POST")) == 1
        assert "s3cr3t" not in str(error) and "s3cr3t" not in repr(error.headers)
        assert "s3cr3t" not in repr(transport) and "s3cr3t" not in repr(BearerToken("s3cr3t"))


def test_auth_provider_error_fails_only_that_request_keeping_its_type(make) -> None:
    class Broken(McpError):
        pass

    class Provider(AuthProvider):
        def token(self) -> str | None:
            return "t"

        def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
            raise Broken("the authorization server is down")

    def handler(req: Request) -> None:
        req.reply(401, "", {"WWW-Authenticate": "Bearer"})

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, auth=Provider(), open_get_stream=False)
        transport.send(call(2))
        error = inbox.error()
        assert isinstance(error, Broken) and error.request_id == 2  # type: ignore[attr-defined]


def test_a_provider_error_is_not_shared_with_a_request_in_flight(make) -> None:
    """A provider's error (its store or its authorization server unreachable) is the failing
    request's own: another request rejected while it was in flight asks the provider again.
    Before, it shared the "refusal" and its caller got the server's bare HTTP 401."""

    class StoreDown(McpError):
        pass

    sent = threading.Semaphore(0)

    class Provider(AuthProvider):
        current = "stale"
        calls = 0

        def token(self) -> str | None:
            sent.release()
            return self.current

        def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
            self.calls += 1
            if self.calls == 1:  # once the other request is on its way too
                assert sent.acquire(timeout=10) and sent.acquire(timeout=10)
                raise StoreDown("the token store is down")
            self.current = "fresh"
            return True

    def handler(req: Request) -> None:
        if req.header("Authorization") != "Bearer fresh":
            req.reply(401, "", {"WWW-Authenticate": "Bearer"})
        else:
            answer(req)

    with FaultServer(handler) as server:
        transport, inbox = make(server.url, auth=Provider(), open_get_stream=False)
        transport.send(call(2))
        transport.send(call(3))
        error = inbox.error()
        assert isinstance(error, StoreDown), error
        assert "result" in inbox.response(error.request_id ^ 1)  # type: ignore[attr-defined]


def test_injected_session_abort_after_headers_still_releases_the_reader(make) -> None:
    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            req.send_headers_only()
            req.hang()
        else:
            answer(req)

    with FaultServer(handler) as server, requests.Session() as session:
        transport, inbox = make(server.url, session=session, open_get_stream=False)
        handshake(transport, inbox)
        controller = AbortController()
        transport.send(call(2), signal=controller.signal)
        wait_until(lambda: len(server.of("POST")) == 3)
        time.sleep(0.1)
        start = time.perf_counter()
        controller.abort("timed out")
        wait_until(lambda: not transport._exchanges, timeout=1)
        assert time.perf_counter() - start < 0.5
        assert session.trust_env  # an injected session is left as it was


def test_environment_proxy_is_resolved_once_at_start(make, monkeypatch) -> None:
    with FaultServer(answer) as proxy:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        target = "http://mcp.invalid:9/mcp"
        transport, inbox = make(target, open_get_stream=False)
        monkeypatch.delenv("HTTP_PROXY")  # later changes do not matter: resolved once
        transport.send(INIT)
        inbox.response(1)
        (post,) = proxy.of("POST")
        assert post.path == target  # absolute-form request: it went through the proxy
        assert transport._client().session.trust_env is False
