"""Server processes for the stdio transport: spawning, stopping, and never leaving orphans.

Each server is started as the leader of a new session, hence of its own process group
(``start_new_session=True``; ``process_group=`` needs Python 3.11). Everything the server forks
stays in that group unless it calls ``setsid``/``setpgid`` itself, so signals sent to the group
reach the server and its children, and terminal signals (Ctrl-C) do not: the client decides
when its servers stop.

Stopping (:func:`stop_group`, after the transport has closed the server's stdin): wait up to
0.5 s for the server to exit on EOF, SIGTERM the group, wait ``close_timeout``, SIGKILL the
group, reap the server. Then the group gets SIGTERM again, for children that outlived the
server, and SIGKILL after a short grace. Waiting uses pidfds (``os.pidfd_open`` + ``poll``), so
a server that exits on EOF is noticed the moment it exits; without pidfds it falls back to
``Popen.wait(timeout)``.

The orphan guarantee has three layers:

1. ``close()`` runs the ladder above.
2. An ``atexit`` hook sends SIGTERM to every group still registered when the interpreter exits
   normally (a transport that was never closed).
3. A watchdog process covers the cases where no Python code runs: the client is killed with
   SIGKILL, crashes, or calls ``os._exit``. It is started once per client process, on the first
   server start, from ``sys.executable`` (``-I -S``), in the background of ``/bin/sh``, which
   exits at once (so the first server's start waits a few ms, not for an interpreter's start:
   10-25 ms), and is not our child once the shell has exited (nothing to reap, nothing to
   count among our children; without ``/bin/sh`` it forks itself and the start waits for that
   fork). It runs in its own session
   (ignores SIGINT and SIGHUP, so the terminal signal that killed the client does not kill it)
   and reads its stdin, the read end of a pipe whose write end only the client holds
   (close-on-exec, never inherited by servers, closed in children made by ``os.fork``). The
   client writes ``+<pgid>`` when it starts a server and ``-<pgid>`` once the group is gone.
   When the pipe reaches EOF, because the client died or exited, the watchdog sends SIGTERM to
   every group still registered, waits up to 2 s, SIGKILLs what is left, and exits. The kernel
   closes the pipe however the client dies, so this holds even for SIGKILL.

Why not ``PR_SET_PDEATHSIG``: it is tied to the *thread* that forked the child (a server started
from a worker thread would be killed when that thread ends), it only reaches the direct child
(grandchildren survive), and setting it needs ``preexec_fn``, which is unsafe in a threaded
process. A per-transport watchdog would double the cost of every server start; one per
client process costs one small interpreter for the client's lifetime.

Limits: a descendant that leaves the group (``setsid``, daemonizing servers) is beyond reach of
group signals. A server spawned in the instant between ``fork`` and the ``+<pgid>`` write is
unprotected if the client is SIGKILLed in that instant. If the watchdog itself is killed, the
next registration starts a new one and re-sends the live groups.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence

from ..errors import ServerStartError

__all__ = [
    "EOF_GRACE",
    "ServerStartError",
    "group_members",
    "guard",
    "spawn_group",
    "stop_group",
    "wait_exit",
]

logger = logging.getLogger("mcp_sync.transport.stdio")

#: How long a server gets to exit by itself once its stdin is closed.
EOF_GRACE = 0.5
#: How long children that outlived the server get between SIGTERM and SIGKILL.
STRAGGLER_GRACE = 0.25
#: How long the watchdog waits between SIGTERM and SIGKILL after the client died.
WATCHDOG_GRACE = 2.0

_HAVE_PIDFD = hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


# -- spawning ---------------------------------------------------------------------------


def spawn_group(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    stdin: int,
    stdout: int,
    stderr: int | None,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (searching ``PATH`` of ``env``) as the leader of a new process group,
    with no descriptor of ours but its stdio and ``pass_fds``.

    Raises :class:`ServerStartError` naming the command and what was wrong.
    """
    command = argv[0]
    try:
        return subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=env,
            close_fds=True,
            pass_fds=pass_fds,
            start_new_session=True,
        )
    except OSError as exc:
        raise ServerStartError(_start_failure(exc, command, cwd, env), command=command) from exc


