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
"""

from __future__ import annotations

__all__ = ["LineBuffer", "Overlong"]

_CR = 0x0D


class Overlong:
    """Marks a line longer than ``max_line_bytes``; the rest of it is skipped."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        #: How many bytes of the line had arrived when it was found too long (at least this).
        self.size = size

    def __repr__(self) -> str:
        return f"Overlong(size={self.size})"


class LineBuffer:
    """Splits a byte stream into lines ending in ``b"\\n"`` (or ``b"\\r\\n"``).

    ``max_line_bytes`` bounds a line without its terminator. :meth:`feed` returns, in order,
    each line completed by the chunk (``bytes`` or a ``bytearray`` the caller now owns, the
    terminator included) and an :class:`Overlong` for each line found too long.
    """

    __slots__ = ("_held", "_skipping", "max_line_bytes")

    def __init__(self, max_line_bytes: int) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._held = bytearray()  # the start of a line split across chunks
        self._skipping = False  # inside an over-long line, until its newline

    def __len__(self) -> int:
        """Bytes held: the start of an unfinished line (0 while skipping an over-long one)."""
        return len(self._held)

    def feed(self, chunk: bytes) -> list[bytes | bytearray | Overlong]:
        """Take the next chunk of the stream; return the lines (and markers) it completes."""
        limit = self.max_line_bytes
        if not self._held and not self._skipping:
            last = len(chunk) - 1
            if 0 <= last <= limit and chunk.find(b"\n") == last:
                return [chunk]  # the common case, exactly one line: see the module docstring
        out: list[bytes | bytearray | Overlong] = []
        start = 0
        if self._held or self._skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._hold(chunk, out)
                return out
            start = newline + 1
            if self._skipping:
                self._skipping = False
            else:
                line = self._held
                self._held = bytearray()
                line += memoryview(chunk)[:start]
                out.append(line if not _over(line, len(line) - 1, limit) else Overlong(len(line)))
        end = len(chunk)
        while start < end:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._hold(memoryview(chunk)[start:], out)
                break
            if newline - start > limit and _over(chunk, newline, limit, start):
                out.append(Overlong(newline - start))
            else:
                out.append(chunk[start : newline + 1])
            start = newline + 1
        return out

    def _hold(self, piece: bytes | memoryview, out: list[bytes | bytearray | Overlong]) -> None:
        """Keep the start of an unfinished line, unless that makes it over-long."""
        if self._skipping:
            return
        size = len(self._held) + len(piece)
        # One byte of slack: the line may still end in "\r\n", whose "\r" does not count.
        if size > self.max_line_bytes + 1:
            out.append(Overlong(size))
            self._held = bytearray()
            self._skipping = True
        else:
            self._held += piece


def _over(data: bytes | bytearray, newline: int, limit: int, start: int = 0) -> bool:
    """Whether the line ``data[start:newline]`` is longer than ``limit`` without its "\\r"."""
    size = newline - start
    return size > limit and not (size == limit + 1 and data[newline - 1] == _CR)
