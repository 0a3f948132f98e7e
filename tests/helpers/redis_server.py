"""A real redis-server (Debian's package) on a free loopback port, for the Redis store tests.

:func:`redis_server` yields its URL; :func:`redis_process` yields a :class:`RedisProcess` that
can also be frozen (SIGSTOP), thawed, killed and started again on the same port (from its
append-only file, with ``aof=True``), with extra server arguments (TLS, ACL users).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisProcess:
    """One redis-server child: ``url``, ``start``/``stop``/``kill``, ``freeze``/``thaw``."""

    def __init__(
        self,
        workdir: Path,
        *,
        aof: bool = False,
        args: Sequence[str] = (),
        url: str | None = None,
        port: int | None = None,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            pytest.fail("redis-server is missing: `apt-get install redis-server` (make test does)")
        self.port = port or free_port()
        self.command = [
            binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes" if aof else "no",
            "--appendfsync",
            "always",
            "--dir",
            str(workdir),
            *args,
        ]
        self.url = url or f"redis://127.0.0.1:{self.port}/0"
        self.client_options = dict(client_options or {})
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        client = redis.Redis.from_url(self.url, **self.client_options)
        deadline = time.monotonic() + 20
        try:
            while True:
                try:
                    client.ping()
                    return
                except (redis.ConnectionError, redis.BusyLoadingError):
                    if self.proc.poll() is not None or time.monotonic() > deadline:
                        self.proc.kill()
                        out = self.proc.communicate()[0][-2000:]
                        pytest.fail(f"redis-server did not start: {out!r}")
                    time.sleep(0.02)
        finally:
            client.close()

    def freeze(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: no shutdown, what is in the append-only file is what survives."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def redis_process(workdir: Path, **options: Any) -> Iterator[RedisProcess]:
    """A started :class:`RedisProcess` (keyword options as its constructor's); stopped after."""
    server = RedisProcess(workdir, **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Start redis-server with no persistence; yield its URL; stop it."""
    with redis_process(workdir) as server:
        yield server.url
