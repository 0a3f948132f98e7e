"""Fixtures of the integration tests: real servers (tests/servers/, server-everything)."""

from __future__ import annotations

import pytest
from integration_servers import load_server
from support import NODE, PEERS


@pytest.fixture
def everything_cmd(monkeypatch) -> list[str]:
    script = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.exists() or not NODE.exists():
        pytest.fail(f"{script} or {NODE} is missing: run `make test` (it installs tests/peers)")
    monkeypatch.setenv("NODE_NO_WARNINGS", "1")
    return [str(NODE), str(script), "stdio"]


@pytest.fixture(scope="session")
def sdk_inprocess(mcp_client_session):
    """One client of tests/servers/sdk_server.py's MCPServer, served in this process, shared by
    the whole session (the pytest plugin's session-scoped factory)."""
    return mcp_client_session(load_server("sdk_server.py").server, request_timeout=20)
