"""Real servers for the integration tests (tests/servers/sdk_server.py and server-everything)."""

from __future__ import annotations

import sys

import pytest
from support import NODE, PEERS, PYTHON, SERVERS

SDK_SERVER = [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]

# fastmcp and langchain-core need Python 3.11 (their tests are skipped on 3.10, with this reason)
needs_py311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the library under test needs Python >= 3.11"
)


@pytest.fixture
def everything_cmd(monkeypatch) -> list[str]:
    script = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.exists() or not NODE.exists():
        pytest.fail(f"{script} or {NODE} is missing: run `make test` (it installs tests/peers)")
    monkeypatch.setenv("NODE_NO_WARNINGS", "1")
    return [str(NODE), str(script), "stdio"]
