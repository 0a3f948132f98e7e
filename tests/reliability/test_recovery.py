"""``recovery=``: real servers killed and restarted under a client that keeps calling.

stdio: the official SDK fixture server (tests/servers/sdk_server.py) killed with SIGKILL; the
client starts it again. HTTP: the same SDK's Streamable HTTP server stopped and started again
on the same port, in both protocol eras. Nothing here is scripted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import re
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

import mcp_sync
from mcp_sync import Backoff, ConnectionClosed, StdioTransport
from tests.helpers.reliability_support import dead, live_servers
from tests.helpers.support import NODE, PEERS, SERVERS, HttpServer, free_port, wait_until

pytestmark = pytest.mark.timeout(120)

SDK = str(SERVERS / "sdk_server.py")
HTTP_FIXTURE = str(SERVERS / "http_fixture_server.py")
FAST = Backoff(initial_delay=0.05, max_delay=0.5, max_retries=200)
ANSWER = {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "m"}


@contextlib.contextmanager
def logged(text: str) -> Iterator[threading.Event]:
    """An event set once mcp_sync logs a record containing ``text`` (INFO and up)."""
    seen_it = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if text in record.getMessage():
                seen_it.set()

    seen, logger = Seen(), logging.getLogger("mcp_sync")
    level = logger.level
    logger.addHandler(seen)
    logger.setLevel(logging.INFO)
    try:
        yield seen_it
    finally:
        logger.removeHandler(seen)
        logger.setLevel(level)


def kill_the_server(client: mcp_sync.Client) -> int:
    """SIGKILL the one live stdio server and wait until the client knows."""
    (pid,) = wait_until(live_servers)
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: client.state == "disconnected", timeout=10)
    return pid


@pytest.mark.parametrize("protocol", ["handshake", "auto"])
def test_a_stdio_server_killed_twice_is_started_again_with_its_handlers_and_roots(
    protocol: str, leaks: Any
) -> None:
    made: list[StdioTransport] = []

    def make() -> StdioTransport:
        made.append(StdioTransport(sys.executable, [SDK, "stdio"]))
        return made[-1]

    client = mcp_sync.Client(
        "recovery",
        "1",
        protocol=protocol,
        roots=["file:///srv/project"],
        recovery=FAST,
        request_timeout=30,
    )
    client.on_sampling(lambda _params: ANSWER)
    client.connect(make)
    killed = []
    for round_ in range(3):
        assert client.call_tool("add", {"a": round_, "b": 1}).structured_content == {
            "result": round_ + 1
        }
        assert client.call_tool("ask_llm", {"question": "?"}).text == "forty-two"
        assert client.call_tool("list_roots").structured_content == {
            "result": ["file:///srv/project"]
        }
        assert len(live_servers()) == 1
        if round_ < 2:
            killed.append(kill_the_server(client))
    assert len(made) == 3 and client.state == "connected"
    assert not live_servers() & set(killed)
    client.close()
    assert not live_servers()


def test_a_call_in_flight_when_the_server_dies_fails_and_is_never_sent_again(leaks: Any) -> None:
    asked: list[Any] = []
    waiting, release = threading.Event(), threading.Event()

    def sampling(params: Any) -> Any:
        asked.append(params)
        waiting.set()
        release.wait(30)
        return ANSWER

    client = mcp_sync.Client(
        "recovery", "1", protocol="handshake", recovery=FAST, request_timeout=30
    )
    client.on_sampling(sampling)
    client.connect(lambda: StdioTransport(sys.executable, [SDK, "stdio"]))
    outcome: list[BaseException] = []

    def in_flight() -> None:
        try:
            client.call_tool("ask_llm", {"question": "side effects?"})
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    caller = threading.Thread(target=in_flight)
    caller.start()
    assert waiting.wait(30)  # the server is now waiting for our answer: the call is out
    kill_the_server(client)
    caller.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionClosed)
    message = str(outcome[0])  # says what happened, and not "closed for good"
    assert "not sent again" in message and "next call reconnects" in message, message
    assert "closed for good" not in message and "create a new Client" not in message, message
    assert outcome[0].exit_status == -9
    release.set()
    # the next calls reconnect; the failed call was not replayed on the new server
    assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}
    assert client.call_tool("ask_llm", {"question": "again"}).text == "forty-two"
    assert len(asked) == 2
    client.close()


def test_a_call_made_the_moment_the_server_died_is_sent_on_the_new_one(leaks: Any) -> None:
    """Whether or not the client has seen the death yet, a call made after it succeeds: the
    write to a dead server fails (nothing was sent), so the call is sent again."""
    client = mcp_sync.connect(
        lambda: StdioTransport(sys.executable, [SDK, "stdio"]),
        protocol="handshake",
        recovery=FAST,
        request_timeout=30,
    )
    for n in range(3):
        assert client.call_tool("add", {"a": n, "b": n}).structured_content == {"result": 2 * n}
        (pid,) = live_servers()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda pid=pid: dead(pid), timeout=10)  # dead, maybe not yet seen
    assert client.call_tool("add", {"a": 5, "b": 5}).structured_content == {"result": 10}
    client.close()


def test_resource_subscriptions_are_made_again_on_the_new_server(leaks: Any) -> None:
    """server-everything sends resources/updated only for URIs the session subscribed to: an
    update after the restart shows the client subscribed again on its own."""
    everything = str(PEERS / "@modelcontextprotocol/server-everything/dist/index.js")
    client = mcp_sync.connect(
        lambda: StdioTransport(str(NODE), [everything, "stdio"]),
        recovery=FAST,
        request_timeout=30,
    )
    uri = client.list_resources()[0].uri
    updates: queue.Queue[str] = queue.Queue()
    client.subscribe_resource(uri, updates.put)
    (pid,) = wait_until(lambda: live_servers("index.js"))
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: client.state == "disconnected", timeout=10)
    client.call_tool("toggle-subscriber-updates", {})  # reconnects, then starts the updates
    assert updates.get(timeout=30) == uri
    client.close()


def test_a_2026_listen_is_made_again_on_the_new_server(leaks: Any) -> None:
    client = mcp_sync.connect(
        lambda: StdioTransport(sys.executable, [SDK, "stdio"]),
        recovery=FAST,
        request_timeout=30,
    )
    assert client.era == "stateless"
    changes: queue.Queue[str] = queue.Queue()
    client.listen(tools_list_changed=True, callback=lambda n: changes.put(n.method))
    kill_the_server(client)
    assert client.call_tool("poke").text == "poked"  # reconnects, listens again, then pokes
    assert changes.get(timeout=30) == "notifications/tools/list_changed"
    client.close()


def test_threads_that_find_the_connection_lost_share_one_restart(leaks: Any) -> None:
    made = []

    def make() -> StdioTransport:
        made.append(1)
        return StdioTransport(sys.executable, [SDK, "stdio"])

    client = mcp_sync.connect(make, protocol="handshake", recovery=FAST, request_timeout=30)
    assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
    kill_the_server(client)
    start = threading.Barrier(8)

    def call(n: int) -> Any:
        start.wait()
        return client.call_tool("add", {"a": n, "b": n}).structured_content["result"]

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(call, range(8))) == [2 * n for n in range(8)]
    assert len(made) == 2 and len(live_servers()) == 1
    client.close()


def test_a_server_from_a_config_entry_is_started_again(leaks: Any) -> None:
    config = {"mcpServers": {"sdk": {"command": sys.executable, "args": [SDK, "stdio"]}}}
    client = mcp_sync.connect("sdk", config=config, protocol="handshake", recovery=FAST)
    assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
    kill_the_server(client)
    assert client.call_tool("add", {"a": 2, "b": 2}).text == "4"
    client.close()


def test_without_a_transport_factory_a_closed_transport_is_not_replaced(leaks: Any) -> None:
    client = mcp_sync.Client("recovery", "1", protocol="handshake", recovery=FAST)
    client.connect(StdioTransport(sys.executable, [SDK, "stdio"]))
    kill_the_server(client)
    with pytest.raises(mcp_sync.InvalidStateError, match="give it a function that returns"):
        client.list_tools()
    client.close()


# -- HTTP: the official SDK server restarted on the same port -------------------------------


def sdk_http_server(port: int | None = None) -> HttpServer:
    """The official SDK's Streamable HTTP server on ``port`` (a free one by default), to start
    with ``with``."""
    port = free_port() if port is None else port
    return HttpServer([sys.executable, HTTP_FIXTURE, "streamable-http", str(port)], port)


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
def test_an_http_server_restarted_on_the_same_port_is_used_again(protocol: str, leaks: Any) -> None:
    with sdk_http_server() as server:
        url = server.url()
        client = mcp_sync.connect(url, protocol=protocol, recovery=FAST, request_timeout=30)
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    # down: a call waits for it within its own timeout, then says why it gave up
    with pytest.raises(ConnectionClosed, match="could not reconnect.*connection refused"):
        client.call_tool("add", {"a": 1, "b": 2}, timeout=1)
    # restarted while a call waits: the call goes through once the server is back
    restarted = sdk_http_server(server.port)
    starter = threading.Thread(target=restarted.__enter__)
    starter.start()
    try:
        assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}
        assert [tool.name for tool in client.list_tools()][:2] == ["add", "count"]
        assert client.protocol_version == (protocol if protocol != "handshake" else "2025-11-25")
    finally:
        starter.join()
        client.close()
        restarted.__exit__()


def test_a_session_the_http_server_forgot_is_renewed_and_the_call_sent_again(leaks: Any) -> None:
    """Before recovery=, only auto_reinitialize=True healed this, and never for a tool call:
    ``SessionExpired`` came back for every call until the client was replaced."""
    with sdk_http_server() as server:
        transport = mcp_sync.StreamableHttpTransport(server.url())
        client = mcp_sync.Client(protocol="handshake", recovery=True).connect(transport)
        for _ in range(2):
            old = transport.session_id
            assert old
            requests.delete(server.url(), headers={"Mcp-Session-Id": old}, timeout=5)
            # 404 for an unknown session: the server did not run the call, so it is re-sent
            assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
            assert transport.session_id not in (None, old)
        client.close()


def test_backoff_waits_honour_the_policy_between_refused_attempts(leaks: Any) -> None:
    """Nothing listens: every attempt is refused, the budget of attempts ends the call."""
    with sdk_http_server() as server:
        client = mcp_sync.connect(
            server.url(),
            protocol="handshake",
            request_timeout=30,
            recovery=Backoff(max_retries=3, initial_delay=0.01, jitter=0),
        )
    with pytest.raises(ConnectionClosed, match=r"could not reconnect \(4 attempts\)"):
        client.list_tools()
    client.close()


def test_close_ends_a_call_that_waits_to_reconnect(leaks: Any) -> None:
    with sdk_http_server() as server:
        client = mcp_sync.connect(
            server.url(),
            protocol="handshake",
            request_timeout=120,
            recovery=Backoff(initial_delay=0.2, max_delay=0.5, max_retries=1000),
        )
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.list_tools()
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    caller = threading.Thread(target=call)
    try:
        with logged("reconnecting") as retrying:
            caller.start()
            assert retrying.wait(30)  # refused: the call now waits between attempts
            client.close()
            caller.join(10)
    finally:
        client.close()
    assert not caller.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ConnectionClosed)
    assert "closed" in str(outcome[0])


def test_a_host_that_does_not_resolve_counts_as_a_request_the_server_never_saw() -> None:
    """A failed name lookup (``socket.gaierror``, matched by name so that ``import mcp_sync``
    does not import ``socket``) is safe to send again once the host resolves."""
    from mcp_sync._connection.recovery import refused_unprocessed

    with pytest.raises(mcp_sync.TransportError, match="cannot resolve host") as failed:
        mcp_sync.connect("http://mcp.invalid:9/mcp", protocol="handshake", request_timeout=10)
    assert refused_unprocessed(failed.value)


def test_a_reconnection_cut_short_by_the_call_s_timeout_still_names_why_the_server_was_unreachable(
    leaks: Any,
) -> None:
    """The last attempt of a call ran out of the call's time: the error names that, and what
    the attempt before it met (here: connection refused, then a socket that never answers;
    under load, a refused attempt followed by one begun with no time left reads the same)."""
    with sdk_http_server() as server:
        client = mcp_sync.connect(
            server.url(),
            protocol="handshake",
            request_timeout=30,
            recovery=Backoff(initial_delay=0.5, max_delay=0.5, max_retries=100, jitter=0),
        )
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.list_tools(timeout=3)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    caller = threading.Thread(target=call)
    try:
        with logged("could not reconnect") as refused:
            caller.start()
            assert refused.wait(10)
            # the port listens again, but nothing there ever answers
            with socket.create_server(("127.0.0.1", server.port)):
                caller.join(30)
    finally:
        client.close()
    assert not caller.is_alive()
    (error,) = outcome
    assert isinstance(error, ConnectionClosed)
    assert isinstance(error.cause, mcp_sync.RequestTimeout), error
    message = str(error)
    assert "timed out after 3 s" in message
    assert re.search(r"the attempt before it: cannot connect to \S+: connection refused", message)
