"""Fuzzing the inbound path: hostile bytes from the server side of a real pipe into a Client.

The test plays the server over a pair of OS pipes (a PipeTransport on the client side), so
every byte goes through the real reader thread, framing, JSON decoding, JSON-RPC parsing, the
session core and the dispatcher. After each input the client must still answer a ping
correctly, no exception may have escaped any thread, and nothing may be left pending.
"""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sync import Client
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.stdio import PipeTransport
from tests.helpers import reliability_support  # noqa: F401

pytestmark = pytest.mark.timeout(120)


class FakeServer:
    """The server end of the pipes: answers initialize and ping, lets the test inject bytes."""

    def __init__(self) -> None:
        self.client_r, self.server_w = os.pipe()  # server -> client
        self.server_r, self.client_w = os.pipe()  # client -> server
        self.lock = threading.Lock()
        self.received: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def write(self, data: bytes) -> None:
        with self.lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.server_w, view) :]

    def _serve(self) -> None:
        with os.fdopen(self.server_r, "rb") as reader:
            for line in reader:
                msg = json.loads(line)
                self.received.append(msg)
                if msg.get("method") == "initialize":
                    self.write(
                        jsonrpc.encode(
                            jsonrpc.result_response(
                                msg["id"],
                                {
                                    "protocolVersion": msg["params"]["protocolVersion"],
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "fuzz", "version": "0"},
                                },
                            )
                        )
                        + b"\n"
                    )
                elif msg.get("method") == "ping":
                    self.write(jsonrpc.encode(jsonrpc.result_response(msg["id"], {})) + b"\n")

    def close(self) -> None:
        os.close(self.server_w)
        self.thread.join(5)


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[Client, FakeServer, list[BaseException]]]:
    escaped: list[BaseException] = []
    old_hook = threading.excepthook
    threading.excepthook = lambda args: escaped.append(args.exc_value)  # type: ignore[assignment,return-value]
    server = FakeServer()
    transport = PipeTransport((server.client_r, server.client_w), max_message_bytes=1 << 20)
    client = Client("fuzz", "1", protocol="handshake", request_timeout=10)
    client.connect(transport)
    reported: list[BaseException] = []
    client.on_error(reported.append)
    client.on_notification(None, lambda n: None)  # notifications reach a user callback too
    client.on_notification("test/sentinel", lambda n: _SENTINELS[(n.params or {})["n"]].set())
    yield client, server, escaped
    client.close()
    server.close()
    threading.excepthook = old_hook
    assert not escaped


_SENTINELS: dict[int, threading.Event] = {}


def _drain(client: Client, server: FakeServer) -> None:
    """Wait until the reader has handled everything written so far (a sentinel notification
    behind it has reached the dispatcher), so that no fuzzed response can answer our ping."""
    number = len(_SENTINELS)
    seen = _SENTINELS[number] = threading.Event()
    server.write(jsonrpc.encode(jsonrpc.notification("test/sentinel", {"n": number})) + b"\n")
    assert seen.wait(30), "the reader stopped handling input"


def _healthy(client: Client, escaped: list[BaseException], server: FakeServer) -> None:
    _drain(client, server)
    client.ping(timeout=10)
    assert not escaped, escaped
    session = client._connection.current_session()
    assert session is not None and not session._pending
    readers = [t for t in threading.enumerate() if t.name == "mcp-sync-pipe-reader"]
    assert readers and all(t.is_alive() for t in readers)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
VALUES = st.one_of(
    JSON,
    st.just("2.0"),
    st.integers(-3, 3),
    st.sampled_from(
        [
            "ping",
            "roots/list",
            "sampling/createMessage",
            "notifications/progress",
            "notifications/cancelled",
            "notifications/message",
            "tools/call",
        ]
    ),
    st.fixed_dictionaries({"code": st.integers() | JSON}, optional={"message": JSON, "data": JSON}),
    st.fixed_dictionaries(
        {},
        optional={
            "progressToken": st.integers(0, 5) | JSON,
            "requestId": st.integers(0, 5) | JSON,
            "_meta": JSON,
        },
    ),
)
MESSAGE = st.dictionaries(FIELDS, VALUES, max_size=6)
LINE = st.one_of(
    MESSAGE.map(lambda m: json.dumps(m).encode()),
    st.lists(MESSAGE, max_size=3).map(lambda m: json.dumps(m).encode()),  # batches
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
    JSON.map(lambda v: json.dumps(v).encode()),
)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(LINE, min_size=1, max_size=8))
def test_no_input_breaks_the_inbound_path(fuzzed, lines: list[bytes]) -> None:
    client, server, escaped = fuzzed
    server.write(b"".join(line + b"\n" for line in lines))
    _healthy(client, escaped, server)


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deep-array-100k"),
        pytest.param(b'{"a":' * 50_000 + b"1" + b"}" * 50_000, id="deep-object-50k"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x","params":{"v":' + b"[" * 900 + b"]" * 900 + b"}}",
            id="deep-900-just-parsable",
        ),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"result":' + b"9" * 500_000 + b"}", id="huge-int"),
        pytest.param(b'{"jsonrpc":"2.0","id":' + b"9" * 4000 + b',"result":1}', id="huge-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"result":1e999999}', id="huge-float"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
            + b"s" * 900_000
            + b'"}}',
            id="huge-string-under-limit",
        ),
        pytest.param(b'"' + b"s" * 3_000_000 + b'"', id="huge-string-over-limit"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":'
            b'{"progressToken":[1],"progress":"x"}}',
            id="unhashable-token",
        ),
        pytest.param(b'{"jsonrpc":"2.0","id":[1],"result":{}}', id="unhashable-id"),
    ],
)
def test_hostile_inputs_are_reported_and_memory_stays_bounded(fuzzed, hostile: bytes) -> None:
    client, server, escaped = fuzzed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    server.write(hostile + b"\n")
    _healthy(client, escaped, server)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 64 + 8 * len(hostile) / (1 << 20)


def test_many_small_messages_per_second(fuzzed) -> None:
    client, server, escaped = fuzzed
    count = 100_000
    seen = [0]
    done = threading.Event()

    def on_message(_n: object) -> None:
        seen[0] += 1
        if seen[0] == count:
            done.set()

    remove = client.on_notification("notifications/message", on_message)
    line = (
        jsonrpc.encode(
            jsonrpc.notification("notifications/message", {"level": "debug", "data": "x"})
        )
        + b"\n"
    )
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(count // 1000):
        server.write(line * 1000)
    assert done.wait(60), f"only {seen[0]} of {count} notifications arrived"
    elapsed = time.monotonic() - started
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    remove()
    print(
        f"\n{count} notifications in {elapsed:.2f} s ({count / elapsed:,.0f}/s), "
        f"peak RSS growth {grown_mib:.1f} MiB"
    )
    _healthy(client, escaped, server)
