"""One request awaiting its answer: its Future and the deadline it waits by.

The deadline is the user call's (:class:`~mcp_sync._rules.deadline.Deadline`), shared by every
request the call makes (the pages of a listing, the ``input_required`` rounds of a call, the
probe and the handshake of a ``connect()``): progress on any of them pushes it back for all
(:meth:`PendingRequest.renew`), and when it runs out :meth:`PendingRequest.timed_out` names
the limit that did.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .._rules.deadline import Deadline
from ..abort import AbortSignal
from ..errors import RequestTimeout
from ..protocol.jsonrpc import RequestId

__all__ = ["PendingRequest", "ProgressCallback"]

ProgressCallback = Callable[[dict[str, Any]], None]


class PendingRequest:
    """One request awaiting its answer; ``future`` settles exactly once."""

    __slots__ = (
        "cancel_reason",
        "deadline",
        "future",
        "id",
        "method",
        "on_progress",
        "remove_abort",
        "send_signal",
    )

    def __init__(
        self,
        id: RequestId,
        method: str,
        deadline: Deadline,
        on_progress: ProgressCallback | None,
    ) -> None:
        self.id = id
        self.method = method
        self.future: Future[Any] = Future()
        self.deadline = deadline
        self.on_progress = on_progress
        #: Fires when the request settles: the transport may let go of it (an HTTP stream).
        self.send_signal = AbortSignal()
        #: Removes the caller's abort listener (see :meth:`Session.begin`).
        self.remove_abort: Callable[[], None] | None = None
        self.cancel_reason: str | None = None

    def renew(self) -> None:
        """Progress arrived: push the call's deadline back."""
        self.deadline.renew()

    def timed_out(
        self, detail: str | None = None, cause: BaseException | None = None
    ) -> RequestTimeout:
        """The error for a deadline that ran out, naming the limit that did (the timeout, or
        ``max_total_timeout`` when the cap was what ended it); ``cause``: what ran out of
        time with it (a sign-in)."""
        return self.deadline.expired(self.method, detail, cause)
