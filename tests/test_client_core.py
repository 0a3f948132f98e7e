"""The client core over the in-memory transport, against a scripted MockServer peer."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from mcp_sync import (
    AbortController,
    Aborted,
    Client,
    ConnectionClosed,
    InvalidStateError,
    ProtocolError,
    RequestTimeout,
    RpcError,
    UnsupportedProtocolVersion,
)
from mcp_sync.testing import NO_REPLY, MockServer
from mcp_sync.types import Root
from tests.helpers.support import client_threads, wait_until

TEXT = {"content": [{"type": "text", "text": "ok"}]}


# -- handshake -------------------------------------------------------------------------


def test_connect_performs_the_handshake(server):
    server.instructions = "be nice"
    client = Client("me", "2.0", title="Me", roots=[Root(uri="file:///tmp", name="tmp")])
    server.connect(client)
    try:
        init = server.wait_for("initialize")
        assert init["method"] == "initialize"
        params = init["params"]
        assert params["protocolVersion"] == "2025-11-25"
        assert params["clientInfo"] == {"name": "me", "version": "2.0", "title": "Me"}
        assert params["capabilities"] == {"roots": {"listChanged": True}}
        assert server.wait_for("notifications/initialized")
        assert client.state == "connected"
        assert client.server_info.name == "mock-server"
        assert client.instructions == "be nice"
        assert client.protocol_version == "2025-11-25"
        assert client.server_capabilities.tools is not None
        assert client.era == "handshake"
    finally:
        client.close()


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
def test_older_supported_versions_are_accepted_and_given_to_the_transport(version):
    server = MockServer(protocol_version=version)
    versions = []
    send = server.client_transport.send

    def spy(message, **kwargs):
        if message.get("method") != "server/discover":  # (the era probe, standalone)
            versions.append(kwargs["options"].version)
        return send(message, **kwargs)

    server.client_transport.send = spy
    client = server.connect(Client())
    try:
        client.ping()
        assert client.protocol_version == version
        assert versions == [None, version, version]  # initialize, initialized, ping
    finally:
        client.close()


def test_unsupported_version_closes_and_raises():
    server = MockServer(protocol_version="1999-01-01")
    client = Client()
    with pytest.raises(UnsupportedProtocolVersion, match="1999-01-01"):
        server.connect(client)
    assert client.state == "closed"
    assert "notifications/initialized" not in server.methods()


def test_initialize_is_never_cancelled_on_the_wire():
    server = MockServer()
    server.handle("initialize", lambda p, ctx: NO_REPLY)
    client = Client()
    with pytest.raises(RequestTimeout):
        server.connect(client, timeout=0.05)
    assert "notifications/cancelled" not in server.methods()
    assert client.state == "closed"


def test_calls_in_the_wrong_state_name_the_state():
    client = Client()
    with pytest.raises(InvalidStateError, match="idle"):
        client.list_tools()
    client.close()
    with pytest.raises(InvalidStateError, match="closed"):
        client.connect(MockServer().client_transport)
    client.close()  # idempotent


def test_context_manager_closes(server):
    with server.connect(Client()) as client:
        client.ping()
    assert client.state == "closed"


# -- timeouts, abort, progress, Ctrl-C -------------------------------------------------


def test_timeout_raises_and_cancels_on_the_wire(client, server):
    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as info:
        client.call_tool("slow", timeout=0.1)
    assert time.monotonic() - started < 2
    assert isinstance(info.value, TimeoutError)
    cancel = server.wait_for("notifications/cancelled")
    call = next(m for m in server.received if m.get("method") == "tools/call")
    assert cancel["params"] == {"requestId": call["id"], "reason": "Request timed out"}
    assert client.call_tool.__self__ is client and client.ping() is None  # still usable


def test_abort_raises_and_cancels_with_the_reason(client, server):
    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    controller = AbortController()
    threading.Timer(0.05, controller.abort, args=("user said stop",)).start()
    with pytest.raises(Aborted, match="user said stop"):
        client.call_tool("slow", signal=controller.signal)
    cancel = server.wait_for("notifications/cancelled")
    assert cancel["params"]["reason"] == "user said stop"


def test_already_aborted_signal_sends_nothing(client, server):
    controller = AbortController()
    controller.abort("never mind")
    count = len(server.received)
    with pytest.raises(Aborted):
        client.call_tool("x", signal=controller.signal)
    client.ping()
    assert [m.get("method") for m in server.received[count:]] == ["ping"]


def test_a_request_settled_before_it_is_written_is_never_written(server):
    """The transport's send signal is aborted once the request settles."""
    signals = []
    transport = server.client_transport
    original = transport.send

    def spy(message, *, signal=None, **kwargs):
        if message.get("method") == "tools/call":
            signals.append(signal)
            return None  # as if the write were still queued: not written yet
        return original(message, signal=signal, **kwargs)

    transport.send = spy
    client = server.connect(Client())
    try:
        with pytest.raises(RequestTimeout):
            client.call_tool("x", timeout=0.05)
        assert signals and signals[0].aborted
        assert "tools/call" not in server.methods()
    finally:
        client.close()


