"""The stdio transports: newline-delimited JSON over a child process's stdin and stdout.

:class:`StdioTransport` spawns the server itself (in its own process group, see
:mod:`mcp_sync.transports._process` for how it is stopped and why it never outlives the
client). :class:`PipeTransport` speaks the same framing over a program the caller started
(``subprocess.Popen``, ``docker exec -i``, ``ssh host server``) or over a pair of streams.
The framing, the reader thread and the writes with deadlines they share are
:class:`~mcp_sync.transports._lines.LineTransport`'s.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .._rules.values import environment, os_text
from ..errors import ConnectionClosed, SandboxUnavailable
from ..redaction import Secret, hold, hold_fields, is_secret_name, redact
from . import _process
from ._lines import STDERR_DRAIN, LineTransport, fd_closer
from ._process import ServerStartError
from ._stderr import StderrListener

if TYPE_CHECKING:
    from .sandbox import Sandbox

__all__ = [
    "DEFAULT_ENV_KEYS",
    "LineTransport",
    "PipeTransport",
    "ServerStartError",
    "StdioTransport",
]

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

#: How long a failed write waits for the server's exit status before reporting.
_EXIT_REPORT_WAIT = 1.0
#: How long start() waits for bwrap to set a sandbox up (a refusal is raised from there);
#: beyond, the server's own start says how it went.
_SANDBOX_SETUP_WAIT = 30.0

StderrMode = Literal["pipe", "inherit", "devnull"]


class _Stream(Protocol):
    def fileno(self) -> int: ...

    def close(self) -> None: ...


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
    - ``sandbox=True`` (or a :class:`~mcp_sync.transports.sandbox.Sandbox`) runs the server
      confined by bubblewrap: no network, a read-only system, a private ``/tmp`` and an empty
      home, only the listed paths writable, limits (256 processes by default where the client
      is not root; see ``docs/sandbox.md``); the client's environment variables named like
      credentials (``*TOKEN*``, ``*SECRET*``, ``*API_KEY*``, ``*PASSWORD*``...) are left out
      unless given in ``env``. ``start()`` returns once the sandbox is set up; where it cannot
      be (bwrap missing, or refusing: its reason is in the message), it raises
      :class:`~mcp_sync.errors.SandboxUnavailable` and the server is not run.
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
        sandbox: Sandbox | bool | None = None,
    ) -> None:
        super().__init__(
            on_stderr=on_stderr,
            max_message_bytes=max_message_bytes,
            max_stderr_bytes=max_stderr_bytes,
            close_timeout=close_timeout,
        )
        self.sandbox: Sandbox | None = None
        if sandbox is not None:  # (the sandbox's module is loaded only for a server that has one)
            from .sandbox import Sandbox

            self.sandbox = Sandbox.of(sandbox)
        if stderr not in ("pipe", "inherit", "devnull"):
            raise ValueError(f"stderr must be 'pipe', 'inherit' or 'devnull', not {stderr!r}")
        if isinstance(args, (str, bytes)):
            raise TypeError("args must be a sequence of strings, not a string")
        self.command = os_text(command, "StdioTransport: command")
        # what the server is given may come back in its stderr or its errors: an env value
        # under a secret name (GITHUB_TOKEN; TZ=Europe/Paris is no secret), what a config
        # marked secret (a ${VAR} in an argument)
        hold(self, *(part for arg in args if isinstance(arg, Secret) for part in (arg, *arg.parts)))
        self.args = tuple(
            os_text(arg if isinstance(arg, os.PathLike) else str(arg), f"StdioTransport: args[{i}]")
            for i, arg in enumerate(args)
        )
        self.cwd = None if cwd is None else os_text(cwd, "StdioTransport: cwd")
        self.env = environment(env, "StdioTransport: env")
        hold_fields(self, self.env or {})
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
        argv: Sequence[str] = (self.command, *self.args)
        report_r = report_w = -1
        if self.sandbox is not None:
            report_r, report_w = os.pipe()  # the sandbox says on it that it is set up
            try:
                argv, env = self._sandboxed(report_w)
            except BaseException:
                os.close(report_r)
                os.close(report_w)
                raise
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r = stderr_w = -1
        if self.stderr == "pipe":
            stderr_r, stderr_w = os.pipe()
        child_stderr = {"pipe": stderr_w, "inherit": None, "devnull": subprocess.DEVNULL}
        try:
            self._proc = _process.spawn_group(
                argv,
                cwd=self.cwd,
                env=env,
                stdin=stdin_r,
                stdout=stdout_w,
                stderr=child_stderr[self.stderr],
                pass_fds=(report_w,) if report_w >= 0 else (),
            )
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r, report_r):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (stdin_r, stdout_w, stderr_w, report_w):
                if fd >= 0:
                    os.close(fd)
        if report_r >= 0:
            self._await_sandbox(report_r, (stdin_w, stdout_r, stderr_r))
        _process.guard.add(self._proc.pid)
        stderr = (stderr_r, fd_closer(stderr_r)) if stderr_r >= 0 else None
        self._attach(stdout_r, fd_closer(stdout_r), stdin_w, fd_closer(stdin_w), stderr, owned=True)
        self._now_started()

    def _await_sandbox(self, report: int, ours: tuple[int, int, int]) -> None:
        """Wait until bwrap has set the sandbox up; if it refused, close ``ours`` (the pipes
        to it: stdin, stdout, stderr) and raise :class:`SandboxUnavailable` with its reason."""
        from .sandbox import await_setup, refusal

        proc = self._proc
        assert proc is not None
        refused: str | None = None
        try:
            # every process of bwrap closed the pipe without a word: it refused, and exits
            if not await_setup(report, _SANDBOX_SETUP_WAIT) and _process.wait_exit(
                proc, _SANDBOX_SETUP_WAIT
            ):
                said = b""
                if ours[2] >= 0:  # its stderr, piped: all of it, since bwrap is gone
                    with open(ours[2], "rb", closefd=False) as stderr:
                        said = stderr.read(self.max_stderr_bytes)
                refused = refusal(said, proc.returncode)
        except BaseException:  # interrupted while waiting: nothing may be left running
            _process.kill_group_now(proc)
            refused = "interrupted"
            raise
        finally:
            os.close(report)
            if refused is not None:
                for fd in ours:
                    if fd >= 0:
                        os.close(fd)
                self._proc = None
        if refused is not None:
            raise SandboxUnavailable(
                f"bubblewrap could not set up the sandbox of MCP server {self.command!r}:"
                f" {refused}",
                command=self.command,
            )

    def _sandboxed(self, report: int) -> tuple[list[str], dict[str, str]]:
        """The bwrap command line and environment that run the server in its sandbox."""
        import shutil

        from .sandbox import sandboxed_argv

        assert self.sandbox is not None
        given = self.env or {}
        # credentials in the client's own environment stay out; the ones given with env= go in
        env = {
            key: value
            for key, value in self.server_environment().items()
            if key in given or not is_secret_name(key)
        }
        command = self.command
        if os.sep not in command:  # resolved here, so that a missing one is a ServerStartError
            found = shutil.which(command, path=env.get("PATH", os.defpath))
            if found is None:
                missing = FileNotFoundError(2, "No such file or directory", command)
                raise ServerStartError(
                    _process._start_failure(missing, command, None, env), command=command
                )
            command = found
        if self.cwd is not None and not os.path.isdir(self.cwd):
            missing = FileNotFoundError(2, "No such file or directory", self.cwd)
            raise ServerStartError(
                _process._start_failure(missing, command, self.cwd, env), command=self.command
            )
        env["TMPDIR"] = "/tmp"  # the client's may be hidden; the private one is there
        argv = sandboxed_argv(
            self.sandbox, (command, *self.args), env=env, cwd=self.cwd, report=report
        )
        return argv, env

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
            stderr_thread.join(STDERR_DRAIN)
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
        return redact(f"<StdioTransport {shlex.join((self.command, *self.args))!r} pid={self.pid}>")


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
        reader, writer = self._streams
        stderr = None
        proc = self.process
        if proc is not None and proc.stderr is not None:
            stderr = (proc.stderr.fileno(), proc.stderr.close)
        self._attach(*_fd_and_closer(reader), *_fd_and_closer(writer), stderr)
        self._now_started()

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
        return stream, fd_closer(stream)
    return stream.fileno(), stream.close
