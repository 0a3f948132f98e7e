"""A 2026-07-28 server slow to answer ``server/discover`` (a cold start, a busy machine).

Over stdio, a server that has not read the probe yet is still starting: the probe window
starts once it has read it, so a server that speaks both eras gets the same one however
slowly it starts (the official SDK's server, started behind a delay), while one that reads
the probe and ignores it falls back to ``initialize`` after the window as before (the
scripted fault peer: none of the real servers we have ignores an unknown method).

Over Streamable HTTP every server answers the probe, so the client waits for that answer and
never sends ``initialize``. Where a probe window runs out all the same, a slow 2026 server
refuses the fallback ``initialize`` and the client waits for the discover answer it is still
owed; ``WindowedTransport`` stands for such a transport here (scripted,
tests/helpers/http_faults.py: no real server can be made to take longer than the probe window
on demand). The conformance suite's 2026 scenarios, run on a loaded machine
(tests/conformance/test_conformance_loaded.py), show the same with the suite's real server.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest

import mcp_sync
from mcp_sync.errors import RpcError
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import StreamableHttpTransport
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.http_faults import FaultServer, Request, discover_result
from tests.helpers.reliability_support import SERVERS, fault_peer, started_late

pytestmark = pytest.mark.timeout(60)

STATELESS = "2026-07-28"
DISCOVER_RESULT = discover_result(STATELESS)


def refusal(req: Request, msg: dict[str, Any], how: str) -> None:
    if how == "method-not-found":
        req.reply_json(jsonrpc.error_response(msg["id"], -32601, "Method not found"))
    elif how == "http-400":
        req.reply(400, "Bad Request: unsupported protocol version")
    else:  # answers with its own era's version, which initialize cannot negotiate
        req.reply_json(
            jsonrpc.result_response(
                msg["id"],
                {
                    "protocolVersion": STATELESS,
                    "capabilities": {},
                    "serverInfo": {"name": "s", "version": "0"},
                },
            )
        )


class SlowStatelessServer:
    """Answers ``server/discover`` only after it has refused ``initialize``, as a server still
    starting up would (``answers=False``: never)."""

    def __init__(self, how: str, *, answers: bool = True, reject_first: bool = False) -> None:
        self.how = how
        self.answers = answers
        self.reject_first = reject_first  # the late answer: "-32022, use one of these"
        self.discovers = 0
        self.refused = threading.Event()

    def __call__(self, req: Request) -> None:
        msg = req.rpc_request()
        if msg is None:
            return
        if msg["method"] == "server/discover":
            if not self.answers:
                req.hang()
                return
            self.refused.wait(20)
            self.discovers += 1
            if self.reject_first and self.discovers == 1:
                req.reply_json(
                    jsonrpc.error_response(
                        msg["id"],
                        -32022,
                        "Unsupported protocol version",
                        {"supported": [STATELESS], "requested": "x"},
                    ),
                    status=400,
                )
                return
            req.reply_json(jsonrpc.result_response(msg["id"], DISCOVER_RESULT))
        elif msg["method"] == "initialize":
            refusal(req, msg, self.how)
            self.refused.set()
        else:
            req.reply_json(jsonrpc.result_response(msg["id"], {"tools": []}))


class WindowedTransport(StreamableHttpTransport):
    """Streamable HTTP with the probe window of a transport whose old servers may stay silent."""

    answers_every_request = False


def test_over_http_a_slow_2026_only_server_is_waited_for_without_an_initialize() -> None:
    def cold_start(req: Request) -> None:
        msg = req.rpc_request()
        if msg is None:
            return
        if msg["method"] == "server/discover":
            req.server.stopping.wait(1.0)  # still starting: five times the probe window
            req.reply_json(jsonrpc.result_response(msg["id"], DISCOVER_RESULT))
        elif msg["method"] == "initialize":
            refusal(req, msg, "method-not-found")
        else:
            req.reply_json(jsonrpc.result_response(msg["id"], {"tools": []}))

    with FaultServer(cold_start) as server:
        client = mcp_sync.Client("t", "1", probe_timeout=0.2, request_timeout=10)
        with client.connect(StreamableHttpTransport(server.url)):
            assert client.protocol_version == STATELESS
            assert client.list_tools() == []
        assert [r.json["method"] for r in server.of("POST")][:2] == [
            "server/discover",
            "tools/list",
        ]


@pytest.mark.parametrize("how", ["method-not-found", "http-400", "stateless-version"])
def test_a_slow_2026_only_server_is_found_when_initialize_is_refused(how: str) -> None:
    with FaultServer(SlowStatelessServer(how)) as server:
        client = mcp_sync.Client("t", "1", probe_timeout=0.2, request_timeout=10)
        with client.connect(WindowedTransport(server.url)):
            assert client.protocol_version == STATELESS
            assert client.list_tools() == []


def test_a_late_unsupported_version_answer_goes_on_with_a_version_the_server_names() -> None:
    slow = SlowStatelessServer("method-not-found", reject_first=True)
    with FaultServer(slow) as server:
        client = mcp_sync.Client("t", "1", probe_timeout=0.2, request_timeout=10)
        with client.connect(WindowedTransport(server.url)):
            assert client.protocol_version == STATELESS
            assert slow.discovers == 2


def test_the_refusal_is_reported_when_discover_never_comes_in_the_connect_timeout() -> None:
    with FaultServer(SlowStatelessServer("method-not-found", answers=False)) as server:
        client = mcp_sync.Client("t", "1", probe_timeout=0.2)
        with pytest.raises(RpcError, match="Method not found"):
            client.connect(WindowedTransport(server.url), timeout=1.0)


def test_a_stateless_version_in_initialize_never_reads_as_unsupported_by_the_client() -> None:
    with FaultServer(SlowStatelessServer("stateless-version", answers=False)) as server:
        client = mcp_sync.Client("t", "1", probe_timeout=0.2)
        with pytest.raises(mcp_sync.McpError) as raised:
            client.connect(WindowedTransport(server.url), timeout=1.0)
        assert not isinstance(raised.value, mcp_sync.UnsupportedProtocolVersion)
        assert "server/discover" in str(raised.value)


# -- stdio: a server still starting is not one that ignores the probe -----------------------


class Sent(StdioTransport):
    """A stdio transport that remembers the method of every message it sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.methods: list[str] = []

    def send(self, message: dict[str, Any], **kwargs: Any) -> None:
        self.methods.append(str(message.get("method")))
        super().send(message, **kwargs)


