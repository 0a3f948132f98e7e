"""The fault lattice: each stateful operation under a condition that services meet, where no
other test covers the pair (docs/reliability.md, "The fault lattice", maps every cell).

Everything here runs against real servers: the official SDK's fixture server over stdio
(tests/servers/sdk_server.py) and its Streamable HTTP server on 127.0.0.1. A stall is the real
server process stopped with SIGSTOP and resumed with SIGCONT; a stdio server stalled before
it answers anything is started through ``sh``, which stops itself and then execs the server.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

import mcp_sync
from mcp_sync import ConnectionClosed, InvalidStateError, RequestTimeout, StdioTransport
from tests.helpers.support import child_pids, wait_until
from tests.reliability.test_recovery import (
    FAST,
    SDK,
    kill_the_server,
    live_servers,
    sdk_http_server,
)
from tests.test_fork import in_child

pytestmark = pytest.mark.timeout(120)

#: Every bound below is generous: what a test proves is "did not wait out a long timeout".
PROMPT = 10.0


def process_state(pid: int) -> str:
    """The state letter of ``pid`` in /proc ("T" stopped, "Z" zombie), or "" once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@contextlib.contextmanager
def stalled(pid: int) -> Iterator[None]:
    """The process is stopped (SIGSTOP) inside the block and resumed (SIGCONT) after it."""
    os.kill(pid, signal.SIGSTOP)
    wait_until(lambda: process_state(pid) == "T", timeout=PROMPT)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def stdio_server() -> StdioTransport:
    return StdioTransport(sys.executable, [SDK, "stdio"])


def stdio_server_stalled_at_start() -> StdioTransport:
    """The SDK server behind a shell that stops itself first: it reads nothing until resumed."""
    script = 'kill -STOP $$; exec "$0" "$@"'
    return StdioTransport("sh", ["-c", script, sys.executable, SDK, "stdio"])


def stalled_at_start() -> int:
    """The pid of the one stdio server, once it has stopped itself."""
    (pid,) = wait_until(lambda: {p for p in child_pids() if process_state(p) == "T"}, PROMPT)
    return pid


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()``'s result (or the exception it raised) and how long it took."""
    started = time.monotonic()
    try:
        outcome = call()
    except Exception as exc:
        outcome = exc
    return outcome, time.monotonic() - started


@contextlib.contextmanager
def connected(kind: str, **options: Any) -> Iterator[tuple[mcp_sync.Client, int]]:
    """A client of the SDK server over ``kind`` ("stdio" or "http"), and the server's pid."""
    options.setdefault("request_timeout", 30)
    if kind == "stdio":
        client = mcp_sync.connect(stdio_server, protocol="handshake", **options)
        (pid,) = live_servers()
        try:
            yield client, pid
        finally:
            client.close()
        return
    with sdk_http_server() as server:
        client = mcp_sync.connect(server.url(), protocol="handshake", **options)
        try:
            yield client, server.process.pid
        finally:
            client.close()


def add_from_threads(client: mcp_sync.Client, threads: int, **options: Any) -> list[Any]:
    """``add(n, n)`` from ``threads`` threads started together; each result or exception."""
    start = threading.Barrier(threads)

    def call(n: int) -> Any:
        start.wait()
        try:
            return client.call_tool("add", {"a": n, "b": n}, **options).structured_content
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(call, range(threads)))


# -- connect ---------------------------------------------------------------------------------


def test_sixteen_threads_connecting_at_once_each_get_their_own_session(leaks: Any) -> None:
    with sdk_http_server() as server:
        start = threading.Barrier(16)

        def connect_and_call(n: int) -> tuple[str | None, Any]:
            start.wait()
            transport = mcp_sync.StreamableHttpTransport(server.url())
            with mcp_sync.Client(protocol="handshake", request_timeout=60).connect(transport) as c:
                result = c.call_tool("add", {"a": n, "b": 1}).structured_content
                return transport.session_id, result

        with ThreadPoolExecutor(16) as pool:
            outcomes = list(pool.map(connect_and_call, range(16)))
    assert [result for _, result in outcomes] == [{"result": n + 1} for n in range(16)]
    assert len({session for session, _ in outcomes}) == 16


