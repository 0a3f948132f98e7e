"""HTTP exchanges that must never wedge a client: bodies framed by the connection's end,
POSTs a server never answers, calls that must not be sent twice, long-lived GET streams.

The faults are scripted (tests/helpers/http_faults.py): no real server can be made to hang a
POST, reset a connection after reading a request, or idle a stream out on demand.
"""

from __future__ import annotations

import queue
import select
import threading
import time
from typing import Any

import pytest

import mcp_sync
from mcp_sync.abort import AbortController
from mcp_sync.auth import AuthProvider
from mcp_sync.errors import ConnectionClosed, RequestTimeout, TransportError
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import ReconnectOptions, StreamableHttpTransport
from mcp_sync.transports.sse_legacy import SseTransport
from tests.helpers.http_faults import (
    INIT,
    INITIALIZED,
    OPENS_SESSION,
    FaultServer,
    Inbox,
    Request,
    answer,
    initialize_result,
)
from tests.helpers.support import client_threads, wait_until

pytestmark = pytest.mark.timeout(60)

FRAMINGS = ["connection-close", "http-1.0"]


def initialize(transport: StreamableHttpTransport) -> Inbox:
    """Start ``transport`` and send ``initialize`` (at 2025-11-25); the inbox holds what
    arrives."""
    inbox = Inbox(transport)
    transport.start()
    transport.send(INIT)
    inbox.response(1)
    return inbox


def stalled_stream(disconnects: queue.Queue[float | None], framing: str) -> Any:
    """A handler whose ``tools/call`` answer is an event stream framed by the connection's end
    that never says anything; ``disconnects`` gets the seconds until the client hung up."""

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            req.open_sse(chunked=False, http10=framing == "http-1.0")
            disconnects.put(req.wait_disconnect(8))
            return
        answer(req)

    return handler


def connect(url: str, **kwargs: Any) -> mcp_sync.Client:
    client = mcp_sync.Client("t", "1", protocol="handshake", request_timeout=10)
    return client.connect(StreamableHttpTransport(url, open_get_stream=False, **kwargs))


# -- releasing exchanges whatever their framing --------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
def test_abort_releases_a_stream_framed_by_the_connection_end(framing: str) -> None:
    disconnects: queue.Queue[float | None] = queue.Queue()
    handler = stalled_stream(disconnects, framing)
    with FaultServer(handler) as server, connect(server.url) as client:
        controller = AbortController()
        caller = threading.Thread(
            target=lambda: pytest.raises(
                mcp_sync.Aborted, client.call_tool, "t", signal=controller.signal
            )
        )
        caller.start()
        wait_until(lambda: [r for r in server.of("POST") if b"tools/call" in r.body], timeout=10)
        controller.abort("user")
        caller.join(10)
        # the client hung up at once: the server's wait ends long before its 8 s bound
        assert disconnects.get(timeout=12) is not None


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_timed_out_call_releases_a_stream_framed_by_the_connection_end(framing: str) -> None:
    disconnects: queue.Queue[float | None] = queue.Queue()
    handler = stalled_stream(disconnects, framing)
    with FaultServer(handler) as server, connect(server.url) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("t", timeout=0.3)
        assert disconnects.get(timeout=12) is not None
        assert client.ping() is None  # and the client goes on


@pytest.mark.parametrize("framing", FRAMINGS)
def test_close_releases_a_stream_framed_by_the_connection_end(framing: str, caplog) -> None:
    disconnects: queue.Queue[float | None] = queue.Queue()
    before = set(client_threads())
    with FaultServer(stalled_stream(disconnects, framing)) as server:
        client = connect(server.url)
        caller = threading.Thread(
            target=lambda: pytest.raises(ConnectionClosed, client.call_tool, "t"), daemon=True
        )
        caller.start()
        wait_until(lambda: [r for r in server.of("POST") if b"tools/call" in r.body], timeout=10)
        client.close()
        # close() joined every thread it started: none is left, and none "did not stop"
        assert set(client_threads()) - before == set()
        assert "did not stop" not in caplog.text
        caller.join(10)
        assert disconnects.get(timeout=12) is not None


# -- a POST the server never answers ------------------------------------------------------------


class StuckLegacyServer:
    """HTTP+SSE (2024-11-05): answers go on the GET stream, except that the POST of a
    ``tools/call`` is never answered at all."""

    def __init__(self) -> None:
        self.outbox: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def __call__(self, req: Request) -> None:
        if req.method == "GET":
            stream = req.open_sse()
            stream.event("/messages", event="endpoint")
            while not req.server.stopping.is_set():
                try:
                    message = self.outbox.get(timeout=0.05)
                except queue.Empty:
                    continue
                stream.event(message)
            return
        msg = req.json
        if msg.get("method") == "tools/call":
            req.hang()
            return
        req.reply(202)
        if "id" in msg and "method" in msg:
            value = initialize_result("2024-11-05") if msg["method"] == "initialize" else {}
            self.outbox.put(jsonrpc.result_response(msg["id"], value))


