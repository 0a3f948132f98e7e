"""The test suite on every supported Python this machine has (``pip install nox``, or the dev
extra).

    nox                                   # each interpreter found: the portable part
    nox -s tests-3.10                     # one interpreter
    nox -s tests-3.13 -- tests/transports # pytest arguments after --
    nox -s full-3.11                      # the whole suite, docs pages included

The portable part is the suite less the docs pages, the official conformance suite and a few
long runs of peers (those exercise Node, mkdocs, Ray's own venv and Redis, not the Python that
runs mcp_sync; ``make test`` runs them on the default Python). Peers that need a newer Python
than the one under test (fastmcp 4.2.3 needs 3.11) are not installed there (environment
markers in pyproject.toml) and their tests skip, saying why. The Node peers come from
``make peers``. Like ``make test``, a session runs the suite in parallel, then the tests
marked ``alone`` one at a time.

Interpreters are looked up as ``python3.X`` on PATH and, where pyenv is installed, under
``$(pyenv root)/versions``; nox skips a session whose interpreter is missing and says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
#: Left out of the portable part: they test Node's conformance suite and the docs site, or they
#: are long runs of peers with an interpreter of their own or none of ours to test (Ray's venv,
#: the Redis fleet's chaos run, the restart soaks, Dask's 10,000 rows): ``make test`` runs them
#: once, on 3.11.
NOT_PORTABLE = [
    "tests/docs",
    "tests/conformance",
    "tests/test_bench_smoke.py",
    "tests/services/test_ray.py",
    "tests/services/test_dask.py",
    # CrewAI's own venv (tests/peers/crewai-venv): it tests CrewAI, not the interpreter
    "tests/integrations/test_crewai_tools.py",
    "tests/oauth/test_oauth_fleet_chaos.py",
    "tests/reliability/test_lattice_soak.py",
]

nox.options.sessions = ["tests"]
nox.options.error_on_missing_interpreters = False


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return None
    done = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.name))


def _put_pyenv_pythons_on_path() -> None:
    """pyenv's shims run only the selected versions: put each version's own bin first."""
    root = _pyenv_root()
    if root is None:
        return
    found: list[str] = []
    for python in PYTHONS:
        on_path = shutil.which(f"python{python}")
        if on_path and not Path(on_path).is_relative_to(root / "shims"):
            continue  # a real interpreter (not a pyenv shim, which may refuse to run it)
        candidates = sorted(
            (
                p
                for p in (root / "versions").glob(f"{python}.*")
                if re.fullmatch(rf"{re.escape(python)}\.\d+", p.name)
                and (p / "bin" / f"python{python}").exists()
            ),
            key=_version_key,
        )
        if candidates:
            found.append(str(candidates[-1] / "bin"))
    if found:
        os.environ["PATH"] = os.pathsep.join([*found, os.environ.get("PATH", "")])


_put_pyenv_pythons_on_path()


#: What the tests import: the test extra and the optional integrations they exercise.
TEST_EXTRAS = "test,validation,oauth-jwt,redis,skills,mcp,tracing,langchain,smolagents,llama-index"


def _install(session: nox.Session, extras: str) -> None:
    session.install("-e", f".[{extras}]")
    session.run("make", "-s", "peers", external=True)


#: As in ``make test``: in parallel, then the tests marked ``alone`` one at a time.
WORKERS = str(2 * (os.cpu_count() or 1))
PARALLEL = ["-n", WORKERS, "--dist", "loadscope", "-m", "not alone"]


def _run_suite(session: nox.Session, left_out: list[str]) -> None:
    ignores = [f"--ignore={path}" for path in left_out]
    session.run("pytest", "-p", "no:cacheprovider", *PARALLEL, "tests", *ignores)
    alone = [  # (only the modules that have such tests are collected for the second run)
        str(path)
        for path in sorted(Path("tests").rglob("test_*.py"))
        if "peers" not in path.parts
        and not any(path.is_relative_to(ignored) for ignored in left_out)
        and "mark.alone" in path.read_text(encoding="utf-8")
    ]
    if alone:
        session.run("pytest", "-p", "no:cacheprovider", "-m", "alone", *alone)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The portable part of the suite (or the pytest arguments given after --)."""
    _install(session, TEST_EXTRAS)
    if session.posargs:
        session.run("pytest", "-p", "no:cacheprovider", *session.posargs)
        return
    _run_suite(session, NOT_PORTABLE)


@nox.session(python=PYTHONS)
def full(session: nox.Session) -> None:
    """The whole suite, docs pages and conformance included."""
    _install(session, f"{TEST_EXTRAS},docs")
    if session.posargs:
        session.run("pytest", "-p", "no:cacheprovider", *session.posargs)
        return
    _run_suite(session, [])
