"""Client faults: callbacks that block or re-enter, close() from anywhere, Ctrl-C at any moment.

A callback that raises, close() from a callback and Ctrl-C while waiting are tested in
tests/test_client_core.py; docs/reliability.md points there.
"""

from __future__ import annotations

import _thread
import gc
import threading
import time

import pytest

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed
from mcp_sync.testing import MockServer
from tests.helpers.reliability_support import connect, fault_peer

pytestmark = pytest.mark.timeout(60)


def mock_client() -> tuple[Client, MockServer]:
    server = MockServer(capabilities={"tools": {}})
    server.handle(
        "tools/list", lambda p, ctx: {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    )
    client = Client("rel", "1", request_timeout=5)
    server.connect(client)
    return client, server


def test_a_blocking_callback_does_not_stop_responses(leaks) -> None:
    client = connect(fault_peer("echo"))
    client_b, server = mock_client()
    release = threading.Event()
    entered = threading.Event()

    def blocked(_notification: object) -> None:
        entered.set()
        release.wait(20)

    client_b.on_notification("notifications/message", blocked)
    server.notify("notifications/message", {"level": "info", "data": "x"})
    assert entered.wait(5)
    started = time.monotonic()
    for i in range(20):  # answers are resolved on the reader thread, not behind the callback
        assert client_b.list_tools()[0].name == "t"
        assert client.call_tool("t", {"text": str(i)}).text == str(i)
    assert time.monotonic() - started < 5
    release.set()
    client_b.close()
    server.transport.close()
    client.close()


def test_progress_and_notification_callbacks_may_re_enter_the_client(leaks) -> None:
    client, server = mock_client()

    def call(params, ctx):
        ctx.progress(1, 2)
        server.notify("notifications/message", {"level": "info", "data": "x"})
        return {"content": [{"type": "text", "text": "done"}]}

    server.handle("tools/call", call)
    inner: list[str] = []
    done = threading.Event()

    def on_note(_n: object) -> None:
        inner.append(client.list_tools()[0].name)
        done.set()

    client.on_notification("notifications/message", on_note)
    result = client.call_tool(
        "t", {}, on_progress=lambda p: inner.append(client.list_tools()[0].name)
    )
    assert result.text == "done"
    assert done.wait(5)
    assert inner == ["t", "t"]
    client.close()
    server.transport.close()


def test_close_from_another_thread_during_a_call_fails_it_at_once(leaks) -> None:
    client = connect(fault_peer("crash", "1000"))  # holds every call
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.call_tool("hold", {}, timeout=30)
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    time.sleep(0.2)  # let the call reach the server (its outcome is the same either way)
    started = time.monotonic()
    client.close()
    caller.join(5)
    assert not caller.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionClosed)
    assert time.monotonic() - started < 3


def _close(client: Client, barrier: threading.Barrier, errors: list[BaseException]) -> None:
    try:
        barrier.wait(5)
        client.close()
    except BaseException as exc:
        errors.append(exc)


def test_close_twice_and_from_eight_threads_at_once(leaks) -> None:
    for _ in range(3):
        client = connect(fault_peer("echo"))
        assert client.call_tool("t", {"text": "a"}).text == "a"
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        threads = [
            threading.Thread(target=_close, args=(client, barrier, errors)) for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        client.close()
        client.close()
        assert not errors and client.state == "closed"
        with pytest.raises(ConnectionClosed):
            client.call_tool("t", {})


def test_ctrl_c_at_every_stage_of_a_call_leaves_the_client_usable(leaks) -> None:
    """A simulated Ctrl-C lands at 40 moments spread over a call: before it is written, while
    it waits, as its answer arrives, just after. Each call returns its own answer or raises
    KeyboardInterrupt; afterwards nothing is pending and answers still correlate."""
    assert threading.current_thread() is threading.main_thread()
    client = connect(fault_peer("slow"))
    session = client._connection.current_session()
    assert session is not None
    # The first call builds the result models (pydantic builds them lazily, and turns an
    # interrupt that lands in that build into a SchemaError): it is made before the loop.
    assert client.call_tool("t", {"text": "first", "delay": 0}).text == "first"
    # CPython drops an interrupt that lands in a weakref callback or a __del__ (printed as
    # "Exception ignored"), and the cyclic collector runs those at any moment (one run lost
    # one in threading's WeakSet of threads): it is off for the loop, so each interrupt lands
    # in the call's own code.
    gc.disable()
    try:
        interrupted, answered = _interrupt_calls(client)
    finally:
        gc.enable()
    print(
        f"\nCtrl-C: {interrupted} interrupts caught, {answered} calls answered before theirs landed"
    )
    assert interrupted >= 20
    assert not session._pending
    for i in range(20):
        assert client.call_tool("t", {"text": str(i), "delay": 0}).text == str(i)
    client.close()


def _interrupt_calls(client: Client) -> tuple[int, int]:
    """40 calls, each with a simulated Ctrl-C a little later than the one before."""
    interrupted = answered = 0
    for step in range(40):
        fired = threading.Event()

        def fire(fired: threading.Event = fired) -> None:
            _thread.interrupt_main()
            fired.set()

        timer = threading.Timer(step * 0.0008, fire)
        text = f"call-{step}"
        try:
            timer.start()
            try:
                assert client.call_tool("t", {"text": text, "delay": 0.015}).text == text
                answered += 1
            finally:
                fired.wait(5)
                for _ in range(1000):  # the interrupt is delivered here if the call was done
                    pass
        except KeyboardInterrupt:
            interrupted += 1
        timer.join()
    return interrupted, answered
