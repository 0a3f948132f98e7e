"""Fixtures of the integration tests: real servers (tests/servers/, server-everything)."""

from __future__ import annotations

import pytest

from tests.helpers.support import NODE, PEERS


@pytest.fixture
def everything_cmd(monkeypatch) -> list[str]:
    script = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.exists() or not NODE.exists():
        pytest.fail(f"{script} or {NODE} is missing: run `make test` (it installs tests/peers)")
    monkeypatch.setenv("NODE_NO_WARNINGS", "1")
    return [str(NODE), str(script), "stdio"]
