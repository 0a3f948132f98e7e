"""Statements in the docs' prose that no code block shows, checked against what the code does."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.protocol import versions

ROOT = Path(__file__).resolve().parents[2]
TIME = str(Path(sys.executable).parent / "mcp-server-time")

pytestmark = pytest.mark.timeout(60)


def test_client_page_says_which_version_connect_offers_first():
    text = (ROOT / "docs" / "client.md").read_text(encoding="utf-8")
    paragraph = text[text.index("`connect()` ") :].split("\n\n", 1)[0]
    named = re.findall(r"\d{4}-\d\d-\d\d", paragraph)
    assert named[0] == versions.STATELESS_VERSIONS[0], paragraph
    assert named[1] == versions.LATEST_HANDSHAKE, paragraph
    # mcp-server-time speaks both eras: the first version offered is the one agreed on
    with mcp_sync.connect([TIME], request_timeout=30) as client:
        assert client.protocol_version == named[0]
    with mcp_sync.connect([TIME], request_timeout=30, protocol="handshake") as client:
        assert client.protocol_version == named[1]


def test_readme_install_from_a_checkout_builds_a_working_wheel(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "From a checkout of this repository: `pip install .`" in readme
    build = re.search(
        r"`pip wheel --no-deps -w dist \.`, then `pip install (dist/\S+\.whl)`", readme
    )
    assert build is not None, "the README says how to build and install a wheel"
    # the README's command, on a copy of the checkout (a build leaves files behind)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, checkout / name)
    for name in ("mcp_sync", "LICENSES"):
        shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            "dist",
            ".",
        ],
        cwd=checkout,
        check=True,
        timeout=120,
    )
    wheels = list(checkout.glob(build.group(1)))
    assert len(wheels) == 1, wheels
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheels[0]),
        ],
        check=True,
        timeout=120,
    )
    assert (target / "mcp_sync" / "py.typed").exists()
    assert (target / "bin" / "mcp-sync").exists()
    shown = subprocess.run(
        [sys.executable, "-c", "import mcp_sync; print(mcp_sync.__version__, mcp_sync.__file__)"],
        env={**os.environ, "PYTHONPATH": str(target)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.stdout.split() == [mcp_sync.__version__, str(target / "mcp_sync" / "__init__.py")]
