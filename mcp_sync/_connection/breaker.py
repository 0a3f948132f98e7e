"""Circuit breakers for a :class:`~mcp_sync.ClientGroup`'s servers.

:class:`CircuitBreaker` is the policy (a frozen value, like :class:`~mcp_sync.Backoff`);
:class:`Breaker` is one server's state under it, shared by every thread calling that server.

- **closed**: calls go through. A call that fails because the server could not be reached or
  did not answer in time (``ConnectionClosed``, ``RequestTimeout``, a ``TransportError``, HTTP
  408, 429 or 5xx: what :func:`~mcp_sync._connection.recovery.worth_retrying` calls an outage)
  counts; an answer (a result, ``isError`` or not, or a JSON-RPC error) sets the count back
  to 0.
  ``threshold`` outages in a row open the breaker.
- **open**: calls fail at once with :class:`~mcp_sync.errors.ServerUnavailable`, for
  ``cool_down`` seconds.
- **half-open**: the first call after the cool-down is the trial; the others still fail fast
  until it settles. An answer closes the breaker, an outage opens it for another cool-down,
  anything else (the caller aborted, a bad argument) lets the next call be the trial.

Calls admitted in one state that settle after the state changed (the stragglers of a burst
that was already under way when the breaker opened) do not count: a breaker opens once per
outage, however many callers were waiting on the server.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from .._rules.numbers import number, whole
from ..errors import McpError, RpcError, ServerUnavailable
from .recovery import worth_retrying

__all__ = ["Breaker", "BreakerStatus", "CircuitBreaker", "policy_for"]

logger = logging.getLogger("mcp_sync.group")

_T = TypeVar("_T")
BreakerState = Literal["closed", "open", "half-open"]


@dataclasses.dataclass(frozen=True)
class CircuitBreaker:
    """When a group stops calling a server that keeps failing, and for how long.

    - ``threshold``: outages in a row (transport failures, timeouts) that open the breaker.
      Tool errors (``isError`` results) and JSON-RPC errors are answers: they never count.
    - ``cool_down``: seconds the breaker stays open, failing calls fast, before one trial call
      is let through.
    - ``clock``: where the time comes from (seconds, monotonic); a test can pass its own.
    """

    threshold: int = 5
    cool_down: float = 30.0
    clock: Callable[[], float] = dataclasses.field(
        default=time.monotonic, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        whole(self.threshold, "CircuitBreaker: threshold", minimum=1)
        number(self.cool_down, "CircuitBreaker: cool_down")


@dataclasses.dataclass(frozen=True)
class BreakerStatus:
    """One server's breaker, as of when it was read (:attr:`ClientGroup.breakers`).

    ``failures`` counts the outages in a row; ``times_opened`` how often it opened so far;
    ``retry_in`` the seconds until the trial call while open (0 once it is due, None when
    closed); ``last_error`` the outage that counted last.
    """

    state: BreakerState
    failures: int
    times_opened: int
    retry_in: float | None
    last_error: McpError | None


class Breaker:
    """One server's breaker under ``policy``; thread-safe."""

    def __init__(self, server: str, policy: CircuitBreaker) -> None:
        self.server, self.policy = server, policy
        self._lock = threading.Lock()
        self._state: BreakerState = "closed"
        self._epoch = 0  # changes with the state: a call settles only in the epoch it began in
        self._failures = 0
        self._times_opened = 0
        self._opened_at = 0.0
        self._trial = False  # a trial call is under way
        self._last: McpError | None = None

    def call(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` if the breaker lets it through, counting how it ends; else raises
        :class:`ServerUnavailable`."""
        epoch, trial = self._admit()
        try:
            result = fn()
        except RpcError:  # the server answered
            self._settle(epoch, trial, None, answered=True)
            raise
        except McpError as exc:
            outage = worth_retrying(exc)
            self._settle(epoch, trial, exc if outage else None, answered=False)
            raise
        except BaseException:
            self._settle(epoch, trial, None, answered=False)
            raise
        self._settle(epoch, trial, None, answered=True)
        return result

    def status(self) -> BreakerStatus:
        with self._lock:
            retry_in = None if self._state == "closed" else self._retry_in()
            return BreakerStatus(
                self._state, self._failures, self._times_opened, retry_in, self._last
            )

    def _retry_in(self) -> float:
        if self._state == "half-open":
            return 0.0
        return max(self._opened_at + self.policy.cool_down - self.policy.clock(), 0.0)

    def _admit(self) -> tuple[int, bool]:
        with self._lock:
            if self._state == "open" and self._retry_in() <= 0:
                self._change("half-open")
            if self._state == "half-open" and not self._trial:
                self._trial = True
                return self._epoch, True
            if self._state == "closed":
                return self._epoch, False
            raise ServerUnavailable(
                self.server,
                failures=self._failures,
                retry_in=None if self._trial else self._retry_in(),
                last_error=self._last,
            )

    def _settle(self, epoch: int, trial: bool, outage: McpError | None, *, answered: bool) -> None:
        with self._lock:
            if epoch != self._epoch:
                return
            if outage is not None:
                self._failures += 1
                self._last = outage
                if trial or self._failures >= self.policy.threshold:
                    self._open()
            elif answered:
                if self._state != "closed":
                    logger.info(
                        "server %r answered the trial call: its breaker closes", self.server
                    )
                    self._change("closed")
                self._failures = 0
            if trial:
                self._trial = False

    def _open(self) -> None:
        self._change("open")
        self._times_opened += 1
        self._opened_at = self.policy.clock()
        logger.warning(
            "server %r failed %d calls in a row (last: %s): its calls fail fast for %g s",
            self.server,
            self._failures,
            self._last,
            self.policy.cool_down,
        )

    def _change(self, state: BreakerState) -> None:
        self._state = state
        self._epoch += 1


def policy_for(
    breaker: CircuitBreaker | bool | None, default: CircuitBreaker | None
) -> CircuitBreaker | None:
    """The policy a ``breaker=`` argument asks for (True: ``default``; None, False: none)."""
    if breaker is True:
        return default
    if breaker is None or breaker is False:
        return None
    if not isinstance(breaker, CircuitBreaker):
        raise TypeError(
            f"breaker= takes a CircuitBreaker, True or None, not {type(breaker).__qualname__}"
        )
    return breaker
