"""One request awaiting its answer: its Future and its deadlines.

A request has two deadlines: ``deadline``, which each progress notification pushes back by
``timeout`` (:meth:`PendingRequest.renew`), and ``total_deadline``, the hard cap
``max_total_timeout`` sets, which nothing moves. ``deadline`` never passes ``total_deadline``;
when it runs out, :meth:`PendingRequest.timed_out` names the limit that did.

Several requests may share one deadline (:class:`SharedDeadline`): every page of a listing
(``list_tools()``), so that its ``timeout`` bounds the whole listing, not each page. The
listing sets it for the calling thread (:data:`SHARED_DEADLINE`, a context variable: only the
requests this thread makes meanwhile see it); each page then starts with what is left of it,
and progress on a page renews it, as it renews a single request.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextvars import ContextVar
from typing import Any

from .abort import AbortSignal
from .errors import RequestTimeout
from .protocol.jsonrpc import RequestId

__all__ = ["SHARED_DEADLINE", "PendingRequest", "ProgressCallback", "SharedDeadline"]

ProgressCallback = Callable[[dict[str, Any]], None]


class SharedDeadline:
    """One deadline for a series of requests (the pages of a listing): ``timeout`` from now,
    pushed back by ``timeout`` on progress, never past ``max_total_timeout`` from now."""

    __slots__ = ("deadline", "progress", "timeout", "total_deadline")

    def __init__(self, timeout: float | None, max_total_timeout: float | None) -> None:
        now = time.monotonic()
        self.timeout = timeout
        self.total_deadline = now + max_total_timeout if max_total_timeout else math.inf
        self.deadline = min(now + timeout if timeout else math.inf, self.total_deadline)
        #: What the series has done so far, for the error when it runs out ("3 pages").
        self.progress = ""

    def renew(self) -> None:
        if self.timeout:
            renewed = min(time.monotonic() + self.timeout, self.total_deadline)
            if renewed > self.deadline:
                self.deadline = renewed

    def expired(self) -> bool:
        return time.monotonic() >= self.deadline

    def describe(self) -> str:
        done = f"; {self.progress}" if self.progress else ""
        return f"the timeout bounds the whole listing{done}"


#: The deadline the requests the calling thread makes now share, if any (set by a listing).
SHARED_DEADLINE: ContextVar[SharedDeadline | None] = ContextVar(
    "mcp_sync_shared_deadline", default=None
)


class PendingRequest:
    """One request awaiting its answer; ``future`` settles exactly once."""

    __slots__ = (
        "cancel_reason",
        "deadline",
        "future",
        "id",
        "max_total",
        "method",
        "on_progress",
        "remove_abort",
        "send_signal",
        "shared",
        "timeout",
        "total_deadline",
    )

    def __init__(
        self,
        id: RequestId,
        method: str,
        timeout: float | None,
        max_total_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.id = id
        self.method = method
        self.future: Future[Any] = Future()
        self.timeout = timeout
        self.max_total = max_total_timeout
        if timeout or max_total_timeout:
            now = time.monotonic()
            total = self.total_deadline = now + max_total_timeout if max_total_timeout else math.inf
            deadline = now + timeout if timeout else math.inf
            self.deadline = deadline if deadline < total else total
        else:
            self.total_deadline = self.deadline = math.inf
        shared = self.shared = SHARED_DEADLINE.get()
        if shared is not None and shared.deadline < self.deadline:
            self.deadline = shared.deadline
        self.on_progress = on_progress
        #: Fires when the request settles: the transport may let go of it (an HTTP stream).
        self.send_signal = AbortSignal()
        #: Removes the caller's abort listener (see :meth:`Session.begin`).
        self.remove_abort: Callable[[], None] | None = None
        self.cancel_reason: str | None = None

    def renew(self) -> None:
        """Progress arrived: push the deadline back by ``timeout``, never past the cap (and
        the shared deadline with it)."""
        if self.shared is not None:
            self.shared.renew()
        if self.timeout:
            self.deadline = min(time.monotonic() + self.timeout, self.total_deadline)

    def timed_out(self, detail: str | None = None) -> RequestTimeout:
        """The error for a deadline that ran out, naming the limit that did (the per-request
        timeout, or ``max_total_timeout`` when the cap was what ended it)."""
        capped = self.deadline >= self.total_deadline
        limit = self.max_total if capped else self.timeout
        shared = self.shared
        if shared is not None:
            capped = self.deadline >= shared.total_deadline
            limit = self.max_total if capped else shared.timeout
            detail = shared.describe() + (f"; {detail}" if detail else "")
        return RequestTimeout(self.method, limit or 0.0, detail)
