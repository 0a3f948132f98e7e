"""Typed requests over a :class:`~mcp_sync._connection.Connection`: a result parsed into its
model, one page of a paginated list, every item of one (the connection itself deals in raw
results)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import pydantic

from ._connection import Connection, ProgressHandler
from .abort import AbortSignal
from .protocol.pagination import follow_cursors
from .protocol.validation import parse_result

__all__ = ["all_items", "call", "page"]

_Model = TypeVar("_Model", bound=pydantic.BaseModel)


def call(
    connection: Connection,
    method: str,
    params: Mapping[str, Any] | None,
    result_type: type[_Model],
    *,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """A request whose result is parsed into ``result_type``."""
    raw = connection.request(
        method, params, timeout=timeout, signal=signal, on_progress=on_progress
    )
    return parse_result(method, result_type, raw)


def page(
    connection: Connection,
    method: str,
    result_type: type[_Model],
    cursor: str | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """One page of a paginated list (the first for ``cursor`` None)."""
    params = {"cursor": cursor} if cursor else None
    return call(
        connection,
        method,
        params,
        result_type,
        timeout=timeout,
        signal=signal,
        on_progress=on_progress,
    )


def all_items(
    connection: Connection,
    method: str,
    result_type: type[_Model],
    key: str,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> list[Any]:
    """The ``key`` items of every page of a paginated list."""

    def fetch(cursor: str | None) -> _Model:
        return page(connection, method, result_type, cursor, timeout, signal, on_progress)

    pages = follow_cursors(method, fetch, lambda p: getattr(p, "next_cursor", None))
    return [item for each in pages for item in getattr(each, key)]
