"""Typed requests over a :class:`~mcp_sync._connection.connection.Connection`: a method's row in
:mod:`mcp_sync.protocol.methods` (``methods.TOOLS_LIST``, a ``Method[ListToolsResult]``: its
name, its result's model, what the server must declare for it, the field holding a list's
items) sent three ways: a result parsed into its model, one page of a paginated list, every
item of one. The connection itself deals in raw results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic

from .._connection.connection import Connection, ProgressHandler
from .._rules.deadline import call_deadline, under
from .._rules.numbers import call_timeout
from ..abort import AbortSignal
from ..protocol.methods import Method
from ..protocol.pagination import follow_cursors
from ..protocol.validation import parse_result

__all__ = ["call", "every", "page"]

_Model = TypeVar("_Model", bound=pydantic.BaseModel)


def _check(connection: Connection, row: Method[Any]) -> None:
    """Raise :class:`~mcp_sync.errors.CapabilityError` if the server did not declare what
    ``row``'s method needs (and the client checks capabilities)."""
    if row.capability is not None:
        connection.require(row.name, row.capability)
    elif row.extension is not None:
        connection.require_extension(row.name, row.extension)


def call(
    connection: Connection,
    row: Method[_Model],
    params: Mapping[str, Any] | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """Send ``row``'s request with ``params`` and parse its result into the row's model."""
    model = row.result
    if model is None:  # a row with no model sends through connection.request()
        raise TypeError(f"{row.name} has no result model to parse into")
    if timeout is not None:  # before the capability: a caller's mistake (None: no frame)
        timeout = call_timeout(timeout, row.name)
    _check(connection, row)
    raw = connection.request(
        row.name, params, timeout=timeout, signal=signal, on_progress=on_progress
    )
    return parse_result(row.name, model, raw)


def page(
    connection: Connection,
    row: Method[_Model],
    cursor: str | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """One page of a paginated list (the first for ``cursor`` None)."""
    params = {"cursor": cursor} if cursor else None
    return call(connection, row, params, timeout, signal, on_progress)


def every(
    connection: Connection,
    row: Method[_Model],
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> list[Any]:
    """The items of every page of a paginated list. ``timeout`` (default the connection's
    ``request_timeout``) bounds the whole listing: each page gets what is left of it, and
    progress on a page renews it (never past ``max_total_timeout``)."""
    deadline = call_deadline(
        timeout, connection.max_total_timeout, what=row.name, default=connection.request_timeout
    )
    outer_note = deadline.note
    answered = 0

    def fetch(cursor: str | None) -> _Model:
        if answered:  # not sent only to be cancelled
            deadline.check(row.name)
        return page(connection, row, cursor, timeout, signal, on_progress)

    items: list[Any] = []
    deadline.note = "the timeout bounds the whole listing"
    try:
        with under(deadline):
            for each in follow_cursors(row.name, fetch, _next_cursor):
                items += getattr(each, row.items)
                answered += 1
                pages = f"{answered} page{'s' if answered > 1 else ''} answered"
                deadline.note = f"the timeout bounds the whole listing; {pages}"
    finally:
        deadline.note = outer_note
    return items


def _next_cursor(result: Any) -> str | None:
    return getattr(result, "next_cursor", None)
