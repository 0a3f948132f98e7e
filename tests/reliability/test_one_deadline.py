"""One deadline per user call (mcp_sync/_rules/deadline.py), walked over every surface that waits: a
``connect()``, a call, a call whose connection must be recovered first, and a recovery that
meets a server which never answers, each in the handshake era (``protocol="auto"`` and
``"handshake"``) and the 2026-07-28 era; and a ``listen()`` (its ``subscriptions/listen`` is
a 2026-07-28 request) that is never acknowledged, or must recover its connection first. Each must end by its timeout plus a small bound (the
bound is generous for a loaded machine, and below what each took before: the probe's 2 s, or
the recovery's time, added to the timeout). The sign-in an HTTP 401 starts is walked in
tests/oauth/test_oauth_device.py.

Real servers where one can show it: the SDK fixture server over stdio, stopped with SIGSTOP
(a server that never answers a call), and the same server started behind a delay (a slow
cold start). A server that never answers its handshake is the scripted mute peer
(tests/servers/stdio_mute.py): no real server can be made to hang there on demand.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import mcp_sync
from mcp_sync import Backoff, ConnectionClosed, RequestTimeout, StdioTransport
from tests.helpers.reliability_support import started_late
from tests.helpers.support import SERVERS, wait_until

pytestmark = pytest.mark.timeout(120)

SDK = str(SERVERS / "sdk_server.py")
MUTE = str(SERVERS / "stdio_mute.py")
#: What a user call may take past its timeout on a loaded machine: less than the 2 s probe
#: window or the recovery that the calls below used to add.
SLACK = 1.5
PROTOCOLS = ["auto", "handshake", "2026-07-28"]
FAST = Backoff(initial_delay=0.05, max_delay=0.5, max_retries=200)


def sdk() -> StdioTransport:
    return StdioTransport(sys.executable, [SDK, "stdio"])


def slow_sdk(delay: float = 1.5) -> StdioTransport:
    """The SDK fixture server, started ``delay`` seconds late (a cold start)."""
    program, *args = started_late(delay, sys.executable, SDK, "stdio")
    return StdioTransport(program, args)


def mute() -> StdioTransport:
    return StdioTransport(sys.executable, [MUTE])


def timed(call: Callable[[], Any]) -> tuple[BaseException, float]:
    """The error ``call()`` raised, and how long it took to."""
    started = time.monotonic()
    with pytest.raises(mcp_sync.McpError) as raised:
        call()
    return raised.value, time.monotonic() - started


def the_timeout_in(error: BaseException) -> RequestTimeout:
    """The RequestTimeout that ``error`` is, or that caused it."""
    seen: BaseException | None = error
    while seen is not None and not isinstance(seen, RequestTimeout):
        seen = seen.__cause__ or seen.__context__
    assert seen is not None, f"no RequestTimeout behind {error!r}"
    return seen


@contextmanager
def recovering(
    protocol: str,
    then: Callable[[], StdioTransport],
    on_elicitation: Any = None,
    request_timeout: float = 30.0,
) -> Iterator[mcp_sync.Client]:
    """A client with recovery= (and ``on_elicitation``), connected to the SDK server, which is
    then killed: its next call recovers with ``then()``."""
    made: list[StdioTransport] = []

    def make() -> StdioTransport:
        made.append(sdk() if not made else then())
        return made[-1]

    client = mcp_sync.Client(
        "deadline", "1", protocol=protocol, recovery=FAST, request_timeout=request_timeout
    )
    if on_elicitation is not None:
        client.on_elicitation(on_elicitation)
    client.connect(make, timeout=30)
    try:
        pid = made[0].pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: client.state == "disconnected", timeout=10)
        yield client
    finally:
        client.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_connect_to_a_server_that_never_answers_ends_by_its_timeout(protocol: str) -> None:
    """Before, in auto mode the handshake was given the whole timeout again after the 2 s
    probe: connect(timeout=3) raised "initialize timed out after 3 s" after 5 s."""
    error, took = timed(
        lambda: mcp_sync.connect([sys.executable, MUTE], timeout=3, protocol=protocol)
    )
    assert isinstance(error, RequestTimeout) and error.timeout == 3, error
    assert took < 3 + SLACK, f"connect(timeout=3) took {took:.1f} s"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_the_server_never_answers_ends_by_its_timeout(protocol: str) -> None:
    transport = sdk()
    with mcp_sync.Client("deadline", "1", protocol=protocol).connect(transport, timeout=30) as c:
        assert transport.pid is not None
        os.kill(transport.pid, signal.SIGSTOP)
        try:
            error, took = timed(lambda: c.call_tool("add", {"a": 1, "b": 2}, timeout=2))
        finally:
            os.kill(transport.pid, signal.SIGCONT)
    assert isinstance(error, RequestTimeout) and error.timeout == 2, error
    assert took < 2 + SLACK, f"call_tool(timeout=2) took {took:.1f} s"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_recovery_that_meets_a_server_that_never_answers_ends_by_the_calls_timeout(
    protocol: str,
) -> None:
    """Before, in auto mode the recovery's handshake got the whole timeout again after the
    probe: 5 s for a call with timeout=3."""
    with recovering(protocol, mute) as client:
        error, took = timed(lambda: client.call_tool("add", {"a": 1, "b": 1}, timeout=3))
    assert isinstance(error, ConnectionClosed) and "could not reconnect" in str(error), error
    assert the_timeout_in(error).timeout == 3
    assert took < 3 + SLACK, f"call_tool(timeout=3) took {took:.1f} s"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_time_a_recovery_takes_comes_out_of_the_calls_timeout(protocol: str) -> None:
    """The call's connection is lost; the new server starts slowly, then the call is never
    answered (the user never answers the elicitation it asks for). Before, the call was
    sent after the recovery with its whole timeout again: recovery plus timeout."""
    released = threading.Event()

    def never_answers(params: Any, ctx: Any) -> Any:
        while not (released.wait(0.05) or ctx.signal.aborted):
            pass
        return {"action": "decline"}

    with recovering(protocol, slow_sdk, never_answers) as client:
        try:
            error, took = timed(lambda: client.call_tool("ask_name", {}, timeout=8))
        finally:
            released.set()  # (before close())
    assert the_timeout_in(error).timeout == 8, error
    assert took < 8 + SLACK, f"call_tool(timeout=8) took {took:.1f} s"


def ignore(notification: mcp_sync.Notification) -> None:
    pass


@pytest.mark.parametrize("limit", ["timeout", "max_total_timeout"])
def test_a_listen_the_server_never_acknowledges_ends_by_its_deadline(limit: str) -> None:
    """Before, listen() waited for the acknowledgement by a timeout of its own (its
    ``timeout=``, else ``request_timeout``): ``max_total_timeout=2`` did not cap it (20 s)."""
    capped = limit == "max_total_timeout"
    options: dict[str, Any] = {"request_timeout": 20.0}
    if capped:
        options["max_total_timeout"] = 2.0
    transport = sdk()
    with mcp_sync.Client("deadline", "1", **options).connect(transport, timeout=30) as client:
        assert client.era == "stateless" and transport.pid is not None
        os.kill(transport.pid, signal.SIGSTOP)
        try:
            error, took = timed(
                lambda: client.listen(
                    tools_list_changed=True, callback=ignore, timeout=None if capped else 2
                )
            )
        finally:
            os.kill(transport.pid, signal.SIGCONT)
    assert isinstance(error, RequestTimeout) and error.timeout == 2, error
    assert took < 2 + SLACK, f"listen ({limit}=2) took {took:.1f} s"


@pytest.mark.parametrize("protocol", ["auto", "2026-07-28"])
def test_a_listen_whose_connection_must_be_recovered_ends_by_its_timeout(protocol: str) -> None:
    """Before, listen() recovered its connection by a deadline of its own
    (``request_timeout``, 20 s here), then waited its whole timeout again for the
    acknowledgement."""
    with recovering(protocol, mute, request_timeout=20.0) as client:
        assert client.era == "stateless"
        error, took = timed(
            lambda: client.listen(tools_list_changed=True, callback=ignore, timeout=3)
        )
    assert isinstance(error, ConnectionClosed) and "could not reconnect" in str(error), error
    assert the_timeout_in(error).timeout == 3
    assert took < 3 + SLACK, f"listen(timeout=3) took {took:.1f} s"