def test_legacy_sse_a_post_never_answered_does_not_wedge_later_calls() -> None:
    before = set(client_threads())
    legacy = StuckLegacyServer()
    with FaultServer(legacy) as server:
        client = mcp_sync.Client("t", "1", protocol="handshake", request_timeout=10)
        client.connect(SseTransport(server.url.replace("/mcp", "/sse")))
        stuck = threading.Thread(
            target=lambda: pytest.raises(ConnectionClosed, client.call_tool, "t"), daemon=True
        )
        stuck.start()  # its POST is never answered
        wait_until(lambda: [r for r in server.of("POST") if b"tools/call" in r.body], timeout=10)
        assert client.ping(timeout=5) is None  # while it is still stuck
        with pytest.raises(RequestTimeout):
            client.call_tool("t", timeout=0.3)  # this one times out, and is released
        assert client.ping(timeout=5) is None
        client.close()
        stuck.join(10)
        assert set(client_threads()) - before == set()


def test_a_notification_never_answered_does_not_hold_up_answers_to_server_requests() -> None:
    before = set(client_threads())

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "notifications/roots/list_changed":
            req.hang()
            return
        answer(req)

    with FaultServer(handler) as server:
        transport = StreamableHttpTransport(server.url, open_get_stream=False)
        inbox = initialize(transport)
        transport.send(jsonrpc.notification("notifications/roots/list_changed"))
        wait_until(
            lambda: [r for r in server.of("POST") if b"roots/list_changed" in r.body], timeout=10
        )
        # the answer to a server request (sampling, roots...) still goes out
        transport.send(jsonrpc.result_response(0, {"roots": []}))
        wait_until(lambda: [r for r in server.of("POST") if b'"result"' in r.body], timeout=10)
        transport.close()
        assert set(client_threads()) - before == set()
        assert not inbox.errors


# -- never send a call twice ----------------------------------------------------------------------


def test_a_call_fully_sent_on_a_reused_connection_then_reset_is_not_sent_again() -> None:
    calls: list[Request] = []

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/call":
            calls.append(req)
            req.drop()  # it read the whole request, maybe acted on it, then the line died
            return
        answer(req)

    with FaultServer(handler) as server, connect(server.url) as client:
        assert client.ping() is None  # the next POST reuses this keep-alive connection
        with pytest.raises(TransportError, match="reset|closed|aborted"):
            client.call_tool("charge_card", {"cents": 500})
        assert len(calls) == 1
        assert client.ping() is None


def test_a_forwarding_proxy_that_closes_each_connection_unannounced_costs_no_call() -> None:
    """tinyproxy forwards a plain ``http://`` request, relays the answer, then closes the
    connection: it keeps none, and does not say so (no ``Connection: close``). A call written
    into the connection before that close arrives fails, and is not sent again (it may have
    gone through), so the client takes a fresh connection for each request through a
    forwarding proxy that did not say it keeps connections. Scripted: here the close comes once
    the next request is on its way, the moment tinyproxy's close raced with in a loaded CI run.
    """

    def proxy(req: Request) -> None:
        msg = req.rpc_request()
        if msg is not None:
            value = {"content": [{"type": "text", "text": "done"}]}
            if msg["method"] == "initialize":
                value = initialize_result()
            req.reply_json(jsonrpc.result_response(msg["id"], value))
        select.select([req.handler.connection], [], [], 5)  # the next request, or the close
        req.drop()

    with FaultServer(proxy) as server:
        proxy_url = f"http://127.0.0.1:{server.port}"
        with connect("http://mcp.invalid/mcp", proxy=proxy_url) as client:
            for _ in range(3):
                assert client.call_tool("charge_card", {"cents": 500}).text == "done"
        assert {r.path for r in server.requests} == {"http://mcp.invalid/mcp"}
        assert server.connections == len(server.requests)


def test_a_read_only_request_reset_after_it_was_sent_is_sent_once_more() -> None:
    """tools/list changes nothing: sent again on a fresh connection (a server closing an idle
    connection as it is reused, common on a loaded machine, costs no error)."""
    lists: list[Request] = []

    def handler(req: Request) -> None:
        if req.method == "POST" and req.json.get("method") == "tools/list":
            lists.append(req)
            if len(lists) == 1:
                req.drop()
                return
            req.reply_json(jsonrpc.result_response(req.json["id"], {"tools": []}))
            return
        answer(req)

    with FaultServer(handler) as server, connect(server.url) as client:
        assert client.ping() is None  # the next POST reuses this keep-alive connection
        assert client.list_tools() == []
        assert len(lists) == 2


