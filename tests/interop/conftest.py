"""Real MCP servers others wrote, installed by `make test` (tests/peers/ lists them)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers.support import NODE, PEERS, PYTHON, SERVERS

BIN = Path(sys.executable).parent


def npm_server(package: str) -> list[str]:
    script = PEERS / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not script.exists() or not NODE.exists():
        pytest.fail(f"{script} or {NODE} is missing: run `make test` (it installs tests/peers)")
    return [str(NODE), str(script)]


@pytest.fixture
def sdk_server_cmd() -> list[str]:
    return [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]


@pytest.fixture
def everything_cmd() -> list[str]:
    return [*npm_server("server-everything"), "stdio"]


@pytest.fixture
def filesystem_cmd() -> list[str]:
    return npm_server("server-filesystem")


@pytest.fixture
def time_cmd() -> list[str]:
    exe = BIN / "mcp-server-time"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: install the test extra (make test does)")
    return [str(exe)]


@pytest.fixture(autouse=True)
def _quiet_node(monkeypatch):
    monkeypatch.setenv("NODE_NO_WARNINGS", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    yield
    assert os.getpid()  # keep the fixture a generator for clarity
