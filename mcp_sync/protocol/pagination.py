"""Following ``nextCursor`` through a paginated list, as a pure loop over a page fetcher."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from ..errors import ProtocolError

__all__ = ["MAX_PAGES", "follow_cursors"]

#: A list longer than this many pages is taken as a server that never stops paging.
MAX_PAGES = 1000

_Page = TypeVar("_Page")


def follow_cursors(
    method: str,
    fetch: Callable[[str | None], _Page],
    next_cursor: Callable[[_Page], str | None],
    max_pages: int = MAX_PAGES,
) -> Iterator[_Page]:
    """Yield every page of ``method``: ``fetch(None)``, then ``fetch(cursor)`` until none is left.

    A missing, ``None`` or ``""`` cursor ends the list. A cursor the server already gave, or
    more than ``max_pages`` pages, raises :class:`ProtocolError` instead of looping forever.
    """
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(max_pages):
        page = fetch(cursor)
        yield page
        cursor = next_cursor(page)
        if not cursor:
            return
        if cursor in seen:
            raise ProtocolError(f"{method}: the server repeated the cursor {cursor!r}")
        seen.add(cursor)
    raise ProtocolError(f"{method}: more than {max_pages} pages; giving up")