def test_a_keep_alive_connection_the_server_closed_while_idle_is_replaced_silently() -> None:
    closed: list[int] = []

    def handler(req: Request) -> None:
        answer(req)  # keep-alive, as far as the client knows...
        req.drop()  # ...but the server closes the connection once it is idle
        closed.append(1)

    with FaultServer(handler) as server, connect(server.url) as client:
        for _n in range(3):
            wait_until(lambda: len(closed) == len(server.requests), timeout=10)
            assert client.ping() is None  # no error: a fresh connection was used


@pytest.mark.parametrize("keep_alive", [None, "timeout=1"])
def test_a_connection_idle_longer_than_the_server_keeps_it_is_not_reused(keep_alive) -> None:
    """A server that says it keeps an idle connection N s (Node: 5) may close it at that very
    moment: the client uses a fresh one once it was idle N - 1 s (here: 0 s, so always)."""
    headers = {"Keep-Alive": keep_alive} if keep_alive else {}

    def handler(req: Request) -> None:
        msg = req.rpc_request()
        if msg is not None:
            value = initialize_result() if msg["method"] == "initialize" else {}
            req.reply_json(jsonrpc.result_response(msg["id"], value), headers=headers)

    with FaultServer(handler) as server, connect(server.url) as client:
        wait_until(lambda: len(server.of("POST")) == 2, timeout=10)  # initialize, initialized
        # (a call made on the caller's thread may overtake the worker still reading the 202 of
        # notifications/initialized, and take a second connection: count after one call)
        assert client.ping() is None
        before = server.connections
        for _ in range(3):
            assert client.ping() is None
        assert server.connections - before == (3 if keep_alive else 0)


# -- GET streams that live long ---------------------------------------------------------------


def test_a_get_stream_idled_out_after_a_while_counts_as_a_success() -> None:
    """A proxy ends an idle stream after a while, again and again: that is not a failure."""
    drops = 6
    policy = ReconnectOptions(initial_delay=0.02, max_delay=0.05, max_retries=2)
    gets: list[float] = []

    def handler(req: Request) -> None:
        if req.method != "GET":
            answer(req)
            return
        gets.append(time.monotonic())
        stream = req.open_sse()
        if len(gets) <= drops:
            # open far longer than any reconnect delay, no events, then idled out
            req.server.stopping.wait(0.3)
            stream.drop()
            return
        stream.event(jsonrpc.notification("notifications/tools/list_changed"))
        req.hang()

    with FaultServer(handler) as server:
        transport = StreamableHttpTransport(server.url, reconnect=policy)
        inbox = initialize(transport)
        transport.send(INITIALIZED, options=OPENS_SESSION)
        inbox.wait_for_method("notifications/tools/list_changed", timeout=20)
        assert len(gets) == drops + 1
        assert not inbox.errors
        transport.close()


def test_a_non_latin1_event_id_does_not_kill_the_get_stream() -> None:
    gets: list[dict[str, str]] = []

    def handler(req: Request) -> None:
        if req.method != "GET":
            answer(req)
            return
        gets.append(req.headers)
        stream = req.open_sse()
        if len(gets) == 1:
            stream.event(
                jsonrpc.notification("notifications/message", {"level": "info", "data": 1}),
                id="\u2603-1",
            )
            stream.drop()
            return
        stream.event(jsonrpc.notification("notifications/tools/list_changed"))
        req.hang()

    with FaultServer(handler) as server:
        transport = StreamableHttpTransport(
            server.url, reconnect=ReconnectOptions(initial_delay=0.02, max_delay=0.05)
        )
        inbox = initialize(transport)
        transport.send(INITIALIZED, options=OPENS_SESSION)
        inbox.wait_for_method("notifications/tools/list_changed", timeout=10)
        error = inbox.error()
        assert isinstance(error, TransportError) and "event id" in str(error)
        assert "last-event-id" not in gets[1]
        transport.close()


# -- closing with a token ------------------------------------------------------------------------


class CountingProvider(AuthProvider):
    """Hands out a new token on every call: a call at close would be a refresh."""

    def __init__(self) -> None:
        self.calls = 0

    def token(self) -> str | None:
        self.calls += 1
        return f"token-{self.calls}"


def test_close_deletes_the_session_with_the_last_token_without_asking_for_a_new_one() -> None:
    with FaultServer(answer) as server:
        provider = CountingProvider()
        transport = StreamableHttpTransport(server.url, auth=provider, open_get_stream=False)
        inbox = initialize(transport)
        transport.send(jsonrpc.request(2, "tools/list"))
        inbox.response(2)
        calls = provider.calls
        last = server.of("POST")[-1].headers["authorization"]
        transport.close()
        (delete,) = server.of("DELETE")
        assert delete.headers["authorization"] == last
        assert provider.calls == calls
