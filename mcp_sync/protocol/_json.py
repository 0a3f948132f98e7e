"""JSON text in and out for every transport, with the only shortcuts past the ``json`` API.

Every message a client sends is encoded here and every message it receives is decoded here,
so these two functions are on the path of every call. Each shortcut below reaches into CPython's
``json`` internals and falls back to the public API where they are missing or where the
input is unusual; each is kept because it measured (instructions per call of a ``tools/call``
request or its response, under valgrind; ``docs/benchmarks.md``):

- **encode: one C encoder, made once.** ``JSONEncoder.encode`` builds a new C encoder (and a
  table of the containers it is inside, against circular values) on every call, about a third
  of the cost of encoding a small message. :func:`encode` makes one at import and reuses it,
  without the table (one shared table could be left stale by a failed call): a circular message
  then ends in ``RecursionError``, reported as the ``ValueError`` :func:`json.dumps` raises.
  18.9k instructions instead of 27.6k.
- **decode: straight to the scanner.** ``json.loads(bytes)`` sniffs the encoding, then wraps the
  C scanner in two Python layers and two regex matches (leading and trailing whitespace),
  together more than the scan of a small message. :func:`decode` decodes UTF-8 (the only
  encoding MCP allows) and calls the scanner; leading whitespace, trailing data, a byte order
  mark and every error take ``JSONDecoder.decode``, for its checks and its messages. 16.1k
  instructions instead of 28.2k (``json.loads(bytes)``) or 22.5k (``json.loads(str)``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from ..errors import ProtocolError, UnencodableValue

__all__ = ["decode", "encode", "quoted"]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _make_c_encoder() -> Callable[[Any, int], Any] | None:
    """CPython's C encoder with ``_encoder``'s settings (None where there is none)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    c_encoder: Callable[[Any, int], Any] = make(
        None,  # no circular-reference table
        _encoder.default,
        json.encoder.encode_basestring,
        None,  # indent
        _encoder.key_separator,
        _encoder.item_separator,
        _encoder.sort_keys,
        _encoder.skipkeys,
        _encoder.allow_nan,
    )
    return c_encoder


_c_encoder = _make_c_encoder()


def encode(message: Any) -> bytes:
    """Compact UTF-8 JSON for a message (no newlines inside, as stdio framing needs).

    Raises :class:`~mcp_sync.errors.UnencodableValue` (a ``TypeError`` and a ``ValueError``)
    naming where in the message a value JSON over UTF-8 cannot carry is: a string with a lone
    surrogate, NaN or an infinity, an object JSON has no form for. A circular structure is a
    ``ValueError``, as :func:`json.dumps` says.
    """
    try:
        if _c_encoder is None:
            return _encoder.encode(message).encode("utf-8")
        return "".join(_c_encoder(message, 0)).encode("utf-8")
    except RecursionError:
        raise ValueError("the message is circular or nested too deeply for JSON") from None
    except (TypeError, ValueError):  # (a UnicodeEncodeError is a ValueError)
        found = _unencodable(message)
        if found is None:
            raise
        path, problem = found
        method = message.get("method") if isinstance(message, dict) else None
        method = method if isinstance(method, str) else None
        raise UnencodableValue(
            f"cannot send {method or 'the message'}: {path or 'the message'} {problem}; "
            "nothing was sent",
            path=path,
            method=method,
        ) from None


def _unencodable(message: Any) -> tuple[str, str] | None:
    """Where in ``message`` (a JSON pointer) the first value JSON over UTF-8 cannot carry is,
    and what is wrong with it; None when there is none (the message is circular). Only on the
    error path: it walks the whole message, without recursion."""
    stack: list[tuple[Any, str]] = [(message, "")]
    seen: set[int] = set()  # containers walked (a circular message ends)
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            problem = _lone_surrogate(value)
            if problem is not None:
                return path, f"holds {problem}"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return path, f"is {value!r}, which JSON cannot hold"
        elif value is None or isinstance(value, int):  # (and bool)
            continue
        elif isinstance(value, (dict, list, tuple)):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if not isinstance(value, dict):
                stack.extend((v, f"{path}/{i}") for i, v in reversed(list(enumerate(value))))
                continue
            members: list[tuple[Any, str]] = []
            for key, item in value.items():
                where = f"{path}/{_pointer_segment(str(key))}"
                problem = _lone_surrogate(key) if isinstance(key, str) else None
                if problem is not None:
                    return where, f"is named with {problem}"
                if not isinstance(key, (str, int, float)) and key is not None:
                    return where, f"is named by a {type(key).__name__}, which JSON cannot hold"
                members.append((item, where))
            stack.extend(reversed(members))
        else:
            return path, f"is of type {type(value).__name__}, which JSON cannot hold"
    return None


def _lone_surrogate(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"a lone surrogate (\\u{ord(text[exc.start]):04x} at index {exc.start}), which is "
            "no Unicode text: UTF-8 cannot carry it"
        )
    return None


def _pointer_segment(key: str) -> str:
    """``key`` as a JSON pointer segment (RFC 6901), a lone surrogate shown as its escape."""
    key = key.replace("~", "~0").replace("/", "~1")
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


_decoder = json.JSONDecoder()
#: The decoder's scanner (C in CPython): ``(text, index) -> (value, end)``.
_scan_once: Callable[[str, int], tuple[Any, int]] = _decoder.scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def decode(data: bytes | bytearray | str) -> Any:
    """Decode one JSON text (UTF-8 when bytes, as MCP requires); raise :class:`ProtocolError`
    naming the problem if it is not JSON."""
    try:
        text = data if isinstance(data, str) else data.decode()
        try:
            value, end = _scan_once(text, 0)
        except StopIteration:
            # RFC 8259 lets a parser ignore a byte order mark, and json.loads(bytes) did
            return _decoder.decode(text[1:] if text.startswith("\ufeff") else text)
        if end != len(text) and text[end:].strip(_JSON_SPACE):
            return _decoder.decode(text)  # trailing data: its error message
        return value
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"invalid JSON ({exc}): {quoted(data)}") from None


def quoted(data: bytes | bytearray | str, limit: int = 200) -> str:
    """The start of ``data`` for a message, quoted as text (``'...'``) whether it came as
    bytes or as text, without its line ending."""
    text = data[:limit] if isinstance(data, str) else bytes(data[:limit]).decode("utf-8", "replace")
    return repr(text.rstrip("\r\n"))
