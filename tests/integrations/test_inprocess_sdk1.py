"""connect() to an official SDK 1.x FastMCP object (mcp.server.fastmcp), served in this process.
mcp 1.x cannot share the main venv with the test extra's mcp 2.x, so the user's side,
tests/integrations/sdk1_fastmcp_client.py, runs with tests/peers/mcp1-venv's Python (`make
test` builds it from tests/peers/mcp1-requirements.txt, with mcp_sync from this checkout)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PEERS, ROOT

MCP1_PYTHON = PEERS.parent / "mcp1-venv" / "bin" / "python"
SCRIPT = Path(__file__).with_name("sdk1_fastmcp_client.py")


def test_an_sdk1_fastmcp_object_is_served_in_process_and_closed():
    if not MCP1_PYTHON.exists():
        pytest.fail(f"{MCP1_PYTHON} is missing: run `make test` (it installs mcp 1.x)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's mcp_sync, whatever the venv has
    run = subprocess.run(
        [str(MCP1_PYTHON), str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, f"{SCRIPT.name} failed:\n{run.stderr[-3000:]}"
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["mcp"].startswith("1."), f"mcp1-venv has mcp {report['mcp']}, not 1.x"
    assert report["server"] == "sdk1-fixture" and report["tools"] == ["greet"]
    assert report["text"] == "Hello, Ada!"  # the tool ran, with the lifespan's context
    assert report["lifespan"] == ["enter", "exit"]  # close() ended the server's lifespan
    assert report["threads_left"] == [], "close() left threads of the connection"