def _start_failure(
    exc: OSError, command: str, cwd: str | None, env: Mapping[str, str] | None
) -> str:
    head = f"cannot start MCP server {command!r}"
    if cwd is not None and exc.filename == cwd:
        return f"{head}: working directory {cwd!r}: {exc.strerror}"
    if isinstance(exc, FileNotFoundError):
        if os.sep in command:
            return f"{head}: no such file"
        path = (env or os.environ).get("PATH", os.defpath)
        return f"{head}: command not found on PATH ({path})"
    if isinstance(exc, PermissionError):
        return f"{head}: permission denied (is the file executable?)"
    if exc.errno == errno.ENOEXEC:
        return f"{head}: not an executable program (a script needs a #! line)"
    return f"{head}: {exc.strerror or exc}"


# -- waiting and stopping -----------------------------------------------------------------


def wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``proc`` to exit and reap it; True once reaped."""
    if proc.poll() is not None:
        return True
    if timeout <= 0:
        return False
    if _HAVE_PIDFD:
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError:
            pidfd = -1
        if pidfd >= 0:
            try:
                _poll_readable([pidfd], timeout)
                exited = bool(_ready(pidfd))
            finally:
                os.close(pidfd)
            if not exited:
                return proc.poll() is not None
            # It has exited: reap it. Not with poll(), which answers "running" while another
            # thread holds the Popen's reaping lock; wait() waits for that thread.
            try:
                proc.wait(1.0)
            except subprocess.TimeoutExpired:
                return False
            return True
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def _ready(fd: int) -> int:
    """Non-zero when ``fd`` is readable now (a pidfd: its process has exited)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return len(poller.poll(0))


def _poll_readable(fds: Iterable[int], timeout: float) -> None:
    """Block until every fd in ``fds`` is readable (pidfds: their process exited) or timeout."""
    poller = select.poll()
    waiting = set()
    for fd in fds:
        poller.register(fd, select.POLLIN)
        waiting.add(fd)
    deadline = time.monotonic() + timeout
    while waiting:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        for fd, _ in poller.poll(math.ceil(remaining * 1000)):
            poller.unregister(fd)
            waiting.discard(fd)


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member we may not signal (setuid); it exists
    return True


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in group ``pgid``, found by scanning ``/proc``."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split(b" ", 3)
        if len(fields) >= 3 and fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def stop_group(
    proc: subprocess.Popen[bytes], *, exit_deadline: float, close_timeout: float
) -> bool:
    """Stop a server whose stdin is already closed, and every process left in its group.

    Waits until ``exit_deadline`` (a ``time.monotonic()`` value) for the server to exit, then
    SIGTERM, ``close_timeout``, SIGKILL. Returns True if the server exited without a signal
    from us.
    """
    pgid = proc.pid
    try:
        exited_alone = wait_exit(proc, exit_deadline - time.monotonic())
        if not exited_alone:
            signal_group(pgid, signal.SIGTERM)
            if not wait_exit(proc, close_timeout):
                signal_group(pgid, signal.SIGKILL)
                if not wait_exit(proc, 5.0):
                    logger.warning("MCP server pid %d survived SIGKILL for 5 s", pgid)
    except BaseException:
        # Ctrl-C (or any exception) in one of the waits: jump to the last rung, so that an
        # interrupted close() leaves no server behind, then let the interrupt go on.
        kill_group_now(proc)
        raise
    kill_stragglers(pgid, STRAGGLER_GRACE)
    return exited_alone


