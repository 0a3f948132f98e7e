"""``Backoff``: how long to wait between attempts, and when to give up, as one value object.

Modelled on urllib3's ``Retry``: a frozen dataclass holding the policy (``initial_delay``,
``max_delay``, ``max_retries``, ``multiplier``, ``jitter``, whether to honour a server's
``Retry-After``) and the progress of one run of attempts (``failures``, the last server hint).
``increment()`` returns the state after one more failure, ``reset()`` the state of a fresh
run, ``stream_ended()`` the state after a long-lived stream ended (which resets the run if the
stream worked), ``is_exhausted()`` says when to stop and ``next_delay()`` how long to wait
first. Nothing here sleeps or does I/O, so every loop that retries (client recovery, the HTTP
streams' reconnection) shares one policy and stays testable.

    policy = Backoff(max_retries=3, initial_delay=0.2)
    while True:
        try:
            return attempt()
        except OSError:
            policy = policy.increment()
            if policy.is_exhausted():
                raise
            time.sleep(policy.next_delay())
"""

from __future__ import annotations

import dataclasses
import math
import random
import time

from ._rules.numbers import number, whole

__all__ = ["RETRY_STATUSES", "Backoff"]

#: HTTP statuses that say "try again later" (timeout, too many requests, the server's own
#: failures): an attempt answered with one may work on a later try. The one list both the
#: HTTP streams' reconnection and client recovery consult.
RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds to wait that an HTTP ``Retry-After`` value asks for: whole seconds or an HTTP
    date (RFC 9110 10.2.3), from now. None for anything else (a fraction, ``nan``, ``inf``, a
    number too long for a float): the computed backoff is used instead. The one reading of
    the header, for the HTTP streams and for recovery."""
    value = (value or "").strip()
    if value.isdigit() and value.isascii():
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    import email.utils  # (only for a date: importing mcp_sync stays free of the socket module)

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


# 2.0 ** 64 seconds is far past any cap; a larger exponent would only risk an OverflowError.
_MAX_EXPONENT = 64


@dataclasses.dataclass(frozen=True)
class Backoff:
    """A bounded retry policy with exponential backoff.

    - ``initial_delay``: seconds to wait after the first failure; each further failure
      multiplies it by ``multiplier``; no wait is longer than ``max_delay``.
    - ``max_retries``: failures in a row tolerated; the run is exhausted after one more.
    - ``jitter``: the computed wait is scaled by a random factor in ``1 ± jitter`` so that
      many clients of one restarted server do not come back in step (0 turns it off).
    - ``respect_retry_after``: a server's ``Retry-After`` replaces the computed wait (capped).
    - ``failures``, ``retry_after``: where this run stands (0 and None for a fresh policy).
    """

    initial_delay: float = 0.25
    max_delay: float = 30.0
    max_retries: int = 5
    multiplier: float = 2.0
    jitter: float = 0.1
    respect_retry_after: bool = True
    failures: int = 0
    retry_after: float | None = None

    def __post_init__(self) -> None:
        name = type(self).__name__
        whole(self.max_retries, f"{name}: max_retries")
        whole(self.failures, f"{name}: failures")
        number(self.initial_delay, f"{name}: initial_delay")
        number(self.max_delay, f"{name}: max_delay")
        number(self.multiplier, f"{name}: multiplier", minimum=1)
        number(self.jitter, f"{name}: jitter", maximum=1)
        if self.retry_after is not None:
            number(self.retry_after, f"{name}: retry_after")

    def increment(self, *, retry_after: float | None = None) -> Backoff:
        """The state after one more failure; ``retry_after`` is the server's hint (seconds)."""
        return dataclasses.replace(self, failures=self.failures + 1, retry_after=retry_after)

    def reset(self) -> Backoff:
        """The state of a fresh run (after a success)."""
        return dataclasses.replace(self, failures=0, retry_after=None)

    def is_exhausted(self) -> bool:
        """True once more than ``max_retries`` failures happened in this run."""
        return self.failures > self.max_retries

    def next_delay(self, *, server_retry: float | None = None) -> float:
        """Seconds to wait before the next attempt (0 before any failure); ``server_retry``
        is a stream's own hint (an SSE ``retry`` field), used when there is no Retry-After."""
        if self.failures == 0:
            return 0.0
        return self.delay(self.failures, retry_after=self.retry_after, server_retry=server_retry)

    def stream_ended(
        self, lived: float, *, progressed: bool, server_retry: float | None = None
    ) -> Backoff:
        """The state after a stream that stayed open ``lived`` seconds ended.

        Its end is a failure. But a stream that made progress (delivered events), or outlived
        the wait before the next attempt (a proxy ending an idle stream is no outage), worked:
        the run starts over, with that end as its first failure.
        """
        worked = progressed or lived > self.increment().next_delay(server_retry=server_retry)
        return (self.reset() if worked else self).increment()

    def delay(
        self,
        attempt: int,
        *,
        retry_after: float | None = None,
        server_retry: float | None = None,
    ) -> float:
        """Seconds to wait after failure number ``attempt`` (1 after the first failure).

        ``retry_after`` (an HTTP ``Retry-After``) wins when ``respect_retry_after``; else
        ``server_retry`` (an SSE ``retry`` field); else the exponential backoff with jitter.
        The result is never negative nor above ``max_delay``.
        """
        if retry_after is not None and self.respect_retry_after:
            wait = retry_after
        elif server_retry is not None:
            wait = server_retry
        else:
            exponent = min(max(attempt - 1, 0), _MAX_EXPONENT)
            wait = min(self.initial_delay * self.multiplier**exponent, self.max_delay)
            if self.jitter:
                wait *= 1 + random.uniform(-self.jitter, self.jitter)
        return min(max(wait, 0.0), self.max_delay)
