"""to_mcp and from_mcp with the official SDK's 1.x types (the extra `mcp` allows mcp>=1.30),
and to_mcp as the route into mcpadapt's google-genai adapter. mcp 1.x cannot share the main
venv with the test extra's mcp 2.x, so the user's side, sdk1_mcp_types_client.py, runs with
tests/peers/mcp1-venv's Python (`make test` builds it from tests/peers/mcp1-requirements.txt,
with mcp_sync from this checkout), against server-everything."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PEERS, ROOT

MCP1_PYTHON = PEERS.parent / "mcp1-venv" / "bin" / "python"
SCRIPT = Path(__file__).with_name("sdk1_mcp_types_client.py")


def test_to_mcp_and_from_mcp_with_mcp_1x_and_into_mcpadapt(everything_cmd):
    if not MCP1_PYTHON.exists():
        pytest.fail(f"{MCP1_PYTHON} is missing: run `make test` (it installs mcp 1.x)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's mcp_sync, whatever the venv has
    run = subprocess.run(
        [str(MCP1_PYTHON), str(SCRIPT), *everything_cmd],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, f"{SCRIPT.name} failed:\n{run.stderr[-3000:]}"
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["mcp"].startswith("1."), f"mcp1-venv has mcp {report['mcp']}, not 1.x"
    assert report["sdk_tool_types"] == ["mcp.types.Tool"]
    assert report["tools_round_trip"] and report["result_round_trip"]
    assert report["structured_round_trip"]
    assert report["result_type"] == "CallToolResult"
    assert report["declared"] == {
        "name": "get-sum",
        "raw_had_schema_key": True,
        "description": True,
        "properties": ["a", "b"],
    }
    assert report["adapted_call"] == {
        "type": "CallToolResult",
        "is_sdk": True,
        "text": "The sum of 4 and 5 is 9.",
    }
