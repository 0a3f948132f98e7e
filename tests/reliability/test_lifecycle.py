"""The client's lifecycle under a dying server: truthful ``state``, ``on_close``, clear errors.

Runs against a real server process (the scripted fault peer of tests/servers, which can be told
to die with calls in flight; a real server cannot be made to do that on demand).
"""

from __future__ import annotations

import threading
import time

import pytest
from reliability_support import connect, fault_peer

from mcp_sync import Client
from mcp_sync.errors import ConnectionClosed, InvalidStateError

pytestmark = pytest.mark.timeout(60)


def _wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


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
    client = Client("lifecycle", "1", protocol="legacy")
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
    assert _wait_for(lambda: states == ["closed"])
    client.close()
