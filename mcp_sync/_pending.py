"""One request awaiting its answer: its Future and its deadlines.

A request has two deadlines: ``deadline``, which each progress notification pushes back by
``timeout`` (:meth:`PendingRequest.renew`), and ``total_deadline``, the hard cap
``max_total_timeout`` sets, which nothing moves. ``deadline`` never passes ``total_deadline``;
when it runs out, :meth:`PendingRequest.timed_out` names the limit that did.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .abort import AbortSignal
from .errors import RequestTimeout
from .protocol.jsonrpc import RequestId

__all__ = ["PendingRequest", "ProgressCallback"]

ProgressCallback = Callable[[dict[str, Any]], None]


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
        self.on_progress = on_progress
        #: Fires when the request settles: the transport may let go of it (an HTTP stream).
        self.send_signal = AbortSignal()
        #: Removes the caller's abort listener (see :meth:`Session.begin`).
        self.remove_abort: Callable[[], None] | None = None
        self.cancel_reason: str | None = None

    def renew(self) -> None:
        """Progress arrived: push the deadline back by ``timeout``, never past the cap."""
        if self.timeout:
            self.deadline = min(time.monotonic() + self.timeout, self.total_deadline)

    def timed_out(self, detail: str | None = None) -> RequestTimeout:
        """The error for a deadline that ran out, naming the limit that did (the per-request
        timeout, or ``max_total_timeout`` when the cap was what ended it)."""
        capped = self.deadline >= self.total_deadline
        limit = self.max_total if capped else self.timeout
        return RequestTimeout(self.method, limit or 0.0, detail)