def test_twelve_threads_connecting_one_client_at_once_connect_it_once(leaks: Any) -> None:
    made: list[StdioTransport] = []

    def make() -> StdioTransport:
        made.append(stdio_server())
        return made[-1]

    client = mcp_sync.Client(protocol="handshake", request_timeout=60)
    start = threading.Barrier(12)

    def connect() -> Any:
        start.wait()
        try:
            return client.connect(make)
        except InvalidStateError as exc:
            return exc

    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(lambda _: connect(), range(12)))
    refused = [o for o in outcomes if isinstance(o, InvalidStateError)]
    assert outcomes.count(client) == 1 and len(refused) == 11, outcomes
    assert all("cannot connect: the client is connect" in str(o) for o in refused), refused
    assert len(made) == 1 and len(live_servers()) == 1
    assert client.call_tool("add", {"a": 2, "b": 3}).structured_content == {"result": 5}
    client.close()
    assert not live_servers()


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_close_from_another_thread_ends_a_connect_to_a_stalled_server(
    kind: str, leaks: Any
) -> None:
    client = mcp_sync.Client(protocol="handshake")
    outcome: list[Any] = []
    with contextlib.ExitStack() as stack:
        if kind == "stdio":
            target: Any = stdio_server_stalled_at_start
        else:
            server = stack.enter_context(sdk_http_server())
            stack.enter_context(stalled(server.process.pid))
            target = mcp_sync.StreamableHttpTransport(server.url())
        connecting = threading.Thread(
            target=lambda: outcome.append(timed(lambda: client.connect(target, timeout=60)))
        )
        connecting.start()
        if kind == "stdio":
            stalled_at_start()
        wait_until(lambda: client.state == "connecting", timeout=PROMPT)
        client.close()
        connecting.join(PROMPT * 2)
        assert not connecting.is_alive()
    ((error, took),) = outcome
    assert isinstance(error, ConnectionClosed), error
    assert took < PROMPT * 2, took
    assert client.state == "closed"
    if kind == "stdio":
        assert not child_pids() - leaks.children  # the stopped server was killed


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_a_connect_to_a_stalled_server_ends_within_its_timeout_and_works_once_resumed(
    kind: str, leaks: Any
) -> None:
    with contextlib.ExitStack() as stack:
        if kind == "stdio":
            # stalled for good: connect gives up at its timeout, and the server is stopped
            error, took = timed(
                lambda: mcp_sync.connect(
                    stdio_server_stalled_at_start, protocol="handshake", timeout=2
                )
            )
            assert isinstance(error, RequestTimeout), error
            assert took < PROMPT, took
            wait_until(lambda: not child_pids() - leaks.children, timeout=PROMPT)
            # resumed during the handshake: connect waits for it and succeeds
            resumer = threading.Thread(target=lambda: os.kill(stalled_at_start(), signal.SIGCONT))
            resumer.start()
            client = mcp_sync.connect(
                stdio_server_stalled_at_start, protocol="handshake", timeout=60
            )
            resumer.join()
        else:
            server = stack.enter_context(sdk_http_server())
            with stalled(server.process.pid):
                error, took = timed(
                    lambda: mcp_sync.connect(server.url(), protocol="handshake", timeout=2)
                )
            assert isinstance(error, RequestTimeout), error
            assert took < PROMPT, took
            client = mcp_sync.connect(server.url(), protocol="handshake", timeout=60)
        with client:
            assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


# -- call ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_calls_to_a_stalled_server_end_within_their_timeout_and_it_works_once_resumed(
    kind: str, leaks: Any
) -> None:
    with connected(kind) as (client, pid):
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}
        with stalled(pid):
            outcomes = add_from_threads(client, 8, timeout=2)
        assert all(isinstance(o, RequestTimeout) for o in outcomes), outcomes
        # resumed: the late answers to those calls are dropped; new calls get their own
        assert add_from_threads(client, 16) == [{"result": 2 * n} for n in range(16)]
        assert client.state == "connected"


# -- recovery of a stdio server --------------------------------------------------------------


