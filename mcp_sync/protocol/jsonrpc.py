"""JSON-RPC 2.0 messages as MCP uses them: building, encoding and checking them. No I/O.

Messages travel as plain dicts (what ``json.loads`` gives); :func:`parse` checks one and
classifies it into a small record, so the session core never guesses at a dict's shape.

The records are slotted dataclasses, not frozen ones: :func:`parse` makes one for every message
received, and the ``__init__`` of a frozen dataclass (an ``object.__setattr__`` per field) made a
whole ``client.request`` 97.9k instructions instead of 95.1k (``python -m bench.instructions``).
Treat them as read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from ..errors import InvalidMessage, ProtocolError
from ._json import decode, encode

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "ErrorResponse",
    "InvalidMessage",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "decode",
    "encode",
    "error_response",
    "is_request_id",
    "notification",
    "parse",
    "parse_batch",
    "request",
    "result_response",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = str | int
JsonObject = dict[str, Any]


@dataclass(slots=True)
class Request:
    """A request from the peer: it expects a response with the same ``id``."""

    id: RequestId
    method: str
    params: JsonObject | None


@dataclass(slots=True)
class Notification:
    """A one-way message from the peer."""

    method: str
    params: JsonObject | None


@dataclass(slots=True)
class Response:
    """A success response to one of our requests."""

    id: RequestId
    result: Any


@dataclass(slots=True)
class ErrorResponse:
    """An error response; ``id`` is None when the peer could not read our request's id."""

    id: RequestId | None
    code: int
    message: str
    data: Any


Message = Request | Notification | Response | ErrorResponse


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """True for a usable JSON-RPC id: a str or an int (bool and null are not ids)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse(obj: Any) -> Message:
    """Check one decoded JSON value and classify it; raise :class:`InvalidMessage` if invalid."""
    # What a client receives most, a success response to one of its requests (whose ids are
    # ints), is recognised first, by the same rules as below but without their branches: 1.5k
    # fewer instructions per response; with it a call's latency is within noise of when the
    # session checked responses itself, without it 4-5% above (docs/benchmarks.md).
    if type(obj) is dict:
        request_id = obj.get("id")
        if (
            type(request_id) is int
            and "result" in obj
            and "method" not in obj
            and "error" not in obj
            and obj.get("jsonrpc") == "2.0"
        ):
            return Response(request_id, obj["result"])
    if not isinstance(obj, dict):
        raise InvalidMessage("not an object", obj)
    raw_id = obj.get("id")
    usable_id = raw_id if is_request_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        raise InvalidMessage('"jsonrpc" must be "2.0"', obj, usable_id)
    params = obj.get("params")
    if "method" in obj:
        method = obj["method"]
        if "result" in obj or "error" in obj:
            raise InvalidMessage("has both a method and a result or error", obj, usable_id)
        if not isinstance(method, str):
            raise InvalidMessage('"method" must be a string', obj, usable_id)
        if params is not None and not isinstance(params, dict):
            raise InvalidMessage('"params" must be an object', obj, usable_id)
        if "id" not in obj:
            return Notification(method, params)
        if usable_id is None:
            raise InvalidMessage('request "id" must be a string or an integer', obj)
        return Request(usable_id, method, params)
    if "result" in obj:
        if "error" in obj:
            raise InvalidMessage("has both a result and an error", obj, usable_id)
        if usable_id is None:
            raise InvalidMessage('response "id" must be a string or an integer', obj)
        return Response(usable_id, obj["result"])
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict):
            raise InvalidMessage('"error" must be an object', obj, usable_id)
        code = error.get("code")
        if not isinstance(code, int) or isinstance(code, bool):
            raise InvalidMessage("error code must be an integer", obj, usable_id)
        message = error.get("message")
        return ErrorResponse(
            usable_id, code, message if isinstance(message, str) else "", error.get("data")
        )
    raise InvalidMessage("neither a request, a notification nor a response", obj, usable_id)


def parse_batch(obj: Any) -> list[Message | InvalidMessage]:
    """Like :func:`parse`, also unpacking a batch array (2025-03-26); errors are returned."""
    items = obj if isinstance(obj, list) else [obj]
    if not items:
        return [InvalidMessage("empty batch", obj)]
    out: list[Message | InvalidMessage] = []
    for item in items:
        try:
            out.append(parse(item))
        except InvalidMessage as exc:
            out.append(exc)
    return out


def request(id: RequestId, method: str, params: JsonObject | None = None) -> JsonObject:
    """A request message dict."""
    message: JsonObject = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: JsonObject | None = None) -> JsonObject:
    """A notification message dict."""
    message: JsonObject = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_response(id: RequestId, result: Any) -> JsonObject:
    """A success response dict."""
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: RequestId | None, code: int, message: str, data: Any = None) -> JsonObject:
    """An error response dict."""
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


def salvage_id(data: bytes) -> RequestId | None:
    """The id of a response whose bytes are not valid UTF-8, read with the bad bytes replaced,
    so that the request it answers can fail at once; None when none can be read."""
    try:
        value = decode(data.decode("utf-8", errors="replace"))
    except ProtocolError:
        return None
    if not isinstance(value, dict) or "method" in value:
        return None
    request_id = value.get("id")
    return request_id if is_request_id(request_id) else None