def test_progress_renews_the_timeout_and_reaches_the_callback(client, server):
    @server.handle("tools/call", threaded=True)
    def slow(params, ctx):
        for i in range(1, 6):
            time.sleep(0.06)  # the peer's work; each step is shorter than the 0.15 s timeout
            ctx.progress(i, 5, f"step {i}")
        return TEXT

    seen = []
    result = client.call_tool("slow", timeout=0.15, on_progress=seen.append)
    assert result.text == "ok"
    assert len(seen) == 5  # every progress callback has run when the call returns
    assert [(p.progress, p.total, p.message) for p in seen][-1] == (5, 5, "step 5")
    call = next(m for m in server.received if m.get("method") == "tools/call")
    assert call["params"]["_meta"]["progressToken"] == call["id"]


def test_max_total_timeout_caps_a_request_despite_progress(server):
    @server.handle("tools/call", threaded=True)
    def endless(params, ctx):
        for _ in range(100):
            time.sleep(0.02)
            try:
                ctx.progress(1)
            except Exception:
                return NO_REPLY
        return NO_REPLY

    client = server.connect(Client(request_timeout=0.1, max_total_timeout=0.3))
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="0.3"):
            client.call_tool("endless", on_progress=lambda p: None)
        assert 0.25 < time.monotonic() - started < 1.5
    finally:
        client.close()


def test_ctrl_c_cancels_on_the_wire_reraises_and_leaves_the_client_usable(client, server):
    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    assert threading.current_thread() is threading.main_thread()
    threading.Timer(0.05, os.kill, args=(os.getpid(), signal.SIGINT)).start()  # a real Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        client.call_tool("slow", timeout=10)
    cancel = server.wait_for("notifications/cancelled")
    assert "Interrupted" in cancel["params"]["reason"]
    client.ping()


# -- server requests and notifications -------------------------------------------------


def test_server_ping_is_answered(client, server):
    assert server.request("ping") == {}


def test_roots_list_and_set_roots(server, tmp_path):
    client = server.connect(Client(roots=[tmp_path, "file:///data"]))
    try:
        roots = server.request("roots/list")["roots"]
        assert roots[0]["uri"] == tmp_path.resolve().as_uri()
        assert roots[1] == {"uri": "file:///data"}
        client.set_roots(lambda: [Root(uri="file:///other")])
        server.wait_for("notifications/roots/list_changed")
        assert server.request("roots/list") == {"roots": [{"uri": "file:///other"}]}
    finally:
        client.close()


def test_unknown_server_method_gets_method_not_found(client, server):
    with pytest.raises(RpcError) as info:
        server.request("sampling/createMessage", {})
    assert info.value.code == -32601


def test_handler_exception_is_logged_and_answered_internal_error(server, caplog):
    client = Client()

    def broken(params):
        raise ValueError("handler bug")

    client.on_sampling(broken)
    server.connect(client)
    try:
        with pytest.raises(RpcError) as info:
            server.request("sampling/createMessage", {"messages": [], "maxTokens": 5})
        assert info.value.code == -32603 and "handler bug" in info.value.message
        assert "handler bug" in caplog.text
    finally:
        client.close()


