"""Fixtures for the CLI tests: real servers (stdio commands, one over Streamable HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.support import NODE, PEERS, SERVERS, free_port, wait_listening


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


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(proc, port)
    except AssertionError as exc:
        proc.kill()
        proc.wait()
        pytest.fail(f"server did not start: {exc}")
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
