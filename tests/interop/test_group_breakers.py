"""A ClientGroup's circuit breakers, against real servers killed and restarted.

stdio: the official SDK fixture server (tests/servers/sdk_server.py) killed with SIGKILL and
started again by the client's ``recovery=``; while it is "down" its command is missing, as
while a server is being reinstalled. HTTP: the SDK's Streamable HTTP fixture server stopped
and started again on the same port. Nothing here is scripted. The cool-downs run on a clock
the test turns (``Clock``): no test sleeps or times anything tightly.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

import mcp_sync
from mcp_sync import (
    Backoff,
    CircuitBreaker,
    Client,
    ClientGroup,
    ConnectionClosed,
    McpError,
    RpcError,
    ServerUnavailable,
    StdioTransport,
    StreamableHttpTransport,
)
from tests.helpers.support import (
    PYTHON,
    SERVERS,
    HttpServer,
    child_pids,
    client_threads,
    free_port,
    wait_until,
)

pytestmark = pytest.mark.timeout(150)

SDK = [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]
MISSING = str(SERVERS / "no-such-server")  # the server's command, while it is gone
#: A reconnection gives up after a few quick attempts: a call to a down server fails soon.
BRIEF = Backoff(initial_delay=0.01, max_delay=0.05, max_retries=2, jitter=0)
#: A reconnection keeps trying within the call's timeout: a call waits for the server.
PATIENT = Backoff(initial_delay=0.05, max_delay=0.5, max_retries=1000)


class Clock:
    """A monotonic clock the test turns by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sdk_server_pids() -> set[int]:
    found = set()
    for pid in child_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(arg.endswith(b"sdk_server.py") for arg in argv):
            found.add(pid)
    return found


def http_server(port: int) -> HttpServer:
    fixture = str(SERVERS / "http_fixture_server.py")
    return HttpServer([PYTHON, fixture, "streamable-http", str(port)], port)


def names(group: ClientGroup) -> list[str]:
    return [tool.name for tool in group.list_tools()]


def test_a_killed_stdio_server_fails_fast_drops_out_and_returns_on_the_trial_call(time_cmd):
    up = threading.Event()
    up.set()
    made: list[str] = []

    def make() -> StdioTransport:
        made.append("up" if up.is_set() else "down")
        return StdioTransport(*(SDK[:1] if up.is_set() else [MISSING]), SDK[1:])

    clock = Clock()
    policy = CircuitBreaker(threshold=2, cool_down=30, clock=clock)
    with ClientGroup() as group:
        group.add("time", time_cmd, request_timeout=20)
        sdk = group.add("sdk", make, protocol="handshake", recovery=BRIEF, breaker=policy)
        assert "sdk__add" in names(group)
        (pid,) = sdk_server_pids()
        up.clear()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: sdk.state == "disconnected", timeout=10)

        # each call tries to start it again, and fails: two in a row open the breaker
        for _ in range(2):
            with pytest.raises(ConnectionClosed, match="could not reconnect") as lost:
                group.call_tool("sdk__add", {"a": 1, "b": 2})
        status = group.breakers["sdk"]
        assert (status.state, status.failures, status.times_opened) == ("open", 2, 1)
        assert status.retry_in == 30

        # open: calls fail fast with the reason, and nothing tries to start the server
        tried = len(made)
        clock.now += 10
        with pytest.raises(ServerUnavailable) as failed:
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        assert failed.value.server == "sdk" and failed.value.failures == 2
        assert failed.value.retry_in == 20
        assert isinstance(failed.value.last_error, ConnectionClosed)
        assert "'sdk'" in str(failed.value) and "in 20 s" in str(failed.value)
        assert len(made) == tried

        # its tools, prompts and resources drop out of the listings, with the reason
        assert names(group) == ["time__get_current_time", "time__convert_time"]
        assert isinstance(group.failures["sdk"], ServerUnavailable)
        assert group.list_prompts() == [] and list(group.failures) == ["sdk"]
        assert group.list_resources() == [] and list(group.failures) == ["sdk"]
        assert group.call_tool("time__get_current_time", {"timezone": "UTC"}).is_error is False
        assert len(made) == tried

        # after the cool-down the next call is the trial: the reconnect, which starts it again
        # (recovery's own window after its spent Backoff, a few ms here, is over by then, as a
        # real cool-down of seconds always outlasts it)
        retry_at = getattr(lost.value, "retry_at", 0.0)
        wait_until(lambda: time.monotonic() >= retry_at, timeout=10)
        up.set()
        clock.now += 21
        assert group.call_tool("sdk__add", {"a": 1, "b": 2}).structured_content == {"result": 3}
        assert made[tried:] == ["up"]
        status = group.breakers["sdk"]
        assert (status.state, status.failures, status.times_opened) == ("closed", 0, 1)
        assert "sdk__add" in names(group) and group.failures == {}


