"""``shared_client``: one client per process and configuration, against a real server.

The defects of the recipe it replaces (``functools.cache`` around ``connect()``): four threads
making their first call at once started four servers (three leaked), and a client whose server
died stayed cached, dead, for good.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import mcp_sync
from tests.helpers.support import wait_until

pytestmark = pytest.mark.timeout(120)
SDK = [sys.executable, str(Path(__file__).parent / "servers" / "sdk_server.py"), "stdio"]


def test_four_threads_making_their_first_call_at_once_share_one_client() -> None:
    made = []

    @mcp_sync.shared_client
    def client() -> mcp_sync.Client:
        made.append(1)
        return mcp_sync.connect(SDK, protocol="handshake", request_timeout=30)

    start = threading.Barrier(4)

    def first_call(n: int) -> int:
        start.wait()
        return client().call_tool("add", {"a": n, "b": 1}).structured_content["result"]

    with ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(first_call, range(4))) == [1, 2, 3, 4]
    assert len(made) == 1
    client.close()


def test_a_client_that_closed_is_replaced_on_the_next_call() -> None:
    servers: list[mcp_sync.StdioTransport] = []

    @mcp_sync.shared_client
    def client() -> mcp_sync.Client:  # no recovery=: the helper replaces a dead client
        servers.append(mcp_sync.StdioTransport(SDK[0], SDK[1:]))
        return mcp_sync.Client(protocol="handshake", request_timeout=30).connect(servers[-1])

    first = client()
    died = threading.Event()
    first.on_close(lambda _cause: died.set())
    os.kill(servers[0].pid, signal.SIGKILL)  # type: ignore[arg-type]
    assert died.wait(30) and first.state == "closed"
    second = client()
    assert second is not first
    assert second.call_tool("add", {"a": 1, "b": 1}).text == "2"
    client.close()
    assert second.state == "closed"


def test_one_client_per_distinct_arguments() -> None:
    @mcp_sync.shared_client
    def client(timeout: float) -> mcp_sync.Client:
        return mcp_sync.connect(SDK, protocol="handshake", request_timeout=timeout)

    assert client(20) is client(20)
    assert client(21) is not client(20)
    assert client(21).request_timeout == 21
    client.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()")
def test_a_forked_child_makes_its_own_client_and_leaves_the_parents_alone() -> None:
    @mcp_sync.shared_client
    def client() -> mcp_sync.Client:
        return mcp_sync.connect(SDK, protocol="handshake", request_timeout=30)

    parent = client()
    assert parent.call_tool("add", {"a": 1, "b": 1}).text == "2"
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report through the pipe, never return into pytest
        try:
            own = client()
            report = {
                "new": own is not parent,
                "answer": own.call_tool("add", {"a": 2, "b": 2}).text,
            }
            client.close()
        except BaseException as exc:
            report = {"error": repr(exc)}
        os.write(write_fd, json.dumps(report).encode())
        os._exit(0)
    os.close(write_fd)
    wait_until(lambda: os.waitpid(pid, os.WNOHANG)[0], timeout=60, interval=0.02)
    with os.fdopen(read_fd) as pipe:
        assert json.loads(pipe.read()) == {"new": True, "answer": "4"}
    assert client() is parent  # the child's close() did not touch the parent's server
    assert parent.call_tool("add", {"a": 3, "b": 3}).text == "6"
    client.close()


def test_a_connection_that_failed_is_not_cached() -> None:
    commands = [["/nonexistent/mcp-server"], SDK]

    @mcp_sync.shared_client
    def client() -> mcp_sync.Client:
        return mcp_sync.connect(commands[0], protocol="handshake", request_timeout=30)

    with pytest.raises(mcp_sync.ServerStartError):
        client()
    commands.pop(0)  # e.g. the deployment finished
    assert client().call_tool("add", {"a": 1, "b": 1}).text == "2"
    client.close()
