"""Automatic recovery (the client's ``recovery=`` option): which failures mean the connection
is lost, which requests may be sent again, and one reconnection at a time, bounded by a
:class:`~mcp_sync.backoff.Backoff`.

The rule that keeps it safe: a request is sent again only when the server certainly did not
run it (no connection could be made, or HTTP 404 for a session the server no longer knows,
which it answers instead of running the request). A request that was out when the connection
broke may have run (a tool call can have side effects): it fails with ``ConnectionClosed`` and
is never re-sent; calls made afterwards reconnect.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable

from ._causes import causes_of
from .backoff import Backoff
from .errors import (
    ConnectionClosed,
    HttpError,
    McpError,
    RequestTimeout,
    SessionExpired,
    TransportError,
)

__all__ = ["Reconnector", "dropped_in_flight", "refused_unprocessed", "worth_retrying"]

# Exception names from urllib3 / requests and socket's failed name lookup, matched by name so
# that a stdio-only program never imports them (socket alone is 2% of `import mcp_sync`).
_CANNOT_CONNECT = frozenset(
    {"NewConnectionError", "ConnectTimeoutError", "ConnectTimeout", "gaierror"}
)
_RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))


def refused_unprocessed(error: BaseException) -> bool:
    """True if the server certainly did not run the request that failed with ``error``."""
    if isinstance(error, SessionExpired):
        return True
    if isinstance(error, ConnectionClosed):
        return error.sent is False
    if not isinstance(error, TransportError) or isinstance(error, HttpError):
        return False
    return any(
        isinstance(cause, ConnectionRefusedError) or type(cause).__name__ in _CANNOT_CONNECT
        for cause in causes_of(error)
    )


def dropped_in_flight(error: BaseException) -> bool:
    """True if ``error`` means the exchange broke while the request was out: the connection
    closed, or the transport failed mid-way (a reset, a response stream cut short). An answer
    the server gave (an HTTP error status, a JSON-RPC error) is not that."""
    if isinstance(error, ConnectionClosed):
        return True
    return isinstance(error, TransportError) and not isinstance(error, HttpError)


def worth_retrying(error: BaseException) -> bool:
    """True if a reconnection that failed with ``error`` may work later (the server is down,
    restarting or overloaded), False for what waiting will not fix (bad auth, a version
    mismatch, a misconfiguration)."""
    if isinstance(error, (ConnectionClosed, RequestTimeout, SessionExpired)):
        return True
    if isinstance(error, HttpError):
        return error.status in _RETRY_STATUSES
    return isinstance(error, TransportError)


def _retry_after(error: BaseException) -> float | None:
    headers = getattr(error, "headers", None) or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the computed backoff is good enough


class Reconnector:
    """Runs one reconnection at a time for a client, retrying with ``policy``.

    Threads that find the connection lost while another thread reconnects wait for it and
    share its outcome: one server process, one handshake, however many callers.
    """

    def __init__(self, policy: Backoff) -> None:
        self.policy = policy.reset()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._rounds = 0
        self._failure: BaseException | None = None

    def stop(self) -> None:
        """The client is closing: end any wait between attempts."""
        self._stop.set()

    def run(
        self,
        healthy: Callable[[], bool],
        reopen: Callable[[float], None],
        deadline: float,
        what: str,
    ) -> None:
        """Make ``healthy()`` true by calling ``reopen(timeout)`` until it works, the policy
        is exhausted or ``deadline`` (``time.monotonic()``) passes.

        Raises ``ConnectionClosed`` (its cause the last failure) when it gives up, or the
        failure itself when waiting would not fix it.
        """
        rounds_seen = self._rounds
        if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            raise ConnectionClosed(f"{what}: timed out waiting for another thread to reconnect")
        try:
            if healthy():
                return
            failure = self._failure
            if self._rounds != rounds_seen and failure is not None:
                raise _again(failure)  # the round this thread waited for failed just now
            self._failure = None
            try:
                self._attempts(reopen, deadline, what)
            except BaseException as exc:
                self._failure = exc
                raise
            finally:
                self._rounds += 1
        finally:
            self._lock.release()

    def _attempts(self, reopen: Callable[[float], None], deadline: float, what: str) -> None:
        policy = self.policy
        while True:
            if self._stop.is_set():
                raise ConnectionClosed(f"{what}: the client was closed")
            try:
                reopen(max(deadline - time.monotonic(), 0.001))
                return
            except McpError as exc:
                if not worth_retrying(exc):
                    raise
                policy = policy.increment(retry_after=_retry_after(exc))
                wait = policy.next_delay()
                if policy.is_exhausted() or time.monotonic() + wait >= deadline:
                    raise ConnectionClosed(
                        f"{what}: could not reconnect ({policy.failures} attempts)", cause=exc
                    ) from exc
            if self._stop.wait(wait):
                raise ConnectionClosed(f"{what}: the client was closed")


def _again(error: BaseException) -> BaseException:
    """The error a waiting thread raises for a round that failed in another thread."""
    return copy.copy(error)