def kill_group_now(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the group of ``proc`` and reap it, without waiting on anything interruptible."""
    signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError, OSError):
        # SIGKILL cannot be ignored: the blocking wait ends as soon as the kernel reaps it
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    proc.poll()


def kill_stragglers(pgid: int, grace: float) -> None:
    """SIGTERM what is left of group ``pgid``; SIGKILL whatever survives ``grace`` seconds."""
    if not signal_group(pgid, signal.SIGTERM):
        return  # the usual case: the group died with its leader
    if not _HAVE_PIDFD:
        time.sleep(grace)  # no way to wait for non-children without pidfds
        signal_group(pgid, signal.SIGKILL)
        return
    if _wait_group_gone(pgid, grace):
        return
    signal_group(pgid, signal.SIGKILL)
    # SIGKILL is delivered asynchronously: wait until the processes are really gone
    if not _wait_group_gone(pgid, 1.0):
        logger.warning("processes of group %d survived SIGKILL", pgid)


def _wait_group_gone(pgid: int, timeout: float) -> bool:
    """Wait on pidfds until group ``pgid`` has no live member; False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        members = group_members(pgid)
        if not members:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        pidfds = []
        for pid in members:
            with contextlib.suppress(OSError):
                pidfds.append(os.pidfd_open(pid))
        try:
            _poll_readable(pidfds, remaining)
        finally:
            for fd in pidfds:
                os.close(fd)


# -- the registry of live groups: atexit hook and watchdog --------------------------------

_WATCHDOG_SOURCE = r"""
import os, signal, sys, time
if sys.argv[2:] == ["fork"] and os.fork():  # (not started by a shell: leave our parent)
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
grace = float(sys.argv[1])
groups = set()
pending = b""
while True:
    try:
        data = os.read(0, 65536)
    except OSError:
        break
    if not data:
        break
    lines = (pending + data).split(b"\n")
    pending = lines.pop()
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))


def send(sig):
    alive = set()
    for pgid in groups:
        try:
            os.killpg(pgid, sig)
            alive.add(pgid)
        except OSError:
            pass
    return alive


groups = send(signal.SIGTERM)
deadline = time.monotonic() + grace
while groups and time.monotonic() < deadline:
    time.sleep(0.02)
    groups = send(0)
send(signal.SIGKILL)
"""


#: What starts the watchdog in the background, where there is one.
_SHELL = "/bin/sh"


class _GroupGuard:
    """Process groups of live servers, SIGTERMed at exit and watched by the watchdog."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self._pipe = -1  # write end of the watchdog's stdin
        self._watchdog_failed = False

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)
            self._tell(f"+{pgid}\n".encode())

    def remove(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)
            self._tell(f"-{pgid}\n".encode())

    def groups(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._groups)

    def watchdog_running(self) -> bool:
        with self._lock:
            return self._pipe >= 0

    def _tell(self, line: bytes) -> None:
        if self._pipe >= 0:
            try:
                os.write(self._pipe, line)
                return
            except OSError:  # the watchdog died: start another one, tell it everything
                os.close(self._pipe)
                self._pipe = -1
        if self._start_watchdog():
            payload = b"".join(f"+{pgid}\n".encode() for pgid in self._groups)
            if payload:
                with contextlib.suppress(OSError):
                    os.write(self._pipe, payload)

    def _start_watchdog(self) -> bool:
        if self._watchdog_failed or not self._groups:
            return False
        if not sys.executable:
            self._give_up("sys.executable is unknown")
            return False
        read_end, write_end = os.pipe()  # both close-on-exec
        watchdog = [sys.executable, "-I", "-S", "-c", _WATCHDOG_SOURCE, str(WATCHDOG_GRACE)]
        if os.path.exists(_SHELL):
            # The shell starts it in the background and exits at once, so the first server's
            # start waits for a shell (a few ms), not for an interpreter (10-25 ms). (The pipe
            # goes through fd 3: a background job's stdin is /dev/null before its redirections.)
            watchdog = [_SHELL, "-c", 'exec 3<&0; "$@" <&3 3<&- &', "sh", *watchdog]
        else:
            watchdog.append("fork")
        try:
            intermediate = subprocess.Popen(
                watchdog,
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(write_end)
            self._give_up(str(exc))
            return False
        finally:
            os.close(read_end)
        intermediate.wait()  # the shell (or the interpreter that forks) exits at once
        self._pipe = write_end
        return True

    def _give_up(self, why: str) -> None:
        self._watchdog_failed = True
        logger.warning(
            "cannot start the mcp_sync watchdog (%s): servers may outlive a killed client", why
        )

    def at_exit(self) -> None:
        """SIGTERM every live group; closing the pipe lets the watchdog SIGKILL survivors."""
        with self._lock:
            for pgid in self._groups:
                signal_group(pgid, signal.SIGTERM)
            if self._pipe >= 0:
                os.close(self._pipe)
                self._pipe = -1

    def after_fork_in_child(self) -> None:
        """A forked child owns none of its parent's servers, nor its watchdog pipe."""
        self._lock = threading.Lock()
        self._groups = set()
        if self._pipe >= 0:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = -1


guard = _GroupGuard()
atexit.register(guard.at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=guard.after_fork_in_child)
