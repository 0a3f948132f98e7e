"""Newline framing as a sans-I/O buffer: feed it byte chunks, get back complete lines.

The stdio transports read a pipe in 64 KiB chunks and hand each chunk to a :class:`LineBuffer`;
it knows nothing of pipes, threads or JSON, so every chunking of a stream can be tested without
a process. Why it handles bytes the way it does:

- **A line that arrives whole is not copied.** It is returned as a slice of its chunk. Lines
  keep their ``b"\\n"`` (``b"\\r\\n"`` lines keep both), as
  :meth:`io.BufferedReader.readline` does: JSON ignores that whitespace, and stripping it would
  copy every message.
- **A chunk that is exactly one line is returned at once.** That is what a server writing one
  message at a time produces, the common case; checking for it first takes 1.2k instructions
  off the 23.1k the reader spends on a small response (framing and JSON), which leaves the
  buffer 0.9k above the hand-inlined loop it replaced (valgrind, ``docs/benchmarks.md``).
- **Only new bytes are searched.** The start of a line split across chunks is held in a
  ``bytearray``; each chunk is searched for ``b"\\n"`` once, so a line of N bytes in many
  chunks costs O(N), never O(N^2).
- **A held line is handed over, not copied.** The ``bytearray`` becomes the returned line and
  the buffer starts a new one. The consumer can decode it and free it before parsing: a big
  message then peaks at its text plus its parsed value, not also at one or two byte copies.
- **An over-long line is never held.** Once a line is known to exceed ``max_line_bytes`` the
  buffer returns one :class:`Overlong` marker and drops the line's bytes until its newline,
  so a peer cannot make the client buffer more than about ``max_line_bytes`` plus a chunk.
  It keeps only the line's first and last :data:`EDGE_BYTES` (the marker's ``head``, and an
  :class:`OverlongEnd` at the newline): a response's id is nearly always in one of them
  (``{"jsonrpc":"2.0","id":7,...`` from Python servers, ``...,"jsonrpc":"2.0","id":7}`` from
  TypeScript ones), so the request it answers can fail at once.
"""

from __future__ import annotations

__all__ = ["EDGE_BYTES", "LineBuffer", "Overlong", "OverlongEnd"]

_CR = 0x0D
#: How much of each end of an over-long line is kept.
EDGE_BYTES = 512


class Overlong:
    """Marks a line longer than ``max_line_bytes``; the rest of it is skipped."""

    __slots__ = ("head", "size")

    def __init__(self, size: int, head: bytes = b"") -> None:
        #: How many bytes of the line had arrived when it was found too long (at least this).
        self.size = size
        #: The line's first :data:`EDGE_BYTES` bytes (never its ``b"\\n"``; fewer when
        #: ``max_line_bytes`` is smaller: what had arrived when the line was found too long).
        self.head = head

    def __repr__(self) -> str:
        return f"Overlong(size={self.size})"


class OverlongEnd:
    """The newline of the over-long line the last :class:`Overlong` marked."""

    __slots__ = ("size", "tail")

    def __init__(self, size: int, tail: bytes) -> None:
        #: The whole line's size, without its newline.
        self.size = size
        #: Its last :data:`EDGE_BYTES` bytes before the newline.
        self.tail = tail

    def __repr__(self) -> str:
        return f"OverlongEnd(size={self.size})"


Item = bytes | bytearray | Overlong | OverlongEnd


class LineBuffer:
    """Splits a byte stream into lines ending in ``b"\\n"`` (or ``b"\\r\\n"``).

    ``max_line_bytes`` bounds a line without its terminator. :meth:`feed` returns, in order,
    each line completed by the chunk (``bytes`` or a ``bytearray`` the caller now owns, the
    terminator included), an :class:`Overlong` for each line found too long and an
    :class:`OverlongEnd` when that line ends.
    """

    __slots__ = ("_held", "_skipped", "_skipping", "_tail", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._held = bytearray()  # the start of a line split across chunks
        self._skipping = False  # inside an over-long line, until its newline
        self._skipped = 0  # ... of which this many bytes went by
        self._tail = b""  # ... the last EDGE_BYTES of them

    def __len__(self) -> int:
        """Bytes held: the start of an unfinished line (0 while skipping an over-long one)."""
        return len(self._held)

    def feed(self, chunk: bytes) -> list[Item]:
        """Take the next chunk of the stream; return the lines (and markers) it completes."""
        limit = self.max_line_bytes
        if not self._held and not self._skipping:
            last = len(chunk) - 1
            if 0 <= last <= limit and chunk.find(b"\n") == last:
                return [chunk]  # the common case, exactly one line: see the module docstring
        out: list[Item] = []
        start = 0
        if self._held or self._skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._hold(chunk, out)
                return out
            start = newline + 1
            if self._skipping:
                self._skipping = False
                tail = (self._tail + chunk[max(0, newline - EDGE_BYTES) : newline])[-EDGE_BYTES:]
                out.append(OverlongEnd(self._skipped + newline, tail))
                self._tail = b""
            else:
                line = self._held
                self._held = bytearray()
                line += memoryview(chunk)[:start]
                if _over(line, len(line) - 1, limit):
                    out.append(Overlong(len(line), bytes(line[: min(EDGE_BYTES, len(line) - 1)])))
                    out.append(OverlongEnd(len(line) - 1, bytes(line[-EDGE_BYTES - 1 : -1])))
                else:
                    out.append(line)
        end = len(chunk)
        while start < end:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._hold(memoryview(chunk)[start:], out)
                break
            if newline - start > limit and _over(chunk, newline, limit, start):
                out.append(
                    Overlong(newline - start, chunk[start : min(newline, start + EDGE_BYTES)])
                )
                tail = chunk[max(start, newline - EDGE_BYTES) : newline]
                out.append(OverlongEnd(newline - start, tail))
            else:
                out.append(chunk[start : newline + 1])
            start = newline + 1
        return out

    def _hold(self, piece: bytes | memoryview, out: list[Item]) -> None:
        """Keep the start of an unfinished line, unless that makes it over-long."""
        if self._skipping:
            self._skipped += len(piece)
            self._tail = (self._tail + bytes(piece[-EDGE_BYTES:]))[-EDGE_BYTES:]
            return
        size = len(self._held) + len(piece)
        # One byte of slack: the line may still end in "\r\n", whose "\r" does not count.
        if size > self.max_line_bytes + 1:
            held = self._held
            head = bytes(held[:EDGE_BYTES]) + bytes(piece[: max(0, EDGE_BYTES - len(held))])
            out.append(Overlong(size, head))
            tail = bytes(piece[-EDGE_BYTES:])
            if len(tail) < EDGE_BYTES:
                tail = (bytes(held[-EDGE_BYTES:]) + tail)[-EDGE_BYTES:]
            self._held = bytearray()
            self._skipping = True
            self._skipped, self._tail = size, tail
        else:
            self._held += piece


def _over(data: bytes | bytearray, newline: int, limit: int, start: int = 0) -> bool:
    """Whether the line ``data[start:newline]`` is longer than ``limit`` without its "\\r"."""
    size = newline - start
    return size > limit and not (size == limit + 1 and data[newline - 1] == _CR)
