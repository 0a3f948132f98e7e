"""The renewal of a Streamable HTTP session, as the other threads' requests see it.

While a session is being opened again (``initialize`` sent without a session id, after the
server forgot the old one or restarted), a request from another thread has no session to go
out on: sent without ``Mcp-Session-Id`` it would be refused (the official SDK answers ``400
Bad Request: Missing session ID``). So such a request waits here for the renewal to settle,
within its own deadline: until the message that opens the session
(``notifications/initialized``) is queued, or ``initialize`` failed or gave no session id.

The wait is bounded three ways: the request's deadline, the deadline of the ``initialize``
that began the renewal (plus a short grace for the handshake's last message once its answer
came), and the request's abort signal or the transport's closing. A request that still went
out without a session id and was refused for it (400 or 404) raises
:class:`~mcp_sync.errors.SessionExpired`: the server did not run it, so recovery sends it again.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from ...abort import AbortSignal
from ...errors import SessionExpired
from ...protocol.jsonrpc import RequestId

__all__ = ["SessionRenewal", "refused_without_session"]

#: Seconds the handshake is given, once ``initialize`` was answered with a session id, to send
#: its last message; a negotiation that stopped there (a version mismatch) holds nobody longer.
GRACE = 1.0
#: Longest single wait: an abort or the transport's closing is seen within this.
_SLICE = 0.05


class SessionRenewal:
    """Whether a session is being opened again, and the wait for it. Thread-safe."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        #: Requests wait until this ``time.monotonic()`` at most (0: no renewal going on).
        self.until = 0.0

    def begin(self, deadline: float | None) -> None:
        """``initialize`` is going out (``deadline``: its own, None for none)."""
        with self._cond:
            self.until = math.inf if deadline is None else deadline

    def answered(self, session_id: str | None) -> None:
        """``initialize`` was answered: with no session id nobody has one to wait for; with
        one, the handshake's last message is due at once."""
        with self._cond:
            if session_id is None:
                self._settle()
            else:
                self.until = min(self.until, time.monotonic() + GRACE)

    def end(self) -> None:
        """The renewal settled: its last message is queued, or it failed."""
        with self._cond:
            self._settle()

    def _settle(self) -> None:
        self.until = 0.0
        self._cond.notify_all()

    def wait(
        self, deadline: float, signal: AbortSignal | None, closing: Callable[[], bool]
    ) -> None:
        """Return once no renewal is going on, or at ``deadline``, on ``signal`` or when
        ``closing()``: whoever sends then finds the session as it is."""
        if not self.until:  # the usual case: no renewal, no lock taken
            return
        with self._cond:
            while True:
                now = time.monotonic()
                if now >= self.until:
                    self.until = 0.0  # (its grace is over: nobody waits for it any more)
                    return
                limit = min(deadline, self.until)
                if now >= limit or closing() or (signal is not None and signal.aborted):
                    return
                self._cond.wait(min(limit - now, _SLICE))


def refused_without_session(status: int, url: str, request_id: RequestId) -> None:
    """For a request that went out with no session id while the transport had one (a renewal
    failed, or began after the request passed :meth:`SessionRenewal.wait`): raise
    :class:`SessionExpired` if the server refused it for that (400 or 404). The server did not
    run it, so recovery sends it again."""
    if status in (400, 404):
        raise SessionExpired(
            f"the server at {url} refused a request sent without a session id (HTTP {status}) "
            "while the session was being renewed",
            request_id=request_id,
        )