def test_handlers_may_call_the_client_without_deadlock(server):
    server.handle("tools/list", lambda p, ctx: {"tools": [{"name": "t", "inputSchema": {}}]})
    client = Client()

    def sample(params, ctx):
        names = [tool.name for tool in ctx.client.list_tools()]
        return {
            "role": "assistant",
            "content": {"type": "text", "text": ",".join(names)},
            "model": "m",
        }

    client.on_sampling(sample)
    server.connect(client)
    try:
        result = server.request("sampling/createMessage", {"messages": [], "maxTokens": 5})
        assert result["content"]["text"] == "t"
    finally:
        client.close()


def test_on_notification_for_one_method_and_for_all(client, server):
    one, every = [], []
    client.on_notification("notifications/tools/list_changed", one.append)
    remove = client.on_notification(None, every.append)
    server.notify("notifications/tools/list_changed")
    server.notify("notifications/progress", {"progressToken": "unknown", "progress": 1})
    wait_until(lambda: len(every) == 2)
    assert [n.method for n in one] == ["notifications/tools/list_changed"]
    assert every[1].params["progressToken"] == "unknown"
    remove()
    server.notify("notifications/message", {"level": "info", "data": "x"})
    client.ping()  # the dispatcher runs in order: anything queued before is done after a sync
    assert len(every) == 2


def test_callback_exceptions_are_logged_and_the_dispatcher_goes_on(client, server, caplog):
    seen = []
    client.on_notification("n/a", lambda n: 1 / 0)
    client.on_notification("n/b", seen.append)
    server.notify("n/a")
    server.notify("n/b")
    wait_until(lambda: seen)
    assert "ZeroDivisionError" in caplog.text


def test_raw_request_and_notify_escape_hatches(client, server):
    server.handle("vendor/echo", lambda p, ctx: {"echo": p})
    assert client.request("vendor/echo", {"a": 1}) == {"echo": {"a": 1}}
    client.notify("vendor/hello", {"b": 2})
    assert server.wait_for("vendor/hello")["params"] == {"b": 2}


# -- bad input from the peer -----------------------------------------------------------


def test_wrong_shaped_result_fails_the_request_with_a_clear_error(client, server):
    server.handle("tools/call", lambda p, ctx: {"content": "not a list"})
    with pytest.raises(ProtocolError, match="tools/call.*content"):
        client.call_tool("x")


def test_invalid_response_for_a_pending_request_fails_it_at_once(client, server):
    @server.handle("tools/call")
    def bad(params, ctx):
        server.send_raw({"jsonrpc": "2.0", "id": ctx.request_id, "result": {}, "error": {}})
        return NO_REPLY

    started = time.monotonic()
    with pytest.raises(ProtocolError, match="both a result and an error"):
        client.call_tool("x", timeout=5)
    assert time.monotonic() - started < 1


def test_garbage_and_id_less_errors_are_reported_not_dropped(client, server):
    errors = []
    client.on_error(errors.append)
    server.send_raw({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}})
    server.send_raw({"jsonrpc": "2.0", "error": {"code": -32600, "message": "bad"}})
    server.send_raw(["nonsense"])
    wait_until(lambda: len(errors) == 3)
    assert "without a request id" in str(errors[0])
    assert "not an object" in str(errors[2])
    client.ping()


def test_batches_from_a_2025_03_26_peer_are_unpacked(client, server):
    seen = []
    client.on_notification("notifications/message", seen.append)
    server.send_raw(
        [
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": 1},
            },
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": 2},
            },
        ]
    )
    wait_until(lambda: len(seen) == 2)
    assert [n.params["data"] for n in seen] == [1, 2]


# -- closing ---------------------------------------------------------------------------


