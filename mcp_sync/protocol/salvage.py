"""Which request an answer that cannot be used was for, read from the first and last bytes of
its text: an answer too large to accept, nested too deeply to parse, or cut short. No I/O.

The id is nearly always at one end of a response: Python servers write
``{"jsonrpc":"2.0","id":7,"result":...}``, TypeScript ones
``{"result":...,"jsonrpc":"2.0","id":7}``.
:func:`answered_id` reads the top-level members at the start of the text one by one, as far as
they are whole; if those show a response (a ``result`` or ``error`` member, no ``method``)
without its id, the id is read from the very end (``"id":7}``). A server's own request
(``method``) is never taken for an answer: its id is in the server's numbering, not ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .jsonrpc import RequestId, is_request_id

__all__ = ["answered_id", "head_says"]

#: The C scanner: ``(text, index) -> (value, end)``; StopIteration or ValueError where the
#: text at ``index`` is no whole JSON value.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_SPACE = " \t\r\n"
#: The last member of the outermost object, at the very end of the text: ``"id": 7}``.
_TAIL_ID = re.compile(rb'[,{]\s*"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,256}")\s*}\s*$')


def head_says(head: bytes) -> tuple[str, RequestId | None]:
    """What the first bytes of a message show: ``("response", id)`` (id None when it is not
    among them), ``("other", None)`` for a request or notification, ``("unknown", None)`` when
    they show neither."""
    text = head.decode("utf-8", errors="replace")
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return "unknown", None
    at += 1
    kind, found = "unknown", None
    while True:
        at = _skip(text, at)
        if not text.startswith('"', at):
            break
        try:
            key, at = _scan(text, at)
        except (StopIteration, ValueError):
            break
        at = _skip(text, at)
        if not text.startswith(":", at):
            break
        try:
            value, at = _scan(text, _skip(text, at + 1))
        except (StopIteration, ValueError, RecursionError):
            value, at = None, -1  # the value runs past the head (a big result)
        if key == "method":
            return "other", None
        if key in ("result", "error"):
            kind = "response"
        elif key == "id" and is_request_id(value):
            found = value
        at = _skip(text, at) if at >= 0 else -1
        if at < 0 or not text.startswith(",", at):
            break
        at += 1
    return kind, (found if kind == "response" else None)


def answered_id(head: bytes, tail: bytes | None = None) -> RequestId | None:
    """The id of the response whose text starts with ``head`` and ends with ``tail``; None
    when it is not a response or its id cannot be read."""
    kind, found = head_says(head)
    if kind != "response" or found is not None or tail is None:
        return found
    match = _TAIL_ID.search(tail)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if is_request_id(value) else None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at
