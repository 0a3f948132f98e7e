"""JSON-RPC parsing: what the session core may rely on about every inbound message."""

import pytest

from mcp_sync.errors import ProtocolError, UnencodableValue
from mcp_sync.protocol import jsonrpc
from mcp_sync.protocol.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
    parse,
    parse_batch,
)


def test_id_zero_is_a_valid_id():
    assert parse({"jsonrpc": "2.0", "id": 0, "method": "roots/list"}) == Request(
        0, "roots/list", None
    )
    assert parse({"jsonrpc": "2.0", "id": 0, "result": {}}) == Response(0, {})


@pytest.mark.parametrize("bad_id", [None, True, 1.5, [1], {"a": 1}])
def test_request_ids_must_be_str_or_int(bad_id):
    with pytest.raises(InvalidMessage, match="id"):
        parse({"jsonrpc": "2.0", "id": bad_id, "method": "x"})


def test_string_ids_and_notifications():
    assert parse({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"k": 1}}) == Request(
        "a", "m", {"k": 1}
    )
    assert parse({"jsonrpc": "2.0", "method": "n"}) == Notification("n", None)


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "result": {}}, "both a method and a result"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": ""}}, "both"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "integer"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, "integer"),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, "must be an object"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "method"),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]}, "params"),
        ({"jsonrpc": "2.0", "id": 1}, "neither"),
        ([1, 2], "not an object"),
    ],
)
def test_invalid_messages_are_typed_errors_naming_the_problem(message, reason):
    with pytest.raises(InvalidMessage, match=reason) as info:
        parse(message)
    assert isinstance(info.value, ProtocolError)


def test_invalid_message_keeps_a_usable_id_so_its_request_can_fail():
    with pytest.raises(InvalidMessage) as info:
        parse({"jsonrpc": "2.0", "id": 7, "result": {}, "error": {"code": 1, "message": ""}})
    assert info.value.id == 7


def test_error_response_without_id_is_kept_with_id_none():
    message = parse({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}})
    assert message == ErrorResponse(None, -32700, "Parse", None)


def test_batches_are_unpacked_with_invalid_members_reported():
    items = parse_batch(
        [
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {}},
            "junk",
        ]
    )
    assert isinstance(items[0], Response)
    assert isinstance(items[1], Notification)
    assert isinstance(items[2], InvalidMessage)
    assert isinstance(parse_batch([])[0], InvalidMessage)


def test_encode_is_compact_utf8_on_one_line():
    data = jsonrpc.encode(jsonrpc.request(1, "m", {"text": "héllo\nworld"}))
    assert b"\n" not in data
    assert "héllo".encode() in data
    assert jsonrpc.decode(data)["params"]["text"] == "héllo\nworld"


def test_decode_errors_are_protocol_errors():
    with pytest.raises(ProtocolError, match="invalid JSON"):
        jsonrpc.decode(b"{nope")


@pytest.mark.parametrize(
    "text",
    [b'{"a":1}', b'{"a":1}\n', b'{"a":1}\r\n', b' \t{"a":1} \n', b'\xef\xbb\xbf{"a":1}', '{"a":1}'],
)
def test_decode_takes_json_whitespace_and_a_byte_order_mark(text):
    assert jsonrpc.decode(text) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"a":1} x', "Extra data"),
        (b'{"a":1}{}', "Extra data"),
        (b'{"a":1}\x0b', "Extra data"),  # not JSON whitespace
        (b"", "Expecting value"),
        (b"\xff{}", "can't decode byte 0xff"),
    ],
)
def test_decode_names_what_is_wrong(text, problem):
    with pytest.raises(ProtocolError, match=problem):
        jsonrpc.decode(text)


def test_encode_refuses_what_json_cannot_hold_naming_where():
    circular: dict = {}
    circular["self"] = circular
    with pytest.raises(TypeError, match=r"cannot send x: /params/when is of type object"):
        jsonrpc.encode(jsonrpc.request(1, "x", {"when": object()}))
    with pytest.raises(ValueError, match=r"^cannot send the message: /x/1 is inf, which JSON"):
        jsonrpc.encode({"x": [1, float("inf")]})
    # a lone surrogate, in a value or a name: UTF-8 has no bytes for it (shown escaped)
    for params, where in (
        ({"a": ["ok", "b\ud800"]}, "/params/a/1"),
        ({"k/\udfff": 1}, "/params/k~1\\udfff"),
    ):
        with pytest.raises(UnencodableValue, match="lone surrogate") as caught:
            jsonrpc.encode(jsonrpc.notification("n", params))
        assert (caught.value.path, caught.value.method) == (where, "n")
        assert isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="circular"):
        jsonrpc.encode(circular)
