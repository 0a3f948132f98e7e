"""Newline-delimited JSON over a pair of file descriptors: the base of the stdio transports.

One JSON text per line, UTF-8, ``\\r\\n`` tolerated, blank lines skipped. A reader thread
reads the raw fd in 64 KiB chunks and splits them with a
:class:`~mcp_sync.transports._framing.LineBuffer`. A line longer than ``max_message_bytes`` is
reported through ``on_error`` and the rest of it is discarded without being buffered; a line
that is not JSON (or not UTF-8) is reported and reading goes on. Both pipe ends are
non-blocking and every wait is a ``poll`` that also watches a wake-up pipe, so ``close()`` can
release a reader or writer (:mod:`~mcp_sync.transports._pipe_writer`) stuck on a pipe that
some escaped descendant of the server still holds.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import math
import os
import select
import threading
import time
from collections.abc import Callable
from typing import Any

from .._rules.numbers import number, whole
from .._rules.values import callback
from ..abort import AbortSignal
from ..errors import ConnectionClosed, ProtocolError
from ..protocol import jsonrpc
from ..protocol._json import quoted
from ..protocol.salvage import answered_id, head_says
from ._framing import EDGE_BYTES, LineBuffer, Overlong, OverlongEnd
from ._pipe_writer import PipeClosed, PipeWriter
from ._process import EOF_GRACE
from ._stderr import StderrCapture, StderrListener
from .base import MessageOptions, Transport

__all__ = ["LineTransport", "fd_closer"]

logger = logging.getLogger("mcp_sync.transport.stdio")

_CHUNK = 65536
_WOKEN = object()  # the reader was told to stop
_EOF = object()  # the peer closed its end
#: How long a dying server's stderr gets to reach EOF so that the tail is complete.
STDERR_DRAIN = 0.5


class LineTransport(Transport):
    """Newline-delimited JSON over a pair of file descriptors; the base of the stdio transports.

    Subclasses open the descriptors in ``start()`` and hand them to :meth:`_attach`, and
    implement :meth:`_stop_peer` (what to do with the program at the other end) and
    :meth:`_peer_gone` (the error for an unexpected end).
    """

    def __init__(
        self,
        *,
        on_stderr: StderrListener | None,
        max_message_bytes: int,
        max_stderr_bytes: int,
        close_timeout: float,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.max_message_bytes = whole(max_message_bytes, f"{name}: max_message_bytes", minimum=1)
        self.max_stderr_bytes = whole(max_stderr_bytes, f"{name}: max_stderr_bytes")
        self.close_timeout = number(close_timeout, f"{name}: close_timeout")
        self._started = False
        self._closing = False  # close() was called
        self._start_lock = threading.Lock()  # close() and the end of start() see each other
        self._writer: PipeWriter | None = None
        self._threads: list[threading.Thread] = []
        self._stderr = StderrCapture(max_stderr_bytes, callback(on_stderr, f"{name}: on_stderr"))
        self._stderr_thread: threading.Thread | None = None
        self._has_stderr = False
        self._teardown_lock = threading.Lock()
        self._torn_down = False
        self._wake_r = self._wake_w = -1
        self._fd_users = 0  # threads and teardown still using the wake pipe
        self._fd_users_lock = threading.Lock()
        #: Why the stream ended on its own (the peer left, a message was cut short): what
        #: every later send raises.
        self._end_error: ConnectionClosed | None = None
        self._peer_left = False  # the reader saw the stream end and is shutting down
        self._ended = threading.Event()  # ... and _end_error says how it ended
        #: An over-long line whose start shows a response but not its id: reported at its end.
        self._overlong: Overlong | None = None
        #: The descriptors a forked child's copy closes (see :meth:`release_after_fork`),
        #: each with its file's identity: the number may since have been reused.
        self._own_fds: list[tuple[int, tuple[int, int]]] = []

    # -- the contract -------------------------------------------------------------------

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        data = jsonrpc.encode(message) + b"\n"
        writer = self._writer
        if writer is None:
            raise self._closed_error()
        try:
            writer.write(data, deadline, signal)
        except PipeClosed as exc:
            if exc.cause is None:
                raise self._closed_error() from None
            raise self._write_failed(exc.cause) from exc.cause

    def unread_by_peer(self) -> int:
        writer = self._writer
        return 0 if writer is None else writer.unread()

    def close(self) -> None:
        with self._start_lock:
            self._closing = True
            started = self._started
        if started:
            self._teardown()
            current = threading.current_thread()
            for thread in self._threads:
                if thread is not current:
                    thread.join(10.0)
                    if thread.is_alive():
                        logger.warning("%s: thread %s did not stop", self, thread.name)
        self._fire_close(None)

    def release_after_fork(self) -> None:
        """In a forked child: close this process's copies of the pipes (the server's stdio
        when this transport started the server, and the wake-up pipe), nothing else. The
        threads are the parent's; writing to the wake-up pipe would stop the parent's reader."""
        self._closing = self._torn_down = True  # a later close() in the child does nothing
        fds, self._own_fds = self._own_fds, []
        for fd, identity in fds:
            with contextlib.suppress(OSError):
                if _identity(fd) == identity:  # still the copy of that pipe, not a reused number
                    os.close(fd)

    @property
    def stderr_tail(self) -> str:
        """The last ``max_stderr_bytes`` the server wrote to stderr ("" when not captured)."""
        return self._stderr.tail

    # -- for subclasses -----------------------------------------------------------------

    def _now_started(self) -> None:
        """The end of ``start()``, once the threads run: from here ``close()`` stops it all.
        A ``close()`` that came while it was starting (from another thread: a client closed
        during its ``connect()``, or reacting to a server that exited at once) found nothing
        to stop; it is carried out now, and the start fails with how it ended (the server's
        exit status and stderr, when it exited on its own)."""
        with self._start_lock:
            self._started = True
            closed = self._closing
        if closed:
            self.close()
            raise self._closed_error()

    def _attach(
        self,
        read_fd: int,
        close_read: Callable[[], None],
        write_fd: int,
        close_write: Callable[[], None],
        stderr: tuple[int, Callable[[], None]] | None = None,
        *,
        owned: bool = False,
    ) -> None:
        """Start the reader threads over these descriptors (made non-blocking here).
        ``owned``: the transport opened them (a forked child's copy then closes them too)."""
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._wake_r, self._wake_w = os.pipe()
        fds = [self._wake_r, self._wake_w]
        if owned:
            fds += [read_fd, write_fd] + ([stderr[0]] if stderr is not None else [])
        self._own_fds = [(fd, _identity(fd)) for fd in fds]
        self._writer = PipeWriter(write_fd, close_write, self._wake_r, self.kind, self._broken)
        self._fd_users = 2 + (stderr is not None)  # reader, stderr reader, teardown
        reader = threading.Thread(
            target=self._read_main,
            args=(read_fd, close_read),
            name=f"mcp-sync-{self.kind}-reader",
            daemon=True,
        )
        self._threads.append(reader)
        if stderr is not None:
            os.set_blocking(stderr[0], False)
            self._has_stderr = True
            self._stderr_thread = threading.Thread(
                target=self._stderr_main,
                args=stderr,
                name=f"mcp-sync-{self.kind}-stderr",
                daemon=True,
            )
            self._threads.append(self._stderr_thread)
            self._stderr_thread.start()
        reader.start()

    def _stop_peer(self, exit_deadline: float) -> None:
        """Stop the program at the other end; its stdin is closed (or closing is stuck)."""

    def _peer_gone(self, error: OSError | None) -> ConnectionClosed:
        """The error ``on_close`` gets when the peer ends the stream on its own."""
        return ConnectionClosed(f"{self.kind} peer closed the connection", cause=error)

    def _end_report(self) -> ConnectionClosed | None:
        """How the stream ended on its own, once known. A writer that finds the stream gone
        while the reader is still stopping the peer waits for it, so that the error it raises
        carries the exit status and the stderr tail (not a bare "closed")."""
        if self._end_error is None and self._peer_left:
            self._ended.wait(EOF_GRACE + self.close_timeout + 1.0)
        error = self._end_error
        return None if error is None else copy.copy(error)

    def _closed_error(self, cause: OSError | None = None) -> ConnectionClosed:
        ended = self._end_report()
        if ended is not None:
            return ended
        if cause is None:
            state = "closed" if self._started else "not started"
            return ConnectionClosed(f"{self.kind} transport is {state}")
        return ConnectionClosed(f"cannot write to the {self.kind} peer", cause=cause)

    def _write_failed(self, error: OSError) -> ConnectionClosed:
        """The error for a write the OS refused (the peer closed its end)."""
        return self._closed_error(error)

    # -- shutdown -----------------------------------------------------------------------

    def _teardown(self) -> None:
        """Close stdin, stop the peer, drain stderr, release the threads. Runs once."""
        with self._teardown_lock:
            if self._torn_down:
                return
            self._torn_down = True
            exit_deadline = time.monotonic() + EOF_GRACE
            writer = self._writer
            assert writer is not None
            stdin_closed = writer.close(EOF_GRACE)
            try:
                self._stop_peer(exit_deadline)
                stderr_thread = self._stderr_thread
                if stderr_thread is not None and stderr_thread is not threading.current_thread():
                    stderr_thread.join(STDERR_DRAIN)  # so that the tail is complete
            finally:
                os.write(self._wake_w, b"x")  # release readers and writers still waiting
                if not stdin_closed:
                    writer.close()
                self._release_wake_pipe()

    def _broken(self, reason: str) -> None:
        """A message was cut short (the writer closed our end): end the connection with the
        reason, and have the reader thread stop the peer."""
        self._end_error = broken = ConnectionClosed(reason)
        os.write(self._wake_w, b"x")  # the reader wakes and stops the peer
        self._fire_close(copy.copy(broken))  # at once: pending calls need not wait

    def _release_wake_pipe(self) -> None:
        with self._fd_users_lock:
            self._fd_users -= 1
            last = self._fd_users == 0
        if last:
            os.close(self._wake_r)
            os.close(self._wake_w)

    # -- reading ------------------------------------------------------------------------

    def _read_main(self, fd: int, close_read: Callable[[], None]) -> None:
        try:
            outcome = self._pump(fd)
        except BaseException:
            logger.exception("%s: reader failed", self)
            outcome = _EOF
        finally:
            with contextlib.suppress(OSError):
                close_read()
        broken = self._end_error
        if (outcome is not _WOKEN or broken is not None) and not self._closing:
            self._peer_left = True
            try:
                self._teardown()  # the peer went away on its own: stop what is left of it
                if broken is None:
                    error = outcome if isinstance(outcome, OSError) else None
                    self._end_error = self._peer_gone(error)
            finally:
                self._ended.set()
            if not self._closing:
                self._fire_close(copy.copy(self._end_error))
        self._release_wake_pipe()

    def _pump(self, fd: int) -> object:
        """Read and deliver lines until EOF (returns _EOF), a read error, or a wake-up."""
        buffer = LineBuffer(self.max_message_bytes)
        wake = self._wake_r
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(wake, select.POLLIN)
        drained = False  # the last read left the pipe empty (as far as we know)
        while True:
            if drained:
                # Wait first: a read now would most likely fail with EAGAIN, and an
                # exception and a wasted syscall per message show in the latency (4-6% of a
                # call against reading first, python -m bench.layers; docs/benchmarks.md).
                for ready, _ in poller.poll():
                    if ready == wake:
                        return _WOKEN
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                drained = True
                continue
            except OSError as exc:
                return exc
            if not chunk:
                if self._overlong is not None:
                    self._report(self._too_large(self._overlong.size, self._overlong.head, None))
                if len(buffer):
                    self._report(
                        ProtocolError(
                            f"stream ended inside a message ({len(buffer)} bytes "
                            "without a final newline); discarded"
                        )
                    )
                return _EOF
            drained = len(chunk) < _CHUNK
            for line in buffer.feed(chunk):
                if isinstance(line, (Overlong, OverlongEnd)):
                    self._on_overlong(line)
                else:
                    self._handle_line(line)

    def _handle_line(self, line: bytes | bytearray) -> None:
        """Decode and deliver one line (it ends in ``\\n`` or ``\\r\\n``)."""
        data: bytes | str
        if isinstance(line, bytearray):
            # A line that spanned chunks, handed over by the buffer: turned into text and its
            # bytes freed before the JSON is parsed, so a big message peaks at twice its size
            # (text and parsed value), not three times.
            try:
                data = line.decode()
            except UnicodeDecodeError:
                data = bytes(line)
            line.clear()
        else:
            data = line
        try:
            value = jsonrpc.decode(data)
        except ProtocolError as exc:
            if data.strip():  # blank lines are skipped silently
                self._report(_not_utf8(data) or _unparsable(data, exc))
            return
        if isinstance(value, (dict, list)):
            self._deliver(value)
        else:
            self._report(_skipped(data, "a JSON-RPC message"))

    def _on_overlong(self, marker: Overlong | OverlongEnd) -> None:
        """Report a line over ``max_message_bytes`` once, naming the request it answers when
        its id can be read (that request then fails at once): from the line's start as soon
        as it is found too long, else from its end."""
        if isinstance(marker, Overlong):
            kind, request_id = head_says(marker.head)
            if kind == "response" and request_id is None:
                self._overlong = marker  # the id may come last: wait for the line's end
            else:
                self._report(self._too_large(marker.size, marker.head, request_id))
            return
        start, self._overlong = self._overlong, None
        if start is not None:
            request_id = answered_id(start.head, marker.tail)
            self._report(self._too_large(marker.size, start.head, request_id, whole=True))

    def _too_large(
        self, size: int, head: bytes, request_id: jsonrpc.RequestId | None, whole: bool = False
    ) -> jsonrpc.InvalidMessage:
        amount = f"{size} bytes" if whole else f"at least {size} bytes"
        reason = (
            f"incoming message of {amount} exceeds max_message_bytes "
            f"({self.max_message_bytes}); the line is discarded (to accept it, raise the limit: "
            f"{type(self).__name__}(max_message_bytes=...))"
        )
        return jsonrpc.InvalidMessage(reason, _shown(head), request_id)

    def _stderr_main(self, fd: int, close_fd: Callable[[], None]) -> None:
        try:
            self._stderr.pump(fd, self._wake_r)
        finally:
            with contextlib.suppress(OSError):
                close_fd()
            self._release_wake_pipe()


def _not_utf8(line: bytes | str) -> jsonrpc.InvalidMessage | None:
    """The report for a line that is not UTF-8, naming the request it answers if its id can
    be read (that request then fails at once); None for a line that is UTF-8."""
    if isinstance(line, str):
        return None
    try:
        line.decode()
    except UnicodeDecodeError as bad:
        reason = f"not UTF-8: {bad}"
        return jsonrpc.InvalidMessage(reason, line[:200], jsonrpc.salvage_id(line))
    return None


def _unparsable(line: bytes | str, error: ProtocolError) -> ProtocolError:
    """The report for a line that is not JSON: if it is an answer whose id can be read from
    its ends, an :class:`~mcp_sync.errors.InvalidMessage` naming it (that request then fails
    at once instead of waiting for its timeout)."""
    if isinstance(line, str):
        head, tail = line[:EDGE_BYTES].encode(), line[-EDGE_BYTES:].encode()
    else:
        head, tail = line[:EDGE_BYTES], line[-EDGE_BYTES:]
    request_id = answered_id(head, tail.rstrip())
    deep = isinstance(error.__context__, RecursionError)
    if request_id is None and not deep:
        return _skipped(line, "JSON")
    if deep:
        reason = "nested too deeply to parse (deeper than Python's recursion limit allows)"
    else:
        reason = f"unparsable JSON: {error.__context__ or error}"
    return jsonrpc.InvalidMessage(reason, _shown(head), request_id)


def _skipped(line: bytes | str, what: str) -> ProtocolError:
    """The report for a line that answers nothing and is skipped: chatter on stdout ("Loading
    configuration...") as often as a broken message."""
    return ProtocolError(
        f"skipped a line of the server's output that is not {what}: {quoted(line)}"
    )


def _shown(head: bytes) -> str:
    """The start of a message, as text, for an error (the rest is elided)."""
    return head[:120].decode("utf-8", errors="replace") + "..."


def _identity(fd: int) -> tuple[int, int]:
    """Which file ``fd`` is: its device and inode (a pipe's inode is its own)."""
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def fd_closer(fd: int) -> Callable[[], None]:
    return lambda: os.close(fd)
