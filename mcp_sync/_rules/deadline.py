"""The deadline of one user call: the one home of "how long may this still take".

A user call (``connect()``, a request, a listing, a tool call with the listing its pins need)
makes one :class:`Deadline` from its ``timeout``, once. Everything beneath it waits by that
value: the ``server/discover`` probe and the ``initialize`` handshake, a recovery's rounds and
their handshake, every page of a listing, every ``input_required`` round and its handlers, the
write and the answer of each request, and the sign-in an HTTP 401 starts (the session hands
:attr:`Deadline.at` to the transport, which hands it to the auth provider). No layer starts a
timeout of its own: a step with a shorter limit of its own (the probe window) waits for the
sooner of the two (:meth:`Deadline.within`).

A call made inside another on the same thread (the pages of a listing, the listing a pinned
tool call makes first, the Streamable HTTP attempt and the HTTP+SSE one of a ``connect()``)
joins the outer call's deadline: :func:`call_deadline` returns the deadline the thread is
already :func:`under`, else a new one. (A context variable: another thread, a handler on the
dispatcher thread included, starts without one.)

Progress pushes the deadline back by ``timeout`` (:meth:`Deadline.renew`), never past
``max_total_timeout`` from the start; when it runs out, :meth:`Deadline.expired` names the
limit that did.
"""

from __future__ import annotations

import math
import time
from contextvars import ContextVar, Token

from ..errors import RequestTimeout
from .numbers import call_timeout

__all__ = ["Deadline", "call_deadline", "under"]


class Deadline:
    """When one user call must end (``at``, a ``time.monotonic()`` value; ``math.inf`` for
    none): ``timeout`` seconds after it began (None or 0: no limit), pushed back by
    ``timeout`` on progress, never past ``max_total_timeout`` after it began."""

    __slots__ = ("at", "max_total", "note", "timeout", "total")

    def __init__(self, timeout: float | None, max_total_timeout: float | None = None) -> None:
        now = time.monotonic()
        self.timeout = timeout
        self.max_total = max_total_timeout
        self.total = now + max_total_timeout if max_total_timeout else math.inf
        at = now + timeout if timeout else math.inf
        self.at = at if at < self.total else self.total
        #: What the call has done so far, for the error when it runs out ("3 pages answered").
        self.note = ""

    def left(self) -> float:
        """Seconds left (``math.inf`` without a limit, 0 once passed)."""
        left = self.at - time.monotonic()
        return left if left > 0 else 0.0

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def within(self, seconds: float) -> float:
        """``seconds``, or what is left if that is less: a step's own shorter limit."""
        left = self.left()
        return seconds if seconds < left else left

    def check(self, method: str, detail: str | None = None) -> None:
        """Raise :meth:`expired` if the deadline has passed."""
        if time.monotonic() >= self.at:
            raise self.expired(method, detail)

    def renew(self) -> None:
        """Progress arrived: ``timeout`` from now, never past the cap."""
        if self.timeout:
            renewed = min(time.monotonic() + self.timeout, self.total)
            if renewed > self.at:
                self.at = renewed

    def expired(
        self, method: str, detail: str | None = None, cause: BaseException | None = None
    ) -> RequestTimeout:
        """The error of ``method`` for this deadline, which ran out: it names the limit that
        did (``timeout``, or ``max_total_timeout`` when the cap ended it), then what the call
        had done and ``detail``; ``cause`` (what was waited for when the time ran out, a
        sign-in for one) is its ``__cause__``."""
        capped = self.at >= self.total
        limit = self.max_total if capped else self.timeout
        text = "; ".join(part for part in (self.note, detail) if part)
        error = RequestTimeout(method, limit or 0.0, text or None)
        if cause is not None:
            error.__cause__ = cause
        return error


#: The deadline of the user call this thread is making, if any (see :func:`under`).
_CURRENT: ContextVar[Deadline | None] = ContextVar("mcp_sync_call_deadline", default=None)


def call_deadline(
    timeout: float | None,
    max_total_timeout: float | None = None,
    *,
    what: str = "call",
    default: float | None = None,
) -> Deadline:
    """The deadline of the user call this thread is making: the one it is already
    :func:`under`, else a new one of ``timeout`` (``default`` when None: the client's
    ``request_timeout``, checked when it was set) and ``max_total_timeout``. ``timeout`` is
    checked here, where every call's deadline is made (``what`` names the call in the error:
    NaN, a string or a bool is refused, as :func:`mcp_sync._rules.numbers.call_timeout` says)."""
    if timeout is not None:
        timeout = call_timeout(timeout, what)
    current = _CURRENT.get()
    if current is not None:
        return current
    return Deadline(default if timeout is None else timeout, max_total_timeout)


class under:
    """Run the ``with`` block's calls on this thread under ``deadline``. (A class, not a
    ``contextmanager`` generator: it is on every tool call's path, python -m
    bench.instructions.)"""

    __slots__ = ("_deadline", "_token")
    _token: Token[Deadline | None]

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline

    def __enter__(self) -> Deadline:
        self._token = _CURRENT.set(self._deadline)
        return self._deadline

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
