"""The stderr tail in a ``ConnectionClosed`` shows the server's real complaint, in whole lines.

The server is the official SDK's 1.x FastMCP (tests/peers/mcp1-venv), the line most servers in
the wild still run: it answers mcp_sync's ``server/discover`` probe with an error and logs
thirty lines of validation errors about it on stderr. The script adds what makes a real outage:
a configuration warning at start-up, and a tool that dies on its first call.
"""

from __future__ import annotations

import pytest

import mcp_sync
from mcp_sync import ConnectionClosed
from mcp_sync._presentation.stderr_text import STDERR_SHOWN
from tests.helpers.support import PEERS

MCP1_PYTHON = PEERS.parent / "mcp1-venv" / "bin" / "python"

SERVER = """
import os, sys
from mcp.server.fastmcp import FastMCP

print("warning: DATABASE_URL is not set; every query will fail", file=sys.stderr, flush=True)
mcp = FastMCP("needs-a-database")

@mcp.tool()
def query(sql: str) -> str:
    print("query: " + "x" * 150 + " giving up", file=sys.stderr, flush=True)
    os._exit(3)

mcp.run()
"""


def test_the_tail_keeps_the_cause_and_starts_at_a_line(tmp_path):
    if not MCP1_PYTHON.exists():
        pytest.fail(f"{MCP1_PYTHON} is missing: run `make test` (it installs mcp 1.x)")
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    client = mcp_sync.connect([str(MCP1_PYTHON), str(script)], timeout=60)
    with client, pytest.raises(ConnectionClosed) as caught:
        client.call_tool("query", {"sql": "select 1"}, timeout=60)
    message = str(caught.value)
    shown = message.split("--- server stderr (last lines) ---\n", 1)[1]
    # the warning printed before the probe's complaint is still in view
    assert "DATABASE_URL is not set" in shown, shown
    assert "PingRequest.method" not in shown  # the complaint is summed up in one line
    assert "server/discover probe left out" in shown
    # whole lines only: the first shown line is one the server wrote, from its start
    assert shown.splitlines()[0].startswith(("warning:", "[")), shown
    assert len(shown) <= STDERR_SHOWN
    assert caught.value.stderr_tail is not None and "PingRequest" in caught.value.stderr_tail
