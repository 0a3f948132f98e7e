"""Hypothesis properties: JSON-RPC parsing, stdio framing, SSE framing, model round-trips.

``Mcp-Param`` header encoding round-trips (and never carries CR/LF) are properties in
tests/protocol/test_headers.py (test_round_trip, test_param_headers_never_inject).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sync.errors import ProtocolError
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports._sse import SseEvent, SseStream
from mcp_sync.transports.stdio import PipeTransport
from tests.helpers import reliability_support  # noqa: F401

pytestmark = pytest.mark.timeout(120)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
IDS = st.integers() | st.text(max_size=10)
METHODS = st.text(min_size=1, max_size=20)
PARAMS = st.none() | st.dictionaries(st.text(max_size=8), JSON, max_size=4)
KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "code", "x"])
MESSAGE_LIKE = st.recursive(
    JSON,
    lambda children: st.dictionaries(KEYS, children | st.just("2.0"), max_size=6),
    max_leaves=10,
)


# -- JSON-RPC -------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(MESSAGE_LIKE)
def test_parse_classifies_any_json_value_or_raises_invalid_message(value: Any) -> None:
    try:
        message = jsonrpc.parse(value)
    except jsonrpc.InvalidMessage as exc:
        assert exc.id is None or jsonrpc.is_request_id(exc.id)
        str(exc)
    else:
        assert isinstance(
            message,
            (jsonrpc.Request, jsonrpc.Notification, jsonrpc.Response, jsonrpc.ErrorResponse),
        )
    for item in jsonrpc.parse_batch(value):  # never raises
        assert isinstance(
            item,
            (
                jsonrpc.InvalidMessage,
                jsonrpc.Request,
                jsonrpc.Notification,
                jsonrpc.Response,
                jsonrpc.ErrorResponse,
            ),
        )


@settings(max_examples=300, deadline=None)
@given(IDS, METHODS, PARAMS, JSON)
def test_built_messages_survive_encode_decode_parse(
    id: Any, method: str, params: Any, result: Any
) -> None:
    def wire(message: dict[str, Any]) -> jsonrpc.Message:
        data = jsonrpc.encode(message)
        assert b"\n" not in data and b"\r" not in data  # one line, whatever the strings hold
        return jsonrpc.parse(jsonrpc.decode(data))

    assert wire(jsonrpc.request(id, method, params)) == jsonrpc.Request(id, method, params)
    assert wire(jsonrpc.notification(method, params)) == jsonrpc.Notification(method, params)
    assert wire(jsonrpc.result_response(id, result)) == jsonrpc.Response(id, result)
    error = wire(jsonrpc.error_response(id, -32000, method, result))
    assert error == jsonrpc.ErrorResponse(id, -32000, method, result)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_decode_of_any_bytes_is_a_value_or_a_protocol_error(data: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        jsonrpc.decode(data)


# -- stdio framing --------------------------------------------------------------------------


def _feed_pipe(stream: bytes, cuts: list[int], limit: int) -> tuple[list[Any], list[str]]:
    read_end, write_end = os.pipe()
    to_peer_r, to_peer_w = os.pipe()
    transport = PipeTransport((read_end, to_peer_w), max_message_bytes=limit)
    messages: list[Any] = []
    errors: list[str] = []
    closed = threading.Event()
    transport.on_message(messages.append)
    transport.on_error(lambda e: errors.append(str(e)))
    transport.on_close(lambda cause: closed.set())
    transport.start()
    try:
        bounds = sorted({c for c in cuts if 0 < c < len(stream)})
        for start, end in zip([0, *bounds], [*bounds, len(stream)], strict=True):
            view = memoryview(stream)[start:end]
            while view:
                view = view[os.write(write_end, view) :]
        os.close(write_end)
        assert closed.wait(10)
    finally:
        transport.close()
        os.close(to_peer_r)
    return messages, errors


FRAMES = st.lists(
    st.one_of(
        st.builds(lambda id, r: {"jsonrpc": "2.0", "id": id, "result": r}, IDS, JSON),
        st.builds(lambda m, p: jsonrpc.notification(m, p), METHODS, PARAMS),
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FRAMES, st.lists(st.integers(min_value=0, max_value=5000), max_size=30), st.booleans())
def test_stdio_framing_any_chunking_gives_the_same_messages(
    frames: list[dict[str, Any]], cuts: list[int], crlf: bool
) -> None:
    end = b"\r\n" if crlf else b"\n"
    stream = b"".join(jsonrpc.encode(f) + end for f in frames)
    messages, errors = _feed_pipe(stream, cuts, 1 << 20)
    assert messages == frames and not errors


# -- SSE framing ----------------------------------------------------------------------------

EVENT = st.fixed_dictionaries(
    {
        "data": st.text(
            alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"),
            max_size=30,
        ),
        "id": st.none() | st.text(alphabet="abc123", min_size=1, max_size=4),
        "eol": st.sampled_from(["\n", "\r\n", "\r"]),
        "comment": st.booleans(),
    }
)


def _sse_body(events: list[dict[str, Any]]) -> bytes:
    out = []
    for e in events:
        eol = e["eol"]
        lines = [": keep-alive"] if e["comment"] else []
        if e["id"] is not None:
            lines.append(f"id: {e['id']}")
        lines.append(f"data: {e['data']}")
        out.append(eol.join(lines) + eol + eol)
    return "".join(out).encode()


def _read_sse(chunks: list[bytes]) -> list[Any]:
    items = list(chunks)
    return list(SseStream(lambda: items.pop(0) if items else b"", 1 << 20))


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENT, max_size=8), st.lists(st.integers(min_value=0, max_value=2000), max_size=40))
def test_sse_any_chunking_gives_the_same_events(
    events: list[dict[str, Any]], cuts: list[int]
) -> None:
    body = _sse_body(events)
    bounds = sorted({c for c in cuts if 0 < c < len(body)})
    chunks = [body[a:b] for a, b in zip([0, *bounds], [*bounds, len(body)], strict=True)]
    whole = _read_sse([body])
    assert _read_sse(chunks) == whole
    assert [e.data for e in whole if isinstance(e, SseEvent)] == [e["data"] for e in events]


# -- every model round-trips, with unknown fields anywhere ----------------------------------


def _examples_module() -> Any:
    path = Path(__file__).resolve().parents[1] / "protocol" / "test_examples.py"
    spec = importlib.util.spec_from_file_location("reliability_examples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLES_MODULE = _examples_module()
EXAMPLE_FILES = sorted(
    p
    for p in EXAMPLES_MODULE.EXAMPLES.glob("*/*.json")
    if p.parent.name
    in EXAMPLES_MODULE.VALUE.keys()
    | EXAMPLES_MODULE.RESPONSE.keys()
    | EXAMPLES_MODULE.PARAMS.keys()
)


def test_every_mapped_model_has_examples() -> None:
    assert len(EXAMPLE_FILES) > 50


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(EXAMPLE_FILES) if EXAMPLE_FILES else st.nothing(),
    st.dictionaries(st.text(min_size=1, max_size=6).map(lambda s: "x-" + s), JSON, max_size=3),
)
def test_every_model_round_trips_with_unknown_fields(path: Path, extra: dict[str, Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    folder = path.parent.name
    if folder in EXAMPLES_MODULE.RESPONSE:
        data["result"] = {**data["result"], **extra}
    elif folder in EXAMPLES_MODULE.PARAMS:
        data["params"] = {**data["params"], **extra}
    elif isinstance(data, dict):
        data = {**data, **extra}
    wire, model = EXAMPLES_MODULE._parse_example(folder, data)
    assert model.to_wire() == wire
    assert type(model).from_wire(model.to_wire()).to_wire() == wire
