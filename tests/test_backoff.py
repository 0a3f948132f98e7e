"""``Backoff``: the one retry policy (client recovery, HTTP stream reconnection)."""

from __future__ import annotations

import pytest

from mcp_sync import Backoff


def test_delays_grow_exponentially_and_stop_at_the_cap() -> None:
    policy = Backoff(initial_delay=0.5, multiplier=2, max_delay=3, jitter=0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert policy.delay(10_000) == 3.0  # no OverflowError far down a long outage


def test_jitter_stays_within_its_band_and_under_the_cap() -> None:
    policy = Backoff(initial_delay=1.0, max_delay=1.05, jitter=0.5)
    waits = {policy.delay(1) for _ in range(200)}
    assert len(waits) > 1  # spread, so that many clients do not come back in step
    assert all(0.5 <= wait <= 1.05 for wait in waits)


def test_retry_after_wins_unless_told_otherwise_and_is_capped() -> None:
    policy = Backoff(initial_delay=0.1, max_delay=10, jitter=0)
    assert policy.delay(1, retry_after=4) == 4
    assert policy.delay(1, retry_after=60) == 10
    assert policy.delay(1, server_retry=2) == 2
    assert (
        Backoff(initial_delay=0.1, jitter=0, respect_retry_after=False).delay(1, retry_after=4)
        == 0.1
    )


def test_a_run_counts_failures_until_exhausted_and_reset_starts_over() -> None:
    policy = Backoff(max_retries=2, initial_delay=0.2, jitter=0)
    assert policy.next_delay() == 0 and not policy.is_exhausted()
    policy = policy.increment()
    assert policy.failures == 1 and policy.next_delay() == 0.2
    policy = policy.increment(retry_after=1.5)
    assert policy.next_delay() == 1.5 and not policy.is_exhausted()
    policy = policy.increment()
    assert policy.is_exhausted()
    fresh = policy.reset()
    assert fresh.failures == 0 and fresh.retry_after is None and not fresh.is_exhausted()
    assert fresh.max_retries == 2  # the policy itself is kept


def test_it_is_an_immutable_value() -> None:
    policy = Backoff()
    assert policy.increment() != policy and policy.increment().reset() == policy
    with pytest.raises(AttributeError):
        policy.failures = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "options, word",
    [
        ({"max_retries": -1}, "max_retries"),
        ({"initial_delay": -1}, "initial_delay"),
        ({"multiplier": 0.5}, "multiplier"),
        ({"jitter": 2}, "jitter"),
    ],
)
def test_bad_values_are_refused_by_name(options: dict, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        Backoff(**options)


def test_the_http_stream_reconnection_uses_the_same_policy() -> None:
    from mcp_sync import ReconnectOptions

    stream = ReconnectOptions(0.05, 5.0, 3)  # positional, as before it was a Backoff
    assert isinstance(stream, Backoff)
    assert (stream.initial_delay, stream.max_delay, stream.max_retries) == (0.05, 5.0, 3)
    assert ReconnectOptions().delay(2) == 2.0  # its own defaults: 1 s doubling, no jitter
    assert stream.increment().increment().increment().increment().is_exhausted()


def test_a_stream_that_worked_starts_a_new_run_and_its_end_is_the_first_failure() -> None:
    policy = Backoff(max_retries=2, initial_delay=1.0, jitter=0).increment().increment()
    # events delivered: a new run, whatever it cost before
    assert policy.stream_ended(0.0, progressed=True).failures == 1
    # open longer than the wait before the next attempt (4 s, after failure 3): a new run
    assert policy.stream_ended(4.5, progressed=False).failures == 1
    # ended sooner, with nothing delivered: one more failure, and this run is over
    ended = policy.stream_ended(3.5, progressed=False)
    assert ended.failures == 3 and ended.is_exhausted()
    # a server's SSE retry hint is the wait it is measured against
    assert policy.stream_ended(3.5, progressed=False, server_retry=1.0).failures == 1


def test_the_wait_before_the_next_attempt_honours_a_stream_retry_hint() -> None:
    policy = Backoff(initial_delay=1.0, max_delay=10, jitter=0).increment()
    assert policy.next_delay(server_retry=0.25) == 0.25
    assert policy.increment(retry_after=3).next_delay(server_retry=0.25) == 3  # Retry-After wins
    assert policy.next_delay(server_retry=99) == 10


def test_a_retry_after_value_is_whole_seconds_or_a_date_and_nothing_else() -> None:
    """The one reading of ``Retry-After`` (HTTP streams and recovery alike): what is no
    delay is None, so that the computed backoff applies."""
    import email.utils
    import time

    from mcp_sync.backoff import retry_after_seconds

    assert retry_after_seconds("120") == 120.0 and retry_after_seconds(" 0 ") == 0.0
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after_seconds(later) or 0) <= 60
    assert retry_after_seconds(email.utils.formatdate(0, usegmt=True)) == 0.0  # past: now
    for value in (None, "", "nan", "inf", "-5", "1.5", "1e3", "9" * 400, "\u0663", "soon"):
        assert retry_after_seconds(value) is None, value
