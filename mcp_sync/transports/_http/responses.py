"""Reading HTTP responses: content types, bodies (whole, limited, or as they come),
and the JSON-RPC error an HTTP error body may carry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests

from ...errors import McpError, TransportError
from ...protocol import jsonrpc

__all__ = [
    "ERROR_BODY_LIMIT",
    "JSON_TYPE",
    "MIB",
    "SSE_TYPE",
    "TooLarge",
    "body_reader",
    "content_type",
    "error_for_request",
    "jsonrpc_error_in",
    "read_limited",
    "same_id",
]

MIB = 1024 * 1024
ERROR_BODY_LIMIT = 8 * 1024
_READ_SIZE = 64 * 1024
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


def content_type(response: requests.Response) -> str:
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


def body_reader(response: requests.Response) -> Callable[[], bytes]:
    """A function returning the body's next available bytes (b"" at the end), decoded."""
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if read1 is None:  # urllib3 1.x
        fp: Any = getattr(raw, "_fp", None)

        def read_fp() -> bytes:
            data: bytes = fp.read1(_READ_SIZE)
            return data

        return read_fp

    def read() -> bytes:
        data: bytes = read1(_READ_SIZE, decode_content=True)
        return data

    return read


class TooLarge(Exception):
    pass


def read_limited(response: requests.Response, limit: int, *, strict: bool = False) -> bytes:
    """At most ``limit`` bytes of the body (raise :class:`TooLarge` if ``strict`` and longer)."""
    length = response.headers.get("Content-Length", "")
    if strict and length.isdigit() and int(length) > limit:
        raise TooLarge
    if strict and length.isdigit() and "Content-Encoding" not in response.headers:
        # the whole body in one read (a short one raises), not read1 until it comes back empty
        whole: bytes = response.raw.read(int(length))
        return whole
    read = body_reader(response)
    data = bytearray()
    try:
        while len(data) <= limit:
            chunk = read()
            if not chunk:
                break
            data += chunk
    except Exception:
        if strict:
            raise
    if len(data) > limit:
        if strict:
            raise TooLarge
        del data[limit:]
    return bytes(data)


def same_id(a: object, b: object) -> bool:
    return jsonrpc.is_request_id(a) and type(a) is type(b) and a == b


def jsonrpc_error_in(text: str, request_id: jsonrpc.RequestId | None) -> dict[str, Any] | None:
    """The JSON-RPC error object in an HTTP error body, if it is one for us (or id-less)."""
    if not text or "error" not in text:
        return None
    try:
        value = jsonrpc.decode(text)
    except McpError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
        return None
    if "code" not in value["error"]:
        return None
    msg_id = value.get("id")
    if msg_id is None or (request_id is not None and same_id(msg_id, request_id)):
        return value
    return None


def error_for_request(exc: Exception, request_id: jsonrpc.RequestId, what: str) -> Exception:
    """``exc`` tagged with the request it fails (an auth provider's own error keeps its type)."""
    if isinstance(exc, McpError):
        if getattr(exc, "request_id", None) is None:
            exc.request_id = request_id  # type: ignore[attr-defined]
        return exc
    error = TransportError(f"{what}: {exc}", request_id=request_id)
    error.__cause__ = exc
    return error