def test_a_failed_trial_opens_the_breaker_for_another_cool_down(leaks_free):
    client = Client("breakers", "1", protocol="handshake", request_timeout=20)
    client.connect(StdioTransport(SDK[0], SDK[1:]))
    clock = Clock()
    with ClientGroup(breaker=CircuitBreaker(threshold=1, cool_down=5, clock=clock)) as group:
        group.add("sdk", client)
        (pid,) = sdk_server_pids()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: client.state == "closed", timeout=10)
        with pytest.raises(ConnectionClosed):
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        with pytest.raises(ServerUnavailable, match="in 5 s"):
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        clock.now += 5
        with pytest.raises(TypeError):  # a trial that proves nothing: the next call is one
            group.call_tool("sdk__add", {"a": 1, "b": 2}, no_such_option=True)
        assert group.breakers["sdk"].state == "half-open"
        with pytest.raises(ConnectionClosed):  # the trial: without recovery= it fails again
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        status = group.breakers["sdk"]
        assert (status.state, status.failures, status.times_opened) == ("open", 2, 2)
        with pytest.raises(ServerUnavailable, match="2 calls in a row"):
            group.call_tool("sdk__add", {"a": 1, "b": 2})


def test_tool_errors_and_rpc_errors_are_answers_that_never_open_it():
    with ClientGroup(breaker=CircuitBreaker(threshold=1)) as group:
        group.add("sdk", SDK, protocol="handshake", request_timeout=20)
        names(group)
        for _ in range(3):
            assert group.call_tool("sdk__fail", {"message": "no"}).is_error
            with pytest.raises(RpcError):
                group.get_prompt("sdk__no_such_prompt")
            with pytest.raises(RpcError):
                group.read_resource("nowhere://x", server="sdk")
        status = group.breakers["sdk"]
        assert (status.state, status.failures, status.times_opened) == ("closed", 0, 0)
        assert group.call_tool("sdk__add", {"a": 2, "b": 2}).structured_content == {"result": 4}


def test_a_breaker_can_be_turned_off_per_server():
    client = Client("breakers", "1", protocol="handshake", request_timeout=20)
    client.connect(StdioTransport(SDK[0], SDK[1:]))
    with ClientGroup(breaker=CircuitBreaker(threshold=1)) as group:
        group.add("sdk", client, breaker=None)
        assert "sdk" not in group.breakers
        (pid,) = sdk_server_pids()
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: client.state == "closed", timeout=10)
        for _ in range(3):  # every call goes to the client, and says what it found
            with pytest.raises(ConnectionClosed):
                group.call_tool("sdk__add", {"a": 1, "b": 2})
        group.set_breaker("sdk", CircuitBreaker(threshold=1))
        with pytest.raises(ConnectionClosed):
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        with pytest.raises(ServerUnavailable):
            group.call_tool("sdk__add", {"a": 1, "b": 2})