@pytest.mark.parametrize("delay", [0.0, 2.5])
def test_over_stdio_a_server_slow_to_start_is_not_offered_the_handshake(delay: float) -> None:
    """The official SDK's server, started ``delay`` seconds late (past the 2 s probe window).
    Before, the client sent ``initialize`` once the window ran out: this server refuses it
    once it has answered the probe (and the late answer was used), but one that takes both
    on one connection got the handshake era: mongodb-mcp-server, about 2.2 s to start, got
    2025-11-25 where the official client gets 2026-07-28."""
    program, *args = started_late(delay, sys.executable, str(SERVERS / "sdk_server.py"), "stdio")
    transport = Sent(program, args)
    with mcp_sync.Client("t", "1").connect(transport, timeout=30) as client:
        assert client.protocol_version == STATELESS
    assert "initialize" not in transport.methods, transport.methods


def test_over_stdio_a_server_that_ignores_the_probe_falls_back_after_the_window() -> None:
    """It reads the probe at once and never answers: the handshake follows after the window,
    not after the whole connect timeout (30 s)."""
    started = time.monotonic()
    client = mcp_sync.Client("t", "1", probe_timeout=0.5, request_timeout=30)
    with client.connect(fault_peer("ignore-unknown")):
        took = time.monotonic() - started
        assert client.era == "handshake"
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    assert took < 0.5 + 5, f"connecting took {took:.1f} s"
