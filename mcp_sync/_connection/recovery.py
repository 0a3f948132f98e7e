"""Automatic recovery (the client's ``recovery=`` option): which failures mean the connection
is lost, which requests may be sent again, and one reconnection at a time, bounded by a
:class:`~mcp_sync.backoff.Backoff`.

The backoff is carried from one loss to the next: a connection that was lost before it
answered anything, and within ``max_delay`` of its handshake, counts as one more failed
attempt, so a server that dies right after its handshake is not started again on every call.
(A false alarm, a connection left idle that long whose server was redeployed, costs one wait
of the policy.) Once the attempts are spent, calls fail at once with
:class:`~mcp_sync.errors.CrashLoop` until the wait after the last failure is over, and then
one attempt is made again. A connection that answered, or lived longer, starts a fresh run.

A round (the attempts of one call) listens to that call's abort signal and waits by its
deadline (the call's own, which the call's request gets what is left of afterwards), in
the wait between attempts and in the handshake, and to ``close()``, which also stops what the
round started (a new server process) before it returns.

The rule that keeps it safe: a request is sent again only when the server certainly did not
run it (no connection could be made, or HTTP 404 for a session the server no longer knows,
which it answers instead of running the request). A request that was out when the connection
broke may have run (a tool call can have side effects): it fails with ``ConnectionClosed`` and
is never re-sent; calls made afterwards reconnect.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .._rules.causes import causes_of
from .._rules.deadline import Deadline
from ..abort import AbortController, AbortSignal
from ..backoff import RETRY_STATUSES, Backoff, retry_after_seconds
from ..errors import (
    Aborted,
    ConnectionClosed,
    CrashLoop,
    HttpError,
    InvalidStateError,
    McpError,
    NetworkError,
    RequestTimeout,
    SessionExpired,
    TransportError,
)

if TYPE_CHECKING:
    from .._session.session import Session
    from ..transports.base import Transport

__all__ = [
    "Loss",
    "Reconnector",
    "Track",
    "broke_while_out",
    "dropped_in_flight",
    "refused_unprocessed",
    "restore",
    "worth_retrying",
]

logger = logging.getLogger("mcp_sync")

#: Longest single wait for the round another thread runs: an abort is seen within this.
_SLICE = 0.05


def refused_unprocessed(error: BaseException) -> bool:
    """True if the server certainly did not run the request that failed with ``error``."""
    if isinstance(error, SessionExpired):
        return True
    if isinstance(error, ConnectionClosed):
        return error.sent is False
    if not isinstance(error, TransportError) or isinstance(error, HttpError):
        return False
    # The HTTP transports say so with a typed error (transports/_http/errors.py); the cause
    # chain is walked for one wrapped by whoever reported it.
    return any(
        (isinstance(cause, NetworkError) and cause.sent is False)
        or isinstance(cause, ConnectionRefusedError)
        for cause in causes_of(error)
    )


def dropped_in_flight(error: BaseException) -> bool:
    """True if ``error`` means the exchange broke while the request was out: the connection
    closed, or the transport failed mid-way (a reset, a response stream cut short). An answer
    the server gave (an HTTP error status, a JSON-RPC error) is not that."""
    if isinstance(error, ConnectionClosed):
        return True
    return isinstance(error, TransportError) and not isinstance(error, HttpError)


def broke_while_out(method: str, error: McpError) -> ConnectionClosed:
    """The error of a call that was out when the connection broke: not the session's
    "closed for good", since with recovery= the next call heals."""
    return ConnectionClosed(
        f"the connection broke while {method} was out (not sent again: it may have run); "
        "the next call reconnects",
        cause=error,
        exit_status=getattr(error, "exit_status", None),
        stderr_tail=getattr(error, "stderr_tail", None),
    )


def worth_retrying(error: BaseException) -> bool:
    """True if a reconnection that failed with ``error`` may work later (the server is down,
    restarting or overloaded), False for what waiting will not fix (bad auth, a version
    mismatch, a misconfiguration)."""
    if isinstance(error, (ConnectionClosed, RequestTimeout, SessionExpired)):
        return True
    if isinstance(error, HttpError):
        return error.status in RETRY_STATUSES
    return isinstance(error, TransportError)


def _retry_after(error: BaseException) -> float | None:
    headers = getattr(error, "headers", None) or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    return retry_after_seconds(value)


@dataclasses.dataclass(frozen=True)
class Loss:
    """How connection number ``generation`` ended: whether it ``answered`` any call, how long
    it ``lived`` (seconds from its handshake to its end) and what ended it (``cause``)."""

    generation: int
    answered: bool
    lived: float
    cause: BaseException | None


class Track:
    """How a connection fares, for the backoff: when it was made (``since``), the last
    connection a call got an answer on (``answered_in``, a connection number), and when and
    why it was lost (``lost_at``, ``cause``; the first report wins)."""

    __slots__ = ("answered_in", "cause", "lost_at", "since")

    def __init__(self, answered_in: int = -1) -> None:
        self.since = time.monotonic()
        self.answered_in = answered_in
        self.lost_at: float | None = None
        self.cause: BaseException | None = None

    def lost(self, cause: BaseException | None) -> None:
        if self.lost_at is None:
            self.lost_at, self.cause = time.monotonic(), cause

    def loss(self, generation: int) -> Loss:
        """The :class:`Loss` of connection number ``generation``, this one."""
        lived = (self.lost_at or time.monotonic()) - self.since
        return Loss(generation, self.answered_in == generation, lived, self.cause)


def restore(
    send: Callable[[str, dict[str, Any] | None], Any],
    restorers: list[Callable[[Callable[[str, dict[str, Any] | None], Any]], None]],
    log_level: str | None,
) -> None:
    """Tell a new handshake-era session what the old one had: each ``restorers``' part
    (resource subscriptions), then the log level, through ``send(method, params)``."""
    for restorer in list(restorers):
        restorer(send)
    if log_level is not None:
        try:
            send("logging/setLevel", {"level": log_level})
        except McpError as exc:
            logger.warning("after reconnecting, logging/setLevel failed: %s", exc)


class Reconnector:
    """Runs one reconnection at a time for a client, retrying with ``policy``.

    Threads that find the connection lost while another thread reconnects wait for it and
    share its outcome: one server process, one handshake, however many callers. (Not an
    abort: a round that ended because its caller gave up is no answer for the others.)
    """

    def __init__(self, policy: Backoff) -> None:
        #: Where the current run of failures stands (carried from one loss to the next).
        self.policy = policy.reset()
        self._lock = threading.Lock()  # held by the thread running a round
        self._guard = threading.Lock()  # stop() against a round starting something
        self._closed = AbortController()
        self._cancels: list[Callable[[], None]] = []
        self._rounds = 0
        self._failure: BaseException | None = None
        self._not_before = 0.0  # no attempt before this time.monotonic()
        self._counted = -1  # the last connection whose loss went into the policy
        self._last: BaseException | None = None  # the last failure, for CrashLoop

    def stop(self) -> None:
        """The client is closing: end any wait and handshake, and stop what a round started."""
        with self._guard:
            self._closed.abort("the client was closed")
            cancels, self._cancels = self._cancels, []
        for cancel in cancels:
            try:
                cancel()
            except Exception:
                logger.exception("mcp_sync: stopping a reconnection failed")

    def replace(
        self,
        session: Session,
        transport: Transport,
        factory: Callable[[], Transport] | None,
        new_session: Callable[[Transport], Session],
        handshake: Callable[[Session, Transport], None],
    ) -> None:
        """Replace ``transport``, which closed, with a new one from ``factory`` and run
        ``handshake`` on its session (``new_session(transport)``). If the client closes
        meanwhile, the new transport is stopped before ``close()`` returns."""
        if factory is None:
            raise InvalidStateError(
                "the connection closed and recovery cannot replace it: connect() was given "
                "a transport object; give it a function that returns a new transport"
            )
        session.detach()
        transport.close()  # already closed: this reaps the process and joins its threads
        new = factory()
        fresh = new_session(new)

        def stop() -> None:
            fresh.fail_all(None)
            new.close()
            fresh.detach()

        with self._starting(new.start, stop):
            try:
                handshake(fresh, new)
            except BaseException:
                stop()
                raise

    @contextmanager
    def _starting(self, start: Callable[[], None], cancel: Callable[[], None]) -> Iterator[None]:
        """Call ``start()`` (a new transport's), then run the ``with`` block; ``cancel()``
        stops what it started if the client closes before the block ends. Starting and
        :meth:`stop` exclude each other: nothing starts after ``close()`` began, and nothing
        started escapes it."""
        with self._guard:
            if self._closed.signal.aborted:
                raise ConnectionClosed("the client was closed while reconnecting")
            start()
            self._cancels.append(cancel)
        try:
            yield
        finally:
            with self._guard:
                if cancel in self._cancels:
                    self._cancels.remove(cancel)

    def run(
        self,
        healthy: Callable[[], bool],
        reopen: Callable[[Deadline, AbortSignal], None],
        deadline: Deadline,
        loss: Callable[[], Loss],
        signal: AbortSignal | None = None,
    ) -> None:
        """Make ``healthy()`` true by calling ``reopen(deadline, signal)`` until it works, the
        policy is exhausted or ``deadline`` (the call's) passes; ``loss()`` says how
        the connection to replace ended, ``signal`` is the call's.

        Raises ``ConnectionClosed`` (its cause the last failure) when it gives up,
        :class:`CrashLoop` while the policy is spent, ``Aborted`` when ``signal`` fires, or
        the failure itself when waiting would not fix it.
        """
        what = "lost the connection to the server"
        rounds_seen = self._rounds
        self._acquire(deadline.at, signal, what)
        try:
            if healthy():
                return
            failure = self._failure
            if self._rounds != rounds_seen and failure is not None:
                raise _again(failure)  # the round this thread waited for failed just now
            self._failure = None
            round_signal, removers = _either(self._closed.signal, signal)
            try:
                self._count(loss())
                self._attempts(reopen, deadline, what, round_signal, signal)
            except Aborted:
                raise  # this caller's own: the others try for themselves
            except BaseException as exc:
                self._failure = exc
                self._rounds += 1
                raise
            finally:
                for remove in removers:
                    remove()
            self._rounds += 1
        finally:
            self._lock.release()

    def _acquire(self, deadline: float, signal: AbortSignal | None, what: str) -> None:
        """Take the round's lock, or fail at ``deadline``, on ``signal`` or at close."""
        while not self._lock.acquire(timeout=min(max(deadline - time.monotonic(), 0.0), _SLICE)):
            if signal is not None:
                signal.throw_if_aborted()
            if self._closed.signal.aborted:
                raise ConnectionClosed(f"{what}: the client was closed")
            if time.monotonic() >= deadline:
                raise ConnectionClosed(f"{what}: timed out waiting for another thread to reconnect")

    def _count(self, loss: Loss) -> None:
        """Put the end of connection ``loss.generation`` into the policy, once."""
        if loss.generation <= self._counted:
            return
        self._counted = loss.generation
        policy = self.policy
        if loss.answered or loss.lived > policy.max_delay:
            self.policy, self._not_before = policy.reset(), 0.0
            return
        # lost before it answered anything, and soon: one more failed attempt
        self._failed(policy.increment(), loss.cause, time.monotonic())

    def _failed(self, policy: Backoff, cause: BaseException | None, now: float) -> None:
        self.policy, self._last = policy, cause
        self._not_before = now + policy.next_delay()

    def _attempts(
        self,
        reopen: Callable[[Deadline, AbortSignal], None],
        deadline: Deadline,
        what: str,
        round_signal: AbortSignal,
        signal: AbortSignal | None,
    ) -> None:
        before: BaseException | None = None  # what this call's previous attempt met
        while True:
            self._check(round_signal, signal, what)
            now = time.monotonic()
            wait = self._not_before - now
            if self.policy.is_exhausted() and wait > 0:
                raise self._crash_loop(what, wait)
            if wait > 0:
                if now + wait >= deadline.at:
                    raise ConnectionClosed(
                        f"{what}: could not reconnect ({self.policy.failures} attempts); the "
                        f"next one is due in {wait:.1f} s, after this call's timeout",
                        cause=self._last,
                    )
                round_signal.wait(wait)
                self._check(round_signal, signal, what)
            try:
                reopen(deadline, round_signal)
                return
            except McpError as exc:
                self._check(round_signal, signal, what)
                if not worth_retrying(exc):
                    raise
                policy = self.policy.increment(retry_after=_retry_after(exc))
                self._failed(policy, exc, time.monotonic())
                if policy.is_exhausted():
                    raise self._crash_loop(what, self._not_before - time.monotonic()) from exc
                if self._not_before >= deadline.at:
                    raise _gave_up(what, policy.failures, exc, before, deadline) from exc
                before = exc
                logger.info(
                    "%s: could not reconnect (%s); next attempt in %.2f s",
                    what,
                    exc,
                    self._not_before - time.monotonic(),
                )

    def _check(self, round_signal: AbortSignal, signal: AbortSignal | None, what: str) -> None:
        if signal is not None:
            signal.throw_if_aborted()
        if round_signal.aborted:
            raise ConnectionClosed(f"{what}: the client was closed")

    def _crash_loop(self, what: str, wait: float) -> CrashLoop:
        """The error of a call made while the policy is spent (``wait`` seconds to go)."""
        # The window after the last failure: the wait its policy gives, at least.
        policy, last = self.policy, self._last
        wait = max(wait, 0.0)
        error = CrashLoop(
            f"{what}: could not reconnect ({policy.failures} attempts): the server keeps "
            f"failing (a crash loop, or it is down); calls fail at once for {wait:.1f} s more, "
            f"then one more attempt is made. The last failure: {_head(last)}",
            attempts=policy.failures,
            retry_at=time.monotonic() + wait,
            retry_in=wait,
            exit_status=getattr(last, "exit_status", None),
            stderr_tail=getattr(last, "stderr_tail", None),
        )
        error.__cause__ = last
        return error


def _gave_up(
    what: str, attempts: int, last: BaseException, before: BaseException | None, deadline: Deadline
) -> ConnectionClosed:
    """The error of a call whose time ran out while reconnecting, ``last`` the failure of its
    last attempt. When that attempt was cut short by the call's own timeout, what the attempt
    ``before`` it met is named too: that says why the server was unreachable (a refused
    connection, say), where the timeout only says the call ran out of time."""
    text = f"{what}: could not reconnect ({attempts} attempts)"
    if (
        isinstance(last, RequestTimeout)
        and deadline.passed()
        and before is not None
        and not isinstance(before, RequestTimeout)
    ):
        error = ConnectionClosed(
            f"{text}: {_head(last)}; the attempt before it: {_head(before)}",
            stderr_tail=getattr(before, "stderr_tail", None),
        )
        error.cause = last
        return error
    return ConnectionClosed(text, cause=last)


def _head(error: BaseException | None) -> str:
    """An error's message without the stderr tail (the crash loop error shows its own)."""
    if error is None:
        return "unknown"
    return str(error).partition("\n--- server stderr")[0]


def _either(
    closed: AbortSignal, signal: AbortSignal | None
) -> tuple[AbortSignal, list[Callable[[], None]]]:
    """A signal that fires with ``closed`` or ``signal``, and the removers of its listeners
    (AbortSignal.any never removes them: the client's own signal would collect one a round)."""
    either = AbortController()
    removers = [closed.on_abort(either.abort)]
    if signal is not None:
        removers.append(signal.on_abort(either.abort))
    return either.signal, removers


def _again(error: BaseException) -> BaseException:
    """The error a waiting thread raises for a round that failed in another thread."""
    return copy.copy(error)
