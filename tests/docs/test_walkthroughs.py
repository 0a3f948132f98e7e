"""docs/contributing.md's walk-throughs work as written: every step it shows (a made-up
``tools/describe`` method and ``log_requests=`` option) is applied to a copy of the package,
as a newcomer would, and the copy must then be clean under ``ruff format``, ``ruff check`` and
``mypy --strict`` (one run for both walk-throughs), and pass the tests that check a method's
row and an option's places. A user's code calling the new method and passing the new option
is type-checked with it: the result is the row's model, not ``Any``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.docs_runner import Block, parse

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "contributing.md"
BIN = Path(sys.executable).parent

# mypy --strict over the whole package, from an empty cache: about a minute of CPU.
pytestmark = pytest.mark.timeout(900)

#: A user's code, checked with the copy: what the walk-throughs promise a user gets.
USER_CODE = """
from __future__ import annotations

import mcp_sync
from mcp_sync.types import DescribeToolResult


def described(client: mcp_sync.Client) -> str:
    result: DescribeToolResult = client.describe_tool("add", timeout=5)
    return result.tool.name


def connected(url: str) -> bool:
    client = mcp_sync.connect(url, log_requests=True, request_timeout=5)
    flag: bool = client.log_requests
    client.log_requests = False
    return flag
"""


def _steps() -> list[Block]:
    return [block for block in parse(GUIDE).blocks if block.kind == "step"]


def apply(root: Path, step: Block) -> None:
    """Insert the step's code before or after the one line of its file that starts with its
    anchor (leading spaces aside): the guide must name a line a reader can find."""
    assert step.file is not None
    path = root / step.file
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines) if line.strip().startswith(step.anchor)]
    assert len(found) == 1, (
        f"contributing.md:{step.line}: {step.file} has {len(found)} lines starting with "
        f"{step.anchor!r}, not one"
    )
    at = found[0] + (1 if step.where == "after" else 0)
    lines[at:at] = step.code.splitlines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=840, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"


def test_the_guide_shows_every_kind_of_step():
    files = {step.file for step in _steps()}
    assert {
        "mcp_sync/protocol/methods.py",  # the row
        "mcp_sync/client.py",  # the facade method, the option's keyword
        "mcp_sync/_connection/options.py",  # the option's declaration and field
    } <= files


def test_the_walkthroughs_work_as_written(tmp_path):
    copy = tmp_path / "checkout"
    copy.mkdir()
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "mcp_sync", copy / "mcp_sync", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")  # ruff's, mypy's, pytest's
    for test in ("tests/test_options.py", "tests/protocol/test_methods.py"):
        (copy / test).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / test, copy / test)
    for step in _steps():
        apply(copy, step)
    (copy / "user_code.py").write_text(textwrap.dedent(USER_CODE).lstrip(), encoding="utf-8")

    env = {**os.environ, "PYTHONPATH": str(copy)}
    _run([str(BIN / "ruff"), "format", "mcp_sync", "user_code.py"], copy, env)
    _run([str(BIN / "ruff"), "check", "mcp_sync", "user_code.py"], copy, env)
    cache = str(tmp_path / "mypy-cache")
    _run([str(BIN / "mypy"), "--cache-dir", cache, "mcp_sync", "user_code.py"], copy, env)
    # the checks of a method's row and an option's places, against the copy
    pytest_args = ["-p", "no:cacheprovider", "-q", "tests/test_options.py"]
    _run(
        [sys.executable, "-m", "pytest", *pytest_args, "tests/protocol/test_methods.py"], copy, env
    )
