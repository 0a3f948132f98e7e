"""The one SSE stream loop that reconnects: the server-push GET stream, and the resumption of a
POST's response stream (GET with ``Last-Event-ID``), both run :func:`follow_stream`.

The policy is a :class:`~mcp_sync.Backoff` value and owns every decision: an end or a failed
attempt is a failure; a stream that delivered events or outlived the wait before the next
attempt worked, and starts a new run (:meth:`~mcp_sync.Backoff.stream_ended`); the wait comes
from ``Retry-After``, else the stream's ``retry`` field, else exponential backoff; the run gives
up once exhausted. The loop only opens, reads and waits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

import requests

from ...backoff import RETRY_STATUSES, Backoff
from ...protocol import jsonrpc
from .._sse import SseStream
from .delivery import Delivery
from .exchange import Exchange
from .responses import body_reader

__all__ = ["RETRY_STATUSES", "Reopen", "StreamGaveUp", "follow_stream", "sendable_as_header"]

logger = logging.getLogger("mcp_sync.transport.http")


class Reopen(Exception):
    """A stream could not be opened for a reason worth another attempt."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class StreamGaveUp(Exception):
    """The policy is exhausted: ``failures`` in a row, the last one for ``reason``."""

    def __init__(self, failures: int, reason: str) -> None:
        super().__init__(f"{failures} failures in a row, last: {reason}")
        self.failures = failures
        self.reason = reason


def sendable_as_header(value: str) -> bool:
    """True if ``value`` can go out as an HTTP header value as it is (Latin-1, no control
    characters, no surrounding whitespace): an SSE id may be any text, a header may not."""
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return value == value.strip() and all(ch >= " " and ch != "\x7f" for ch in value)


def follow_stream(
    policy: Backoff,
    open_stream: Callable[[str | None], requests.Response | None],
    delivery: Delivery,
    exchange: Exchange,
    *,
    request_id: jsonrpc.RequestId | None = None,
    last_event_id: str | None = None,
    server_retry: float | None = None,
    broken: str | None = None,
    unsendable_id: Callable[[str, str], None],
) -> Literal["answered", "no_stream", "stopped"]:
    """Open, read and reopen a stream until it answers ``request_id``, until there is none, or
    until ``exchange`` is cancelled (which also cuts a wait short).

    ``open_stream(last_event_id)`` GETs the stream: the response, or None when the server has
    none (HTTP 405); it raises :class:`Reopen` for a failure worth another attempt, and
    anything else for one that is not (which ends the loop). ``broken``: why the stream this
    follows already broke (the first failure of the run). ``unsendable_id(id, reason)`` is
    told of an event id that cannot go back as ``Last-Event-ID``: it raises to stop, or returns
    to go on without one. Raises :class:`StreamGaveUp` once the policy is exhausted.
    """
    state = policy.increment() if broken is not None else policy
    reason = broken or ""
    while True:
        if exchange.cancelled:
            return "stopped"
        if state.failures:
            if state.is_exhausted():
                raise StreamGaveUp(state.failures, reason)
            wait = state.next_delay(server_retry=server_retry)
            logger.debug("SSE stream: %s; reconnecting in %.2f s", reason, wait)
            if exchange.wake.wait(wait):
                return "stopped"
        if last_event_id is not None and not sendable_as_header(last_event_id):
            unsendable_id(last_event_id, reason)
            last_event_id = None
        try:
            response = open_stream(last_event_id)
        except Reopen as exc:
            reason = str(exc)
            state = state.increment(retry_after=exc.retry_after)
            continue
        if response is None:
            return "no_stream"
        opened = time.monotonic()
        with response:
            stream = SseStream(body_reader(response), delivery.max_message_bytes, last_event_id)
            outcome, reason = delivery.stream(stream, request_id, exchange)
        if outcome == "answered":
            return "answered"
        if outcome == "too_large":
            raise delivery.too_large(request_id)
        last_event_id = stream.last_event_id
        if stream.retry is not None:
            server_retry = stream.retry
        state = state.stream_ended(
            time.monotonic() - opened,
            progressed=bool(stream.events_seen),
            server_retry=server_retry,
        )
