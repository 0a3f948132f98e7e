"""The stdio transport: newline-delimited JSON over a child process's stdin and stdout.

:class:`StdioTransport` spawns the server itself (in its own process group, see
:mod:`mcp_sync.transports._process` for how it is stopped and why it never outlives the
client). :class:`PipeTransport` speaks the same framing over a program the caller started
(``subprocess.Popen``, ``docker exec -i``, ``ssh host server``) or over a pair of streams.

Framing, shared by both (:class:`LineTransport`): one JSON text per line, UTF-8, ``\\r\\n``
tolerated, blank lines skipped. The reader thread reads the raw fd in 64 KiB chunks and
splits on ``\\n`` without copying a message that arrives in one chunk. A line longer than
``max_message_bytes`` is reported through ``on_error`` and the rest of it is discarded
without being buffered; a line that is not JSON (or not UTF-8) is reported and reading goes
on. Both pipe ends are non-blocking and every wait is a ``poll`` that also watches a wake-up
pipe, so ``close()`` can release a reader or writer stuck on a pipe that some escaped
descendant of the server still holds.
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import logging
import math
import os
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from ..abort import AbortSignal
from ..errors import ConnectionClosed, ProtocolError, WriteTimeout
from ..protocol import jsonrpc
from . import _process
from ._process import EOF_GRACE, ServerStartError
from .base import Transport

__all__ = [
    "DEFAULT_ENV_KEYS",
    "LineTransport",
    "PipeTransport",
    "ServerStartError",
    "StdioTransport",
]

logger = logging.getLogger("mcp_sync.transport.stdio")

#: Variables a server started with ``inherit_env=False`` still gets from the client's
#: environment: what a program needs to find executables, its home, and its locale.
DEFAULT_ENV_KEYS = (
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "TMPDIR",
    "TZ",
    "USER",
)

_CHUNK = 65536
#: Lines at least this long take the memory-saving path (:meth:`LineTransport._handle_long_line`).
_LONG_LINE = 1024 * 1024
_WOKEN = object()  # the reader was told to stop
_EOF = object()  # the peer closed its end
#: How long a dying server's stderr gets to reach EOF so that the tail is complete.
_STDERR_DRAIN = 0.5
#: How long a failed write waits for the server's exit status before reporting.
_EXIT_REPORT_WAIT = 1.0
#: How often a writer waiting on a full pipe looks at its request's abort signal.
_WRITE_SLICE = 0.05
_POLLIN = select.POLLIN
_POLLOUT = select.POLLOUT

StderrMode = Literal["pipe", "inherit", "devnull"]
StderrListener = Callable[[str], None]


class _Stream(Protocol):
    def fileno(self) -> int: ...

    def close(self) -> None: ...


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
        if max_message_bytes < 1:
            raise ValueError("max_message_bytes must be positive")
        if max_stderr_bytes < 0:
            raise ValueError("max_stderr_bytes must not be negative")
        self.max_message_bytes = max_message_bytes
        self.max_stderr_bytes = max_stderr_bytes
        self.close_timeout = close_timeout
        self._on_stderr = on_stderr
        self._started = False
        self._closing = False  # close() was called
        self._write_lock = threading.Lock()
        self._write_fd = -1
        self._write_open = False  # guarded by _write_lock
        self._close_write: Callable[[], None] = _nothing
        self._threads: list[threading.Thread] = []
        self._stderr_thread: threading.Thread | None = None
        self._stderr_lock = threading.Lock()
        self._stderr_buf = bytearray()
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

    # -- the contract -------------------------------------------------------------------

    def send(self, message: dict[str, Any], signal: AbortSignal | None = None) -> None:
        self.send_before(message, math.inf, signal)

    def send_before(
        self, message: dict[str, Any], deadline: float, signal: AbortSignal | None = None
    ) -> None:
        data = jsonrpc.encode(message) + b"\n"
        lock = self._write_lock
        # The common case costs one non-blocking acquire and one write; only a writer that
        # has to wait (another write is stuck, the pipe is full) watches the deadline.
        if not lock.acquire(False):
            wait = deadline - time.monotonic()
            if wait == math.inf:
                lock.acquire()
            elif wait <= 0 or not lock.acquire(timeout=wait):
                raise WriteTimeout(
                    f"could not start writing to the {self.kind} peer in time: another write "
                    "is waiting for the peer to read",
                    partial=False,
                )
        try:
            if not self._write_open:
                raise self._closed_error()
            if signal is not None and signal.aborted:
                return
            try:
                written = os.write(self._write_fd, data)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                raise self._write_failed(exc) from exc
            if written != len(data):
                self._write_rest(data, written, deadline, signal)
        finally:
            lock.release()

    def close(self) -> None:
        self._closing = True
        if self._started:
            self._teardown()
            current = threading.current_thread()
            for thread in self._threads:
                if thread is not current:
                    thread.join(10.0)
                    if thread.is_alive():
                        logger.warning("%s: thread %s did not stop", self, thread.name)
        self._fire_close(None)

    # -- stderr -------------------------------------------------------------------------

    @property
    def stderr_tail(self) -> str:
        """The last ``max_stderr_bytes`` the server wrote to stderr ("" when not captured)."""
        with self._stderr_lock:
            tail = bytes(self._stderr_buf)
        skip = 0
        while skip < min(3, len(tail)) and 0x80 <= tail[skip] < 0xC0:
            skip += 1  # the tail starts inside a UTF-8 sequence
        return tail[skip:].decode("utf-8", errors="replace")

    # -- for subclasses -----------------------------------------------------------------

    def _attach(
        self,
        read_fd: int,
        close_read: Callable[[], None],
        write_fd: int,
        close_write: Callable[[], None],
        stderr: tuple[int, Callable[[], None]] | None = None,
    ) -> None:
        """Start the reader threads over these descriptors (made non-blocking here)."""
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._wake_r, self._wake_w = os.pipe()
        self._write_fd = write_fd
        self._close_write = close_write
        self._write_open = True
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

    # -- shutdown -----------------------------------------------------------------------

    def _teardown(self) -> None:
        """Close stdin, stop the peer, drain stderr, release the threads. Runs once."""
        with self._teardown_lock:
            if self._torn_down:
                return
            self._torn_down = True
            exit_deadline = time.monotonic() + EOF_GRACE
            stdin_closed = self._close_writer(EOF_GRACE)
            try:
                self._stop_peer(exit_deadline)
                stderr_thread = self._stderr_thread
                if stderr_thread is not None and stderr_thread is not threading.current_thread():
                    stderr_thread.join(_STDERR_DRAIN)  # so that the tail is complete
            finally:
                os.write(self._wake_w, b"x")  # release readers and writers still waiting
                if not stdin_closed:
                    self._close_writer(None)
                self._release_wake_pipe()

    def _close_writer(self, timeout: float | None) -> bool:
        """Close our write end unless a writer stuck on a full pipe holds the lock too long."""
        if not self._write_lock.acquire(timeout=-1 if timeout is None else timeout):
            return False
        try:
            if self._write_open:
                self._write_open = False
                with contextlib.suppress(OSError):
                    self._close_write()
        finally:
            self._write_lock.release()
        return True

    def _release_wake_pipe(self) -> None:
        with self._fd_users_lock:
            self._fd_users -= 1
            last = self._fd_users == 0
        if last:
            os.close(self._wake_r)
            os.close(self._wake_w)

    # -- writing ------------------------------------------------------------------------

    def _write_rest(
        self, data: bytes, written: int, deadline: float, signal: AbortSignal | None
    ) -> None:
        """Finish a write the pipe could not take at once, by ``deadline`` (called with the
        write lock held). Giving up after part of the message went out breaks the stream."""
        view = memoryview(data)
        poller = select.poll()
        poller.register(self._write_fd, _POLLOUT)
        poller.register(self._wake_r, _POLLIN)
        try:
            while written < len(data):
                if signal is not None and signal.aborted:
                    if written:
                        raise self._break_stream(written, len(data), "its request was given up")
                    return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if written:
                        raise self._break_stream(written, len(data), "its deadline passed")
                    raise WriteTimeout(
                        f"the {self.kind} peer is not reading: nothing could be written in "
                        "time",
                        partial=False,
                    )
                # short slices while someone may abort the request
                wait = _WRITE_SLICE if signal is not None else remaining
                timeout_ms = None if wait == math.inf else math.ceil(min(wait, remaining) * 1000)
                for fd, _ in poller.poll(timeout_ms):
                    if fd == self._wake_r:
                        raise self._closed_error()
                try:
                    written += os.write(self._write_fd, view[written:])
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise self._write_failed(exc) from exc
        except KeyboardInterrupt:
            if 0 < written < len(data):
                self._break_stream(written, len(data), "it was interrupted")
            raise

    def _break_stream(self, written: int, size: int, why: str) -> WriteTimeout:
        """A message was cut short: nothing more can be written on this stream. Close our
        end, end the connection with the reason, and have the reader thread stop the peer."""
        reason = (
            f"only {written} of {size} bytes of a message reached the {self.kind} peer before "
            f"{why} (the peer stopped reading): the stream is unrecoverable and the transport "
            "is closed"
        )
        self._end_error = broken = ConnectionClosed(reason)
        self._write_open = False
        with contextlib.suppress(OSError):
            self._close_write()
        os.write(self._wake_w, b"x")  # the reader wakes and stops the peer
        self._fire_close(copy.copy(broken))  # at once: pending calls need not wait
        return WriteTimeout(reason, partial=True)

    def _write_failed(self, error: OSError) -> ConnectionClosed:
        """The error for a write the OS refused (the peer closed its end)."""
        return self._closed_error(error)

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
        read = os.read
        handle = self._handle_line
        limit = self.max_message_bytes
        wake = self._wake_r
        poller = select.poll()
        poller.register(fd, _POLLIN)
        poller.register(wake, _POLLIN)
        pending = bytearray()  # the start of a line split across chunks
        discarding = False  # inside an over-long line
        drained = False  # the last read left the pipe empty (as far as we know)
        while True:
            if drained:
                # Wait first: a read now would most likely fail with EAGAIN, and an
                # exception and a wasted syscall per message show in the latency.
                for ready, _ in poller.poll():
                    if ready == wake:
                        return _WOKEN
            try:
                chunk = read(fd, _CHUNK)
            except BlockingIOError:
                drained = True
                continue
            except OSError as exc:
                return exc
            drained = len(chunk) < _CHUNK
            if not chunk:
                if pending:
                    self._report(
                        ProtocolError(
                            f"stream ended inside a message ({len(pending)} bytes "
                            "without a final newline); discarded"
                        )
                    )
                return _EOF
            start = 0
            if discarding or pending:
                newline = chunk.find(b"\n")
                if newline < 0:
                    if not discarding:
                        if len(pending) + len(chunk) > limit:
                            self._report_too_long(len(pending) + len(chunk))
                            pending = bytearray()
                            discarding = True
                        else:
                            pending += chunk
                    continue
                start = newline + 1
                if discarding:
                    discarding = False
                else:
                    pending += memoryview(chunk)[:newline]
                    if len(pending) < _LONG_LINE:
                        handle(bytes(pending))
                    else:
                        self._handle_long_line(pending)
                    pending = bytearray()
            end = len(chunk)
            while start < end:
                newline = chunk.find(b"\n", start)
                if newline < 0:
                    if end - start > limit:
                        self._report_too_long(end - start)
                        discarding = True
                    else:
                        pending += memoryview(chunk)[start:]
                    break
                # the fast path: one whole message per chunk, parsed without a copy
                handle(chunk if start == 0 and newline == end - 1 else chunk[start:newline])
                start = newline + 1

    def _handle_line(self, line: bytes | str) -> None:
        """Decode and deliver one line (it may still end in ``\n`` or ``\r\n``)."""
        if len(line) > self.max_message_bytes:
            self._report_too_long(len(line))
            return
        try:
            value = jsonrpc.decode(line)
        except ProtocolError as exc:
            if line.strip():  # blank lines are skipped silently
                self._report(_not_utf8(line) or exc)
            return
        if type(value) is dict or type(value) is list:
            self._deliver(value)
        else:
            self._report(ProtocolError(f"not a JSON-RPC message: {line[:200].rstrip()!r}"))

    def _handle_long_line(self, buffer: bytearray) -> None:
        """Decode and deliver a line of ``_LONG_LINE`` bytes or more, emptying ``buffer``.

        The bytes are turned into text and freed before the JSON is parsed, so a big message
        peaks at twice its size in memory (text and parsed value) instead of four times (buffer,
        a bytes copy, the text ``json.loads`` decodes from it, and the parsed value).
        """
        try:
            text = buffer.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._report(ProtocolError(f"a {len(buffer)}-byte message is not UTF-8: {exc}"))
            return
        finally:
            buffer.clear()
        self._handle_line(text)

    def _report_too_long(self, size: int) -> None:
        self._report(
            ProtocolError(
                f"incoming message of at least {size} bytes exceeds max_message_bytes "
                f"({self.max_message_bytes}); the line is discarded"
            )
        )

    def _stderr_main(self, fd: int, close_fd: Callable[[], None]) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        poller = select.poll()
        poller.register(fd, _POLLIN)
        poller.register(self._wake_r, _POLLIN)
        try:
            while True:
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    if any(ready == self._wake_r for ready, _ in poller.poll()):
                        break
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self._keep_stderr(chunk)
                if self._on_stderr is not None:
                    self._pass_stderr(decoder.decode(chunk))
            if self._on_stderr is not None:
                self._pass_stderr(decoder.decode(b"", True))
        finally:
            with contextlib.suppress(OSError):
                close_fd()
            self._release_wake_pipe()

    def _keep_stderr(self, chunk: bytes) -> None:
        limit = self.max_stderr_bytes
        with self._stderr_lock:
            buf = self._stderr_buf
            buf += chunk
            excess = len(buf) - limit
            if excess > 0:
                del buf[:excess]

    def _pass_stderr(self, text: str) -> None:
        if text and self._on_stderr is not None:
            try:
                self._on_stderr(text)
            except Exception:
                logger.exception("%s: on_stderr callback failed", self)


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


def _nothing() -> None:
    pass


def _fd_closer(fd: int) -> Callable[[], None]:
    return lambda: os.close(fd)


class StdioTransport(LineTransport):
    """Spawn an MCP server and talk to it over its stdin and stdout.

    ::

        transport = StdioTransport("uvx", ["mcp-server-time"], env={"TZ": "UTC"})
        client.connect(transport)            # calls transport.start()

    - ``command`` is searched on ``PATH`` (the ``PATH`` of the server's environment when
      ``env`` sets one). A missing command, a file that is not executable or a missing ``cwd``
      raise :class:`ServerStartError` (a :class:`~mcp_sync.errors.TransportError`) from
      ``start()``.
    - The server inherits the client's environment; with ``inherit_env=False`` it gets only
      :data:`DEFAULT_ENV_KEYS` (``PATH``, ``HOME``, ``USER``, ``LOGNAME``, ``SHELL``, ``TERM``,
      ``TMPDIR``, ``TZ`` and the locale variables). ``env`` is merged over either; a value of
      None removes a variable.
    - ``stderr="pipe"`` (default) keeps the last ``max_stderr_bytes`` in :attr:`stderr_tail`
      and passes each chunk, as text, to ``on_stderr``; ``"inherit"`` leaves it on the
      client's stderr; ``"devnull"`` drops it.
    - When the server exits on its own, ``on_close`` gets a
      :class:`~mcp_sync.errors.ConnectionClosed` with ``exit_status`` and ``stderr_tail``.
    - ``close()`` closes stdin, waits 0.5 s, SIGTERMs the server's process group, waits
      ``close_timeout``, SIGKILLs it; then stops children that outlived the server. The
      server never outlives the client, even one killed with SIGKILL (see
      :mod:`mcp_sync.transports._process`).
    """

    kind = "stdio"

    def __init__(
        self,
        command: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str | None] | None = None,
        inherit_env: bool = True,
        stderr: StderrMode = "pipe",
        on_stderr: StderrListener | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
        max_stderr_bytes: int = 64 * 1024,
        close_timeout: float = 2.0,
    ) -> None:
        super().__init__(
            on_stderr=on_stderr,
            max_message_bytes=max_message_bytes,
            max_stderr_bytes=max_stderr_bytes,
            close_timeout=close_timeout,
        )
        if stderr not in ("pipe", "inherit", "devnull"):
            raise ValueError(f"stderr must be 'pipe', 'inherit' or 'devnull', not {stderr!r}")
        if isinstance(args, (str, bytes)):
            raise TypeError("args must be a sequence of strings, not a string")
        self.command = os.fspath(command)
        self.args = tuple(str(arg) for arg in args)
        self.cwd = None if cwd is None else os.fspath(cwd)
        self.env = dict(env) if env is not None else None
        self.inherit_env = inherit_env
        self.stderr = stderr
        self.exit_status: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._exited_alone = False

    @classmethod
    def from_command(cls, command: str | Sequence[str], **kwargs: Any) -> StdioTransport:
        """Build from a shell-like string (split with :func:`shlex.split`) or an argv list."""
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("empty command")
        return cls(argv[0], argv[1:], **kwargs)

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs, else None."""
        proc = self._proc
        if proc is None or self._torn_down or proc.returncode is not None:
            return None
        return proc.pid

    def server_environment(self) -> dict[str, str]:
        """The environment the server gets."""
        if self.inherit_env:
            merged = dict(os.environ)
        else:
            merged = {
                key: value
                for key in DEFAULT_ENV_KEYS
                if (value := os.environ.get(key)) is not None and not value.startswith("()")
            }
        for key, value in (self.env or {}).items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return merged

    def start(self) -> None:
        if self._started or self._closing:
            raise RuntimeError("transport already started")
        env = None if self.inherit_env and not self.env else self.server_environment()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r = stderr_w = -1
        if self.stderr == "pipe":
            stderr_r, stderr_w = os.pipe()
        child_stderr = {"pipe": stderr_w, "inherit": None, "devnull": subprocess.DEVNULL}
        try:
            self._proc = _process.spawn_group(
                (self.command, *self.args),
                cwd=self.cwd,
                env=env,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=child_stderr[self.stderr],
            )
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w, stderr_w):
                if fd >= 0:
                    os.close(fd)
        _process.guard.add(self._proc.pid)
        self._started = True
        stderr = (stderr_r, _fd_closer(stderr_r)) if stderr_r >= 0 else None
        self._attach(stdout_r, _fd_closer(stdout_r), stdin_w, _fd_closer(stdin_w), stderr)

    def _stop_peer(self, exit_deadline: float) -> None:
        proc = self._proc
        assert proc is not None
        try:
            self._exited_alone = _process.stop_group(
                proc, exit_deadline=exit_deadline, close_timeout=self.close_timeout
            )
        finally:
            self.exit_status = proc.returncode
            _process.guard.remove(proc.pid)

    def _write_failed(self, error: OSError) -> ConnectionClosed:
        # A server that exits at start-up (a missing API key) often does so before our first
        # write: wait briefly for it to be reaped and its stderr to drain, so that the error
        # says how it ended instead of a bare "Broken pipe".
        proc = self._proc
        if proc is None or not _process.wait_exit(proc, _EXIT_REPORT_WAIT):
            return self._closed_error(error)
        stderr_thread = self._stderr_thread
        if stderr_thread is not None and stderr_thread is not threading.current_thread():
            stderr_thread.join(_STDERR_DRAIN)
        return ConnectionClosed(
            f"MCP server {self.command!r} exited",
            cause=error,
            exit_status=proc.returncode,
            stderr_tail=self.stderr_tail if self._has_stderr else None,
        )

    def _peer_gone(self, error: OSError | None) -> ConnectionClosed:
        what = "exited" if self._exited_alone else "closed its stdout and was stopped"
        return ConnectionClosed(
            f"MCP server {self.command!r} {what}",
            cause=error,
            exit_status=self.exit_status,
            stderr_tail=self.stderr_tail if self._has_stderr else None,
        )

    def _closed_error(self, cause: OSError | None = None) -> ConnectionClosed:
        ended = self._end_report()
        if ended is not None:
            return ended
        if cause is not None:
            return ConnectionClosed(f"cannot write to MCP server {self.command!r}", cause=cause)
        if not self._started:
            return ConnectionClosed(f"stdio transport for {self.command!r} is not started")
        if self._closing or not self._torn_down:
            return ConnectionClosed(f"stdio transport for {self.command!r} is closed")
        return self._peer_gone(None)

    def __repr__(self) -> str:
        return f"<StdioTransport {shlex.join((self.command, *self.args))!r} pid={self.pid}>"


