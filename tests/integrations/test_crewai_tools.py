"""MCP tools as CrewAI tools, run by a CrewAI crew (Crew.kickoff: CrewAI's own agent loop)
with a scripted LLM, against server-everything. CrewAI pins mcp 1.x and an older pydantic,
which the main venv excludes, so the crew, tests/integrations/crewai_agent_client.py, runs
with tests/peers/crewai-venv's Python (`make test` builds it from
tests/peers/crewai-requirements.txt, cached per machine; mcp_sync from this checkout)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import PEERS, ROOT

CREWAI_PYTHON = PEERS.parent / "crewai-venv" / "bin" / "python"
SCRIPT = Path(__file__).with_name("crewai_agent_client.py")

pytestmark = pytest.mark.timeout(180)


def test_a_crew_uses_mcp_tools_through_its_own_loop(everything_cmd):
    if not CREWAI_PYTHON.exists():
        pytest.fail(
            f"{CREWAI_PYTHON} is missing: run `make test` (it builds tests/peers/crewai-venv)"
        )
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),  # this checkout's mcp_sync, whatever the venv has
        # nothing leaves the machine: no telemetry, no trace upload
        "CREWAI_DISABLE_TELEMETRY": "true",
        "CREWAI_TRACING_ENABLED": "false",
        "OTEL_SDK_DISABLED": "true",
    }
    run = subprocess.run(
        [str(CREWAI_PYTHON), str(SCRIPT), *everything_cmd],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=150,
    )
    assert run.returncode == 0, f"{SCRIPT.name} failed:\n{run.stderr[-3000:]}"
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["mcp"].startswith("1."), "CrewAI's venv is meant to hold the mcp it pins"
    # the arguments' schema CrewAI built from the tools' input schemas
    assert report["tools"] == {"get-sum": ["a", "b"], "get-structured-content": ["location"]}
    assert report["answer"] == "5, and mild"
    # CrewAI ran both tools and gave the model their results
    assert report["seen_sum"] and report["seen_structured"]
