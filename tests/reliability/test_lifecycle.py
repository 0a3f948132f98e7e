"""The client's lifecycle under a dying server: truthful ``state``, ``on_close``, clear errors.

Runs against a real server process (the scripted fault peer of tests/servers, which can be told
to die with calls in flight; a real server cannot be made to do that on demand).
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import warnings
import weakref

import pytest

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, InvalidStateError, ProtocolError
from mcp_sync.protocol.types import LoggingMessageNotificationParams
from mcp_sync.testing import MockServer
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.reliability_support import PYTHON, SERVERS, connect, fault_peer
from tests.helpers.support import wait_until

pytestmark = pytest.mark.timeout(60)


def test_a_server_death_closes_the_client_at_once_and_fires_on_close(leaks) -> None:
    causes: list[BaseException | None] = []
    threads: list[str] = []
    fired = threading.Event()

    def closed(cause: BaseException | None) -> None:
        causes.append(cause)
        threads.append(threading.current_thread().name)
        fired.set()

    client = connect(fault_peer("crash", "1"), on_close=closed)
    assert client.state == "connected"
    with pytest.raises(ConnectionClosed) as failed:
        client.call_tool("die", {}, timeout=30)
    assert client.state == "closed"  # at once: the call that saw the death sees the state
    assert fired.wait(10)
    assert len(causes) == 1
    cause = causes[0]
    assert isinstance(cause, ConnectionClosed) and cause.exit_status == 3
    assert threads[0] != "mcp-sync-stdio-reader"  # user code never runs on the reader thread
    # the errors of a closed client say how to go on
    assert "new Client" in str(failed.value)
    with pytest.raises(ConnectionClosed, match="new Client"):
        client.ping()
    with pytest.raises(InvalidStateError, match="new Client"):
        client.connect(fault_peer("echo"))
    # the client cleaned up after itself, without close(); close() is still fine
    client.close()
    assert len(causes) == 1  # on_close fires once


def test_on_close_registration_gets_none_after_close_and_can_be_removed(leaks) -> None:
    client = Client("lifecycle", "1", protocol="handshake")
    seen: list[object] = []
    remove = client.on_close(lambda cause: seen.append(("removed", cause)))
    client.on_close(lambda cause: seen.append(("kept", cause)))
    remove()
    client.connect(fault_peer("echo"))
    client.close()
    assert seen == [("kept", None)]  # before close() returned, on the closing thread
    client.close()
    assert seen == [("kept", None)]


def test_on_close_may_call_back_into_the_client(leaks) -> None:
    states: list[str] = []

    def closed(_cause: BaseException | None) -> None:
        states.append(client.state)
        client.close()  # no deadlock

    client = connect(fault_peer("crash", "1"), on_close=closed)
    with pytest.raises(ConnectionClosed):
        client.call_tool("die", {}, timeout=30)
    wait_until(lambda: states == ["closed"], timeout=10)
    client.close()


def test_server_requests_beyond_the_backlog_are_refused_and_reported(leaks) -> None:
    release = threading.Event()
    calls: list[int] = []

    def slow_roots() -> list[str]:
        calls.append(1)
        release.wait(30)
        return ["/tmp"]  # a root's name only: the MockServer never opens it

    server = MockServer()
    client = Client("lifecycle", "1", protocol="handshake", roots=slow_roots)
    errors: list[BaseException] = []
    client.on_error(errors.append)
    server.connect(client)
    flood = 3000
    try:
        for n in range(flood):
            server.send_raw({"jsonrpc": "2.0", "id": f"r{n}", "method": "roots/list"})
        refusal = server.wait_for(lambda m: "error" in m, timeout=20)
        assert refusal["error"]["code"] == -32603
        assert "backlog full" in refusal["error"]["message"]
        release.set()
        answered = server.wait_for(lambda m: m.get("id") == "r0" and "result" in m, timeout=20)
        assert answered["result"]["roots"]
        # reported through on_error (once the dispatcher, busy with the handler, gets to it)
        wait_until(lambda: any("backlog full" in str(e) for e in errors), timeout=10)
    finally:
        release.set()
        client.close()
        server.transport.close()
    assert len(calls) < flood  # the excess never reached the handler


def test_notifications_beyond_the_backlog_are_dropped_and_reported(leaks) -> None:
    # A real server (the official SDK's, tests/servers/sdk_server.py) logs once per step of
    # its `slow` tool; the log callback is stuck, so the messages wait for it.
    backlog = 10_000  # as docs/reliability.md says
    steps = backlog + 3_000
    release = threading.Event()
    logged: list[str] = []

    def stuck(message: LoggingMessageNotificationParams) -> None:
        release.wait(60)
        logged.append(str(message.data))

    client = connect(StdioTransport(PYTHON, [str(SERVERS / "sdk_server.py"), "stdio"]))
    errors: list[BaseException] = []
    client.on_error(errors.append)
    client.on_log(stuck)
    try:
        # the answer comes after every log message: all of them have been read by then
        result = client.call_tool("slow", {"steps": steps}, timeout=60)
        assert result.text == f"done after {steps} steps"
        release.set()
        wait_until(lambda: any("notifications" in str(e) for e in errors), timeout=20)
        flood = next(e for e in errors if "notifications" in str(e))
        assert isinstance(flood, ProtocolError) and "dropped" in str(flood)
        wait_until(lambda: len(logged) >= backlog, timeout=20)
        assert len(logged) <= backlog + 1  # the one running, and the backlog; no more
        assert logged[:3] == ["step 1 of 13000", "step 2 of 13000", "step 3 of 13000"]
        # once the backlog has drained, a burst under the bound arrives whole, in order
        kept = len(logged)
        client.call_tool("slow", {"steps": 50}, timeout=30)
        wait_until(lambda: len(logged) == kept + 50, timeout=20)
        assert logged[-1] == "step 50 of 50"
    finally:
        release.set()
        client.close()


def test_close_drops_the_callback_backlog_and_no_callback_runs_after_it(leaks) -> None:
    before = set(threading.enumerate())
    server = MockServer()
    client = Client("lifecycle", "1", protocol="handshake")
    ran: list[int] = []
    first = threading.Event()

    def slow(_notification: object) -> None:
        ran.append(1)
        first.set()
        threading.Event().wait(0.005)  # a callback that takes its time

    client.on_notification("notifications/message", slow)
    server.connect(client)
    for _ in range(2000):
        server.notify("notifications/message", {"level": "info", "data": "x"})
    assert first.wait(10)
    client.close()
    count = len(ran)
    assert not [t for t in set(threading.enumerate()) - before if t.name == "mcp-sync-dispatcher"]
    assert count < 2000  # the backlog was dropped, not run
    server.transport.close()
    assert len(ran) == count


def test_a_close_interrupted_by_ctrl_c_still_stops_the_server(leaks) -> None:
    transport = StdioTransport(
        PYTHON,
        [str(SERVERS / "stdio_stubborn.py"), "--ignore-eof", "--ignore-term"],
        close_timeout=30.0,  # the interrupt lands while close() waits for the server
    )
    transport.start()
    pid = transport.pid
    assert pid is not None
    main = threading.main_thread().ident
    assert main == threading.get_ident()
    timer = threading.Timer(0.3, signal.pthread_kill, args=(main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            transport.close()
    finally:
        timer.cancel()
    wait_until(lambda: not _alive(pid), message="the server outlived an interrupted close()")
    transport.close()  # a second close() finishes what is left (threads)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_unreachable_unclosed_client_is_collected_closed_and_warned(leaks) -> None:
    transport = fault_peer("echo")
    client = connect(transport)
    pid = transport.pid
    assert pid is not None
    ref = weakref.ref(client)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del client
        wait_until(
            lambda: gc.collect() >= 0 and ref() is None,
            timeout=10,
            message="the client was not collected",
        )
    assert any(
        issubclass(w.category, ResourceWarning) and "unclosed" in str(w.message) for w in caught
    )
    wait_until(
        lambda: not _alive(pid),
        timeout=10,
        message="the server of a collected client is still running",
    )
