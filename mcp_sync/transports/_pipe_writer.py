"""Writing whole messages to a non-blocking pipe, by a deadline, for the stdio transports.

A server that stops reading fills its stdin pipe; a blocking write would then hold the caller
(and every caller queued behind the write lock) forever. :class:`PipeWriter` writes what the
pipe takes at once and waits for the rest with ``poll``, watching the call's deadline, its abort
signal and the transport's wake-up pipe. A message given up half-written leaves the server
reading the middle of a JSON text: the stream cannot be used again, so the writer closes its
end and says so (``on_broken``).

Threads share the pipe without queueing for it: a message of at most ``PIPE_BUF`` bytes is
written lock-free (a pipe takes it whole or not at all); only a message that may go out in
parts, and the close, hold the stream (issue 43: see docs/benchmarks.md).
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import math
import os
import select
import stat
import termios
import threading
import time
from collections.abc import Callable

from ..abort import AbortSignal
from ..errors import WriteTimeout

__all__ = ["PipeClosed", "PipeWriter"]

#: How often a writer waiting on a full pipe looks at its request's abort signal.
_WRITE_SLICE = 0.05


class PipeClosed(Exception):
    """The pipe cannot be written: closed by us (``cause`` None) or refused by the OS."""

    def __init__(self, cause: OSError | None = None) -> None:
        super().__init__(cause)
        self.cause = cause


class PipeWriter:
    """Writes messages to ``fd`` one at a time; see the module docstring.

    ``wake_fd`` becomes readable when the transport shuts down (a waiting writer then raises
    :class:`PipeClosed`); ``on_broken(reason)`` is called, with the write lock held, after a
    message was cut short and the pipe closed.
    """

    def __init__(
        self,
        fd: int,
        close: Callable[[], None],
        wake_fd: int,
        kind: str,
        on_broken: Callable[[str], None],
    ) -> None:
        self._fd = fd
        self._close = close
        self._wake_fd = wake_fd
        self._kind = kind
        self._on_broken = on_broken
        #: Held for what needs the stream to itself: a write that may go out in parts, the
        #: close, the unread count. (A write that goes out whole at once takes no lock.)
        self._lock = threading.Lock()
        self._open = True  # guarded by _lock
        #: Whether a write of at most PIPE_BUF bytes goes out whole or not at all (POSIX
        #: says so of a pipe, not of a socket or a file).
        self._atomic = stat.S_ISFIFO(os.fstat(fd).st_mode)
        #: Set by the holder of _lock while it needs the stream to itself.
        self._exclusive = False
        #: The thread of each lock-free write under way (list append and remove are atomic).
        self._in_flight: list[int] = []

    def write(self, data: bytes, deadline: float, signal: AbortSignal | None = None) -> None:
        """Write all of ``data`` by ``deadline`` (``math.inf``: no limit), unless ``signal``
        fires before any of it went out. Raise :class:`WriteTimeout` or :class:`PipeClosed`."""
        if self._atomic and len(data) <= select.PIPE_BUF:
            written = self._write_whole(data, signal)
            if written is None:
                return
            data = data[written:]  # (0: POSIX writes such a message whole or not at all)
        # Only a writer that has to wait (another write is stuck, the pipe is full) watches
        # the deadline.
        if not self._lock.acquire(False):
            wait = deadline - time.monotonic()
            if wait == math.inf:
                self._lock.acquire()
            elif wait <= 0 or not self._lock.acquire(timeout=wait):
                raise WriteTimeout(
                    f"could not start writing to the {self._kind} peer in time: another write "
                    "is waiting for the peer to read",
                    partial=False,
                )
        try:
            if not self._open:
                raise PipeClosed()
            if signal is not None and signal.aborted:
                return
            self._own_stream()
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                raise PipeClosed(exc) from exc
            if written != len(data):
                self._write_rest(data, written, deadline, signal)
        finally:
            self._exclusive = False
            self._lock.release()

    def _write_whole(self, data: bytes, signal: AbortSignal | None) -> int | None:
        """Write a message of at most PIPE_BUF bytes without the lock, unless the stream is
        held (see :meth:`_own_stream`): the kernel writes it whole or not at all, so writes
        from many threads never interleave. Return None when done (or aborted), else the
        bytes written (0: the pipe is full, or the stream held; the caller waits for the
        lock). Callers sharing a client would otherwise queue on the lock, whose holder
        releases it only once it has the GIL back after its ``os.write``."""
        in_flight, me = self._in_flight, threading.get_ident()
        in_flight.append(me)
        try:
            if self._exclusive or not self._open:
                return 0
            if signal is not None and signal.aborted:
                return None
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                return 0
            except OSError as exc:
                raise PipeClosed(exc) from exc
            return None if written == len(data) else written
        finally:
            in_flight.remove(me)

    def _own_stream(self) -> None:
        """With the lock held: keep lock-free writes out and wait for those under way (each
        is one non-blocking ``os.write``), so that a message written in parts, or the close,
        has the stream to itself. (Not for one of this thread's: a signal handler that closes
        the client may run in the middle of it.)"""
        self._exclusive = True
        me = threading.get_ident()
        while any(thread != me for thread in self._in_flight):
            time.sleep(0)

    def unread(self) -> int:
        """Bytes written that the reader has not taken yet: 0 when it has read everything,
        and where that cannot be told (``FIONREAD`` on a pipe's write end is Linux's)."""
        if not self._lock.acquire(timeout=_WRITE_SLICE):
            return 1  # a write waits for the reader: it is behind
        try:
            if not self._open:
                return 0
            count = array.array("i", [0])
            try:
                fcntl.ioctl(self._fd, termios.FIONREAD, count, True)
            except OSError:
                return 0
            return count[0]
        finally:
            self._lock.release()

    def close(self, timeout: float | None = None) -> bool:
        """Close the pipe, unless a writer stuck on a full pipe holds it past ``timeout``
        seconds (None: wait for it); return whether it is closed."""
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            return False
        try:
            self._own_stream()
            self._close_pipe()
        finally:
            self._exclusive = False
            self._lock.release()
        return True

    def _close_pipe(self) -> None:
        if self._open:
            self._open = False
            with contextlib.suppress(OSError):
                self._close()

    def _write_rest(
        self, data: bytes, written: int, deadline: float, signal: AbortSignal | None
    ) -> None:
        """Finish a write the pipe could not take at once, by ``deadline`` (with the lock
        held). Giving up after part of the message went out breaks the stream."""
        view = memoryview(data)
        poller = select.poll()
        poller.register(self._fd, select.POLLOUT)
        poller.register(self._wake_fd, select.POLLIN)
        try:
            while written < len(data):
                if signal is not None and signal.aborted:
                    if written:
                        raise self._break(written, len(data), "its request was given up")
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if written:
                        raise self._break(written, len(data), "its deadline passed")
                    raise WriteTimeout(
                        f"the {self._kind} peer is not reading: nothing could be written in time",
                        partial=False,
                    )
                # short slices while someone may abort the request
                wait = _WRITE_SLICE if signal is not None else remaining
                timeout_ms = None if wait == math.inf else math.ceil(min(wait, remaining) * 1000)
                for fd, _ in poller.poll(timeout_ms):
                    if fd == self._wake_fd:
                        raise PipeClosed()
                try:
                    written += os.write(self._fd, view[written:])
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise PipeClosed(exc) from exc
        except KeyboardInterrupt:
            if 0 < written < len(data):
                self._break(written, len(data), "it was interrupted")
            raise

    def _break(self, written: int, size: int, why: str) -> WriteTimeout:
        """A message was cut short: nothing more can be written on this stream."""
        reason = (
            f"only {written} of {size} bytes of a message reached the {self._kind} peer before "
            f"{why} (the peer stopped reading): the stream is unrecoverable and the transport "
            "is closed"
        )
        self._close_pipe()
        self._on_broken(reason)
        return WriteTimeout(reason, partial=True)