def test_transport_close_fails_every_pending_request_at_once(client, server):
    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    errors = []

    def call():
        try:
            client.call_tool("x", timeout=30)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(5)]
    for t in threads:
        t.start()
    wait_until(lambda: server.methods().count("tools/call") == 5)
    started = time.monotonic()
    server.transport.close()
    for t in threads:
        t.join(5)
    assert time.monotonic() - started < 1
    assert len(errors) == 5 and all(isinstance(e, ConnectionClosed) for e in errors)
    assert "peer closed" in str(errors[0])
    with pytest.raises(ConnectionClosed):
        client.ping()


def test_close_leaves_no_client_thread_and_fails_pending(server):
    before = set(client_threads())
    client = server.connect(Client())
    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    errors = []
    worker = threading.Thread(
        target=lambda: errors.append(pytest.raises(ConnectionClosed, client.call_tool, "x"))
    )
    worker.start()
    server.wait_for("tools/call")
    client.close()
    worker.join(5)
    assert errors
    wait_until(lambda: not [t for t in client_threads() if t not in before])


def test_close_from_a_callback_does_not_deadlock(client, server):
    done = threading.Event()

    def on_note(n):
        client.close()
        done.set()

    client.on_notification("bye", on_note)
    server.notify("bye")
    assert done.wait(5)
    assert client.state == "closed"


# -- threads and event loops -----------------------------------------------------------


def test_32_threads_x_500_calls_each_get_their_own_answer(client, server):
    server.handle("tools/call", lambda p, ctx: {"content": [], "structuredContent": p["arguments"]})
    failures = []

    def worker(n):
        for i in range(500):
            result = client.call_tool("echo", {"thread": n, "i": i})
            if result.structured_content != {"thread": n, "i": i}:
                failures.append((n, i, result.structured_content))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures


def test_works_from_a_thread_running_an_asyncio_loop(client, server):
    server.handle("tools/call", lambda p, ctx: TEXT)

    async def main():
        assert asyncio.get_running_loop().is_running()
        return client.call_tool("x").text

    assert asyncio.run(main()) == "ok"


# -- paging ----------------------------------------------------------------------------


def _paged(pages):
    def handler(params, ctx):
        return pages[params.get("cursor")]

    return handler


def test_list_tools_follows_cursors_to_the_end(client, server):
    server.handle(
        "tools/list",
        _paged(
            {
                None: {"tools": [{"name": "a", "inputSchema": {}}], "nextCursor": "p2"},
                "p2": {"tools": [{"name": "b", "inputSchema": {}}], "nextCursor": ""},
            }
        ),
    )
    assert [t.name for t in client.list_tools()] == ["a", "b"]
    page = client.list_tools_page("p2")
    assert [t.name for t in page.tools] == ["b"]


def test_a_repeated_cursor_is_an_error_not_a_loop(client, server):
    server.handle(
        "tools/list",
        _paged(
            {
                None: {"tools": [], "nextCursor": "p2"},
                "p2": {"tools": [], "nextCursor": "p2"},
            }
        ),
    )
    with pytest.raises(ProtocolError, match="repeated the cursor"):
        client.list_tools()


def test_paging_gives_up_after_1000_pages(client, server):
    server.handle(
        "tools/list", lambda p, ctx: {"tools": [], "nextCursor": str(int(p.get("cursor") or 0) + 1)}
    )
    with pytest.raises(ProtocolError, match="1000 pages"):
        client.list_tools()


def test_transport_errors_fail_their_own_request_or_are_reported(client, server):
    from mcp_sync import TransportError

    server.handle("tools/call", lambda p, ctx: NO_REPLY)
    reported, failures = [], []
    client.on_error(reported.append)

    def call():
        try:
            client.call_tool("x", timeout=10)
        except TransportError as exc:
            failures.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    request_id = server.wait_for("tools/call")["id"]
    server.client_transport.emit_error(TransportError("this POST failed", request_id=request_id))
    worker.join(5)
    assert [str(e) for e in failures] == ["this POST failed"]
    server.client_transport.emit_error(TransportError("a stream hiccup"))
    wait_until(lambda: reported)
    assert str(reported[0]) == "a stream hiccup"
    client.ping()
