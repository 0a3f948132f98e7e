"""Reading a ``text/event-stream`` body: sseclient-py for the fields, this module for the rest.

sseclient-py parses an event's lines well (comments, multi-line ``data``, the optional space
after the colon, the default ``message`` type) but leaves gaps that matter for MCP:

- it frames events by looking at the end of its buffer, which misses boundaries written with
  mixed line endings, and it buffers without limit;
- it drops events without a ``data`` line, so an ``id``-only or ``retry``-only event is lost,
  and it does not keep the last event id across events (the SSE "last event ID buffer");
- it ignores the ``retry`` field's digits-only rule and fails on invalid UTF-8.

So :class:`SseStream` does the framing itself: line endings (CRLF, CR, LF, even split between
two reads) are normalized to LF, events are cut at blank lines with at most ``max_event_bytes``
buffered (a larger event is skipped without being kept, and reported), ``id`` and ``retry`` are
tracked for every event, and each complete event is handed to sseclient-py as one chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import sseclient

__all__ = ["EventTooLarge", "SseEvent", "SseStream"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event. ``id`` is the stream's last event id once this event was read."""

    event: str
    data: str
    id: str | None


@dataclass(frozen=True)
class EventTooLarge:
    """An event over the size limit; its bytes were skipped, not kept."""

    limit: int


class _Oversize(Exception):
    pass


class SseStream:
    """Iterate the events of one SSE body read with ``read()`` (returns b"" at the end).

    ``read`` should return whatever bytes are available (``response.raw.read1``-style), not wait
    for a fixed amount. Iterating yields :class:`SseEvent` for events with data and
    :class:`EventTooLarge` for skipped ones; it stops at the end of the body (an unfinished event
    at the end is dropped, as the SSE spec says). Exceptions from ``read`` propagate.

    After (and during) iteration, :attr:`last_event_id` is the last ``id`` seen (or the one
    given to start from), :attr:`retry` the last valid ``retry`` in seconds, and
    :attr:`events_seen` counts every event block read, with or without data.
    """

    def __init__(
        self,
        read: Callable[[], bytes],
        max_event_bytes: int,
        last_event_id: str | None = None,
    ) -> None:
        self._read = read
        self._limit = max_event_bytes
        self._buf = bytearray()
        self._scan = 0
        self._skip_lf = False
        self._skipping = False
        self._first = True
        self.eof = False
        self.last_event_id = last_event_id
        self.retry: float | None = None
        self.events_seen = 0

    def __iter__(self) -> Iterator[SseEvent | EventTooLarge]:
        while not self.eof:
            try:
                for event in sseclient.SSEClient(self._blocks()).events():
                    yield SseEvent(event.event, event.data, self.last_event_id)
            except _Oversize:
                yield EventTooLarge(self._limit)

    # -- framing ----------------------------------------------------------------------

    def _blocks(self) -> Iterator[bytes]:
        buf = self._buf
        while True:
            end = buf.find(b"\n\n", self._scan)
            if end >= 0:
                block = bytes(buf[: end + 2])
                del buf[: end + 2]
                self._scan = 0
                if self._skipping:
                    self._skipping = False
                    continue
                self.events_seen += 1
                self._note_fields(block)
                yield _valid_utf8(block)
                continue
            # Keep the last byte: it may be the first half of the boundary.
            self._scan = max(len(buf) - 1, 0)
            if self._skipping:
                del buf[:-1]
                self._scan = 0
            elif len(buf) > self._limit:
                self._skipping = True
                del buf[:-1]
                self._scan = 0
                raise _Oversize
            chunk = self._read()
            if not chunk:
                self.eof = True
                return
            buf += self._normalize(chunk)

    def _normalize(self, chunk: bytes) -> bytes:
        if self._first:
            self._first = False
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if self._skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]  # the LF of a CRLF split between two reads
        self._skip_lf = chunk.endswith(b"\r")
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return chunk

    def _note_fields(self, block: bytes) -> None:
        """Track ``id`` and ``retry``, which sseclient-py loses on events without data."""
        if not (block.startswith((b"id", b"retry")) or b"\nid" in block or b"\nretry" in block):
            return
        for line in block.split(b"\n"):
            if not line.startswith((b"id", b"retry")):
                continue
            name, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if name == b"id" and b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
            elif name == b"retry" and value.isdigit():
                self.retry = int(value) / 1000.0


def _valid_utf8(block: bytes) -> bytes:
    """``block`` with invalid UTF-8 replaced (sseclient-py would raise on it)."""
    if block.isascii():
        return block
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return block.decode("utf-8", "replace").encode("utf-8")
    return block