def test_a_stalled_server_under_recovery_times_out_and_is_not_restarted(leaks: Any) -> None:
    """A stopped server is not a dead one: its calls time out, no second server starts, and
    once resumed the same server answers."""
    made: list[StdioTransport] = []

    def make() -> StdioTransport:
        made.append(stdio_server())
        return made[-1]

    client = mcp_sync.connect(make, protocol="handshake", recovery=FAST, request_timeout=30)
    (pid,) = live_servers()
    with stalled(pid):
        started = time.monotonic()
        outcomes = add_from_threads(client, 8, timeout=2)
        assert time.monotonic() - started < PROMPT
        assert live_servers() == {pid}
    assert all(isinstance(o, RequestTimeout) for o in outcomes), outcomes
    assert add_from_threads(client, 8) == [{"result": 2 * n} for n in range(8)]
    assert len(made) == 1 and live_servers() == {pid}
    client.close()
    assert not live_servers()


def test_a_forked_child_does_not_recover_the_parents_client(leaks: Any) -> None:
    """The child's call fails at once with the fork error; recovery starts no server there,
    and the parent's client still recovers on its own next call."""
    made: list[int] = []

    def make() -> StdioTransport:
        made.append(os.getpid())
        return stdio_server()

    client = mcp_sync.connect(make, protocol="handshake", recovery=FAST, request_timeout=30)
    kill_the_server(client)

    def child() -> dict[str, Any]:
        error, took = timed(lambda: client.call_tool("add", {"a": 1, "b": 2}))
        return {
            "error": f"{type(error).__name__}: {error}",
            "took": took,
            "made_here": made.count(os.getpid()),
            "children": sorted(child_pids()),
        }

    seen = in_child(child)
    assert seen["error"].startswith("InvalidStateError") and "fork" in seen["error"], seen
    assert seen["took"] < PROMPT and seen["made_here"] == 0 and seen["children"] == [], seen
    assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}
    assert len(made) == 2 and len(live_servers()) == 1
    client.close()


# -- renewal of an HTTP session --------------------------------------------------------------


def test_a_renewal_against_a_stalled_server_ends_within_the_timeout_and_renews_once_resumed(
    leaks: Any,
) -> None:
    with sdk_http_server() as server:
        transport = mcp_sync.StreamableHttpTransport(server.url())
        client = mcp_sync.Client(protocol="handshake", recovery=FAST, request_timeout=30)
        client.connect(transport)
        old = transport.session_id
        requests.delete(server.url(), headers={"Mcp-Session-Id": old}, timeout=5)
        with stalled(server.process.pid):
            error, took = timed(lambda: client.call_tool("add", {"a": 1, "b": 2}, timeout=2))
        assert isinstance(error, RequestTimeout), error
        assert took < PROMPT, took
        assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}
        assert transport.session_id not in (None, old)
        client.close()


# -- close -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_close_of_a_client_whose_server_is_stalled_is_bounded(kind: str, leaks: Any) -> None:
    """A stopped stdio server reads no EOF and holds SIGTERM until resumed: close() kills
    it. A stopped HTTP server never answers the DELETE: close() gives up on it."""
    with connected(kind) as (client, pid):
        assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}
        with stalled(pid):
            _, took = timed(client.close)
            assert took < PROMPT, took
            assert client.state == "closed"
            if kind == "stdio":
                wait_until(lambda: process_state(pid) in ("", "Z"), timeout=PROMPT)


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_close_while_sixteen_threads_call_fails_every_call_at_once(kind: str, leaks: Any) -> None:
    """The server is stopped so that all sixteen calls are still out when close() comes."""
    with connected(kind) as (client, pid), stalled(pid):
        calls = ThreadPoolExecutor(16)
        outcomes = [
            calls.submit(timed, lambda n=n: client.call_tool("add", {"a": n, "b": n}, timeout=60))
            for n in range(16)
        ]
        wait_until(lambda: len(client._connection.current_session()._pending) == 16, PROMPT)
        _, closing = timed(client.close)
        results = [future.result(PROMPT) for future in outcomes]
        calls.shutdown()
    assert all(isinstance(error, ConnectionClosed) for error, _ in results), results
    assert all(took < PROMPT for _, took in results) and closing < PROMPT, (results, closing)
