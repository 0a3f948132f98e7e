"""docs/notebooks/*.ipynb run top to bottom in a real Jupyter kernel and show what they say."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebooks" / "quickstart.ipynb"

pytestmark = pytest.mark.timeout(120)


def outputs(cell) -> dict[str, str]:
    found: dict[str, str] = {}
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            found["stream"] = found.get("stream", "") + output["text"]
        for mime, value in output.get("data", {}).items():
            found[mime] = value
    return found


def test_quickstart_notebook_runs_and_renders(tmp_path, monkeypatch):
    shutil.copy(ROOT / "tests" / "servers" / "sdk_server.py", tmp_path / "server.py")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{__import__('os').environ['PATH']}")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert not [o for c in cells for o in c.outputs if o["output_type"] == "error"]
    connect, tools, call, temperature, prompt, resources, slow, close = (outputs(c) for c in cells)
    assert connect["text/plain"] == "'sdk-fixture'"
    assert re.search(r"<caption>\d+ tools</caption>", tools["text/html"])
    assert "<code>a</code>: <i>integer</i> <b>(required)</b>" in tools["text/html"]
    assert "structured content" in call["text/html"] and "&quot;Paris&quot;" in call["text/html"]
    assert temperature["text/plain"] == "21.5"
    assert "Please review this python code" in prompt["text/html"]
    assert "<code>config://app</code>" in resources["text/html"]
    assert slow["stream"] == "1/3\n2/3\n3/3\n" and "done after 3 steps" in slow["text/html"]
    assert close["text/plain"] == "'closed'"
