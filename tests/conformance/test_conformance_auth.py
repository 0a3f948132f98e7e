"""The official conformance suite's auth scenarios, run against tests/conformance/auth_client.py.

The scenarios start their own authorization and MCP servers on localhost and judge what the
client did (discovery order, PKCE, resource, scopes, registration, iss checks, DPoP, the
JWT bearer grants, ...). They all run once per module (a few conformance processes, each
running a suite in parallel), then each (run, scenario) pair is one test, judged from the
checks the suite wrote.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conformance.test_conformance import (
    CONFORMANCE,
    NODE_BIN,
    PEERS,
    client_listing,
    run_client,
)

AUTH_CLIENT = Path(__file__).with_name("auth_client.py")

#: Auth scenarios of both 2025-11-25 and 2026-07-28.
AUTH_SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
#: Auth scenarios new in 2026-07-28.
AUTH_2026_SCENARIOS = [
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
#: 2025-03-26 back-compat scenarios (no protected resource metadata).
BACKCOMPAT_SCENARIOS = [
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
]
#: Extension scenarios mcp_sync implements: the client credentials grant (run as they are),
#: and those pinned to each wire version (extensions carry no version: --spec-version V --force).
EXTENSION_SCENARIOS = ["auth/client-credentials-jwt", "auth/client-credentials-basic"]
VERSIONED_EXTENSION_SCENARIOS = [
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
]
#: Extension scenarios mcp_sync does not implement (not run).
NOT_IMPLEMENTED: list[str] = []
#: The 0.1.16 release (npm alias conformance-0116) names enterprise-managed authorization so.
CONFORMANCE_0116 = PEERS / "node_modules" / "conformance-0116" / "dist" / "index.js"
RELEASE_0116_SCENARIOS = ["auth/cross-app-access-complete-flow"]

#: One conformance run per entry (suites run their scenarios in parallel in one process):
#: (name, arguments, the scenarios whose results count). test_conformance.py reads this shape.
RUNS: list[tuple[str, list[str], list[str]]] = [
    ("2025-11-25", ["--suite", "auth", "--spec-version", "2025-11-25"], AUTH_SCENARIOS),
    ("2026-07-28", ["--suite", "auth", "--spec-version", "2026-07-28"], AUTH_SCENARIOS),
    # The draft suite also holds non-auth 2026 scenarios: only the auth ones are judged here.
    ("2026-07-28-new", ["--suite", "draft", "--spec-version", "2026-07-28"], AUTH_2026_SCENARIOS),
    ("2025-03-26", ["--suite", "backcompat"], BACKCOMPAT_SCENARIOS),
    *[(f"extension:{name}", ["--scenario", name], [name]) for name in EXTENSION_SCENARIOS],
    *[
        (
            f"extension-{version}:{name}",
            ["--scenario", name, "--spec-version", version, "--force"],
            [name],
        )
        for version in ("2025-11-25", "2026-07-28")
        for name in VERSIONED_EXTENSION_SCENARIOS
    ],
    *[(f"0.1.16:{name}", ["--scenario", name], [name]) for name in RELEASE_0116_SCENARIOS],
]
#: The conformance entry point of each run (the pinned alpha unless named here).
ENTRY_POINTS = {f"0.1.16:{name}": CONFORMANCE_0116 for name in RELEASE_0116_SCENARIOS}
CASES = [(run, scenario) for run, _, scenarios in RUNS for scenario in scenarios]

_DPOP = [
    "sep-1932-client-token-request-proof",
    "sep-1932-client-dpop-auth-scheme",
    "sep-1932-client-fresh-proof",
]
_ID_JAG = ["complete-flow-token-exchange", "complete-flow-jwt-bearer", "valid-bearer-token"]
#: The checks an extension scenario must report as SUCCESS: a run whose checks were all
#: skipped (the scenario not really exercised) still says "PASSED".
REQUIRED_CHECKS = {
    "auth/dpop": _DPOP,
    "auth/dpop-nonce": [*_DPOP, "sep-1932-client-as-nonce", "sep-1932-client-rs-nonce"],
    "auth/enterprise-managed-authorization": _ID_JAG,
    "auth/cross-app-access-complete-flow": _ID_JAG,
    "auth/wif-jwt-bearer": ["wif-assertion-verified", "valid-bearer-token"],
}


def checks_of(out: Path, scenario: str) -> list[dict]:
    folder, _, name = scenario.rpartition("/")
    runs = sorted((out / folder).glob(f"{name}-20*"))
    assert runs, f"no results for {scenario} in {out}"
    return json.loads((runs[-1] / "checks.json").read_text())


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    if not CONFORMANCE.exists() or not NODE_BIN.exists() or not CONFORMANCE_0116.exists():
        pytest.fail("the conformance suite is not installed: run `make test`")

    # tmp_path_factory is not thread-safe: make every directory here, before the pool starts
    folders = {
        name: tmp_path_factory.mktemp("auth-" + re.sub(r"\W", "-", name)) for name, *_ in RUNS
    }

    def run(item: tuple[str, list[str], list[str]]) -> tuple[Path, str]:
        name, arguments, _ = item
        entry = ENTRY_POINTS.get(name, CONFORMANCE)
        done = run_client(arguments, folders[name], timeout=240, client=AUTH_CLIENT, entry=entry)
        return folders[name], done.stdout + done.stderr

    # two at a time: each conformance process already runs its scenarios in parallel
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcome = dict(zip([name for name, *_ in RUNS], pool.map(run, RUNS), strict=True))
    return outcome


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("run", "scenario"), CASES, ids=[f"{r}:{s}" for r, s in CASES])
def test_auth_scenario_passes(results, run, scenario):
    out, output = results[run]
    checks = checks_of(out, scenario)
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, json.dumps(bad, indent=1)[:4000] + "\n" + output[-2000:]
    assert any(c["status"] == "SUCCESS" for c in checks), output[-4000:]
    passed = {c["id"] for c in checks if c["status"] == "SUCCESS"}
    missing = set(REQUIRED_CHECKS.get(scenario, [])) - passed
    assert not missing, f"{scenario}: never passed {sorted(missing)}\n" + output[-4000:]


@pytest.mark.timeout(60)
def test_every_auth_scenario_of_the_suite_is_accounted_for():
    if not CONFORMANCE.exists() or not NODE_BIN.exists():
        pytest.fail("the conformance suite is not installed: run `make test`")
    suite = set(re.findall(r"- (auth/[\w./-]+)", client_listing()))
    ours = set(
        AUTH_SCENARIOS
        + AUTH_2026_SCENARIOS
        + BACKCOMPAT_SCENARIOS
        + EXTENSION_SCENARIOS
        + VERSIONED_EXTENSION_SCENARIOS
    )
    assert suite - ours - set(NOT_IMPLEMENTED) == set()
    assert ours <= suite