class PipeTransport(LineTransport):
    """The stdio framing over a program you started yourself, or over two streams.

    ``process_or_streams`` is a :class:`subprocess.Popen` created with ``stdin=PIPE`` and
    ``stdout=PIPE`` (its stderr, if piped, is captured as for :class:`StdioTransport`), or a
    ``(reader, writer)`` pair of objects with ``fileno()`` (or raw fds). The transport reads
    the descriptors directly: do not read from them yourself.

    ``close()`` closes the program's stdin, waits 0.5 s for it to exit, then terminates it,
    waits ``close_timeout`` and kills it. Streams are just closed.
    """

    kind = "pipe"

    def __init__(
        self,
        process_or_streams: subprocess.Popen[Any] | tuple[_Stream | int, _Stream | int],
        *,
        on_stderr: StderrListener | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
        max_stderr_bytes: int = 64 * 1024,
        close_timeout: float = 2.0,
    ) -> None:
        super().__init__(
            on_stderr=on_stderr,
            max_message_bytes=max_message_bytes,
            max_stderr_bytes=max_stderr_bytes,
            close_timeout=close_timeout,
        )
        self.process: subprocess.Popen[Any] | None = None
        if isinstance(process_or_streams, subprocess.Popen):
            proc = process_or_streams
            if proc.stdin is None or proc.stdout is None:
                raise ValueError("the process needs stdin=PIPE and stdout=PIPE")
            self.process = proc
            self._streams: tuple[_Stream | int, _Stream | int] = (proc.stdout, proc.stdin)
        else:
            reader, writer = process_or_streams
            self._streams = (reader, writer)
        self._exited_alone = False

    @property
    def pid(self) -> int | None:
        """The program's process id while it runs (None for streams)."""
        proc = self.process
        if proc is None or self._torn_down or proc.returncode is not None:
            return None
        return int(proc.pid)

    @property
    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.returncode

    def start(self) -> None:
        if self._started or self._closing:
            raise RuntimeError("transport already started")
        self._started = True
        reader, writer = self._streams
        stderr = None
        proc = self.process
        if proc is not None and proc.stderr is not None:
            stderr = (proc.stderr.fileno(), proc.stderr.close)
        self._attach(*_fd_and_closer(reader), *_fd_and_closer(writer), stderr)

    def _stop_peer(self, exit_deadline: float) -> None:
        proc = self.process
        if proc is None:
            return
        try:
            self._exited_alone = _process.wait_exit(proc, exit_deadline - time.monotonic())
            if not self._exited_alone:
                proc.terminate()
                if not _process.wait_exit(proc, self.close_timeout):
                    proc.kill()
                    _process.wait_exit(proc, 5.0)
        except BaseException:  # an interrupted close() still stops the program
            proc.kill()
            raise

    def _peer_gone(self, error: OSError | None) -> ConnectionClosed:
        if self.process is None:
            return super()._peer_gone(error)
        what = "exited" if self._exited_alone else "closed its stdout and was stopped"
        return ConnectionClosed(
            f"program {self.process.args!r} {what}",
            cause=error,
            exit_status=self.process.returncode,
            stderr_tail=self.stderr_tail if self._has_stderr else None,
        )


def _fd_and_closer(stream: _Stream | int) -> tuple[int, Callable[[], None]]:
    if isinstance(stream, int):
        return stream, _fd_closer(stream)
    return stream.fileno(), stream.close
