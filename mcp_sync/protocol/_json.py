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
from collections.abc import Callable
from typing import Any

from ..errors import ProtocolError

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

    Raises ``TypeError`` for a value JSON cannot hold and ``ValueError`` for NaN, infinity or
    a circular structure, as :func:`json.dumps` does.
    """
    if _c_encoder is None:
        return _encoder.encode(message).encode("utf-8")
    try:
        return "".join(_c_encoder(message, 0)).encode("utf-8")
    except RecursionError:
        raise ValueError("the message is circular or nested too deeply for JSON") from None


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