def test_sixteen_threads_open_it_once_fail_fast_and_send_one_trial():
    """An HTTP server stopped and started again on the same port, under 16 threads."""
    port = free_port()
    made: list[int] = []

    def make() -> StreamableHttpTransport:
        made.append(1)
        return StreamableHttpTransport(f"http://127.0.0.1:{port}/mcp")

    clock = Clock()
    start = threading.Barrier(16)

    def wave(timeout: float) -> list[Any]:
        def call(n: int) -> Any:
            start.wait()
            try:
                return group.call_tool("sdk__add", {"a": n, "b": n}, timeout=timeout)
            except McpError as exc:
                return exc

        with ThreadPoolExecutor(16) as pool:
            return list(pool.map(call, range(16)))

    with ClientGroup() as group:
        with http_server(port):
            client = mcp_sync.connect(make, protocol="handshake", recovery=PATIENT)
            group.add("sdk", client, breaker=CircuitBreaker(threshold=3, cool_down=30, clock=clock))
            assert group.call_tool("sdk__add", {"a": 1, "b": 1}).structured_content == {"result": 2}
        # down: the calls already let through fail once their reconnection gives up; the
        # breaker opens once, however many of them fail after it opened
        outcomes = wave(timeout=2)
        assert all(isinstance(o, (ConnectionClosed, ServerUnavailable)) for o in outcomes)
        assert sum(isinstance(o, ConnectionClosed) for o in outcomes) >= 3
        status = group.breakers["sdk"]
        assert (status.state, status.times_opened) == ("open", 1)

        # open: 16 calls that would each wait 30 s to reconnect fail at once instead
        tried, began = len(made), time.monotonic()
        outcomes = wave(timeout=30)
        assert time.monotonic() - began < 10
        assert all(isinstance(o, ServerUnavailable) for o in outcomes), outcomes
        assert len(made) == tried  # not one connection attempt

        # after the cool-down: one caller goes through (and waits for the server); the other
        # 15 fail fast until it settles
        clock.now += 30
        results: list[Any] = []
        finished = threading.Semaphore(0)

        def call(n: int) -> None:
            start.wait()
            try:
                results.append(group.call_tool("sdk__add", {"a": n, "b": n}, timeout=90))
            except McpError as exc:
                results.append(exc)
            finished.release()

        threads = [threading.Thread(target=call, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for _ in range(15):
            assert finished.acquire(timeout=30)
        assert len(results) == 15 and all(isinstance(r, ServerUnavailable) for r in results)
        assert all("trial call is under way" in str(r) for r in results)
        assert group.breakers["sdk"].state == "half-open"
        with http_server(port):  # back on the same port: the trial reconnects and answers
            assert finished.acquire(timeout=90)
            for thread in threads:
                thread.join(timeout=30)
            (trial,) = [r for r in results if not isinstance(r, McpError)]
            assert trial.structured_content["result"] % 2 == 0
            status = group.breakers["sdk"]
            assert (status.state, status.failures, status.times_opened) == ("closed", 0, 1)
            outcomes = wave(timeout=30)
            assert [o.structured_content["result"] for o in outcomes] == [2 * n for n in range(16)]


def test_the_constructor_takes_what_add_takes(time_cmd, leaks_free):
    """Before: ``ClientGroup({"a": command})`` took the list and failed at the first listing
    with ``AttributeError: 'list' object has no attribute 'server_capabilities'``."""
    with ClientGroup({"time": time_cmd, "sdk": SDK}, request_timeout=20) as group:
        assert {"time__get_current_time", "sdk__add"} <= set(names(group))
        assert group.call_tool("sdk__add", {"a": 1, "b": 2}).structured_content == {"result": 3}
        assert set(group.breakers) == {"time", "sdk"}
    with pytest.raises(TypeError, match="'broken'.*int"):
        ClientGroup({"time": time_cmd, "broken": 42})
    with pytest.raises(TypeError, match="'entry'.*dict.*ServerConfig"):
        ClientGroup({"entry": {"command": "mcp-server-time"}})
    # an entry that cannot connect: the ones connected before it are closed, then it raises
    with pytest.raises(McpError):
        ClientGroup({"sdk": SDK, "gone": [MISSING]}, request_timeout=20)


def test_policy_values_are_checked():
    with pytest.raises(ValueError, match="threshold"):
        CircuitBreaker(threshold=0)
    with pytest.raises(ValueError, match="cool_down"):
        CircuitBreaker(cool_down=-1)
    assert CircuitBreaker() == CircuitBreaker(threshold=5, cool_down=30.0)


@pytest.fixture
def leaks_free():
    """Fails the test if a server process or a client thread outlives it."""
    children, threads = child_pids(), set(client_threads())
    yield
    wait_until(
        lambda: child_pids() <= children and set(client_threads()) <= threads,
        timeout=10,
        message="a server process or client thread outlived the test",
    )
