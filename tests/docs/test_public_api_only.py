"""What stands in for a user uses only mcp_sync's public API: the command line, the conformance
clients, the examples, the docs' code and the notebooks.

Public means: reached through modules none of whose names starts with ``_``, and a name in the
module's ``__all__`` (or, for a module without one, a name not starting with ``_``). Names such
as ``__version__`` and ``_repr_html_`` (underscores at both ends) are protocols, not private.
The command line may import its own modules (``mcp_sync.cli._x``); what it takes from the rest
of mcp_sync must be public, as for any user. Nothing private is allowed here, on purpose.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.docs_runner import parse

ROOT = Path(__file__).resolve().parents[2]
CLI = "mcp_sync.cli"


def _stand_ins() -> Iterator[tuple[str, str, str]]:
    """(where, source, package) for every piece of user-side code."""
    for path in sorted((ROOT / "mcp_sync" / "cli").glob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), CLI
    paths = [
        *sorted((ROOT / "tests" / "conformance").glob("*client.py")),
        *sorted((ROOT / "examples").glob("*.py")),
    ]
    for path in paths:
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), ""
    for path in sorted((ROOT / "docs").rglob("*.md")):
        for block in parse(path).blocks:  # hidden <!-- test --> blocks are the test's, not a user's
            if block.kind == "python" or (
                block.kind == "file" and (block.file or "").endswith(".py")
            ):
                yield f"{path.relative_to(ROOT)}:{block.line}", block.code, ""
    for path in sorted((ROOT / "docs").rglob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, 1):
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
                yield f"{path.relative_to(ROOT)} cell {number}", code, ""


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("_")


def _declared(module: str) -> list[str] | None:
    """The module's ``__all__``; read from its source when it cannot be imported here (an
    integration whose framework lives in a venv of its own, such as CrewAI's)."""
    try:
        return getattr(importlib.import_module(module), "__all__", None)
    except ImportError:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise
        for node in ast.parse(Path(spec.origin).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                return list(ast.literal_eval(node.value))
        return None


def _public_in(module: str, name: str) -> bool:
    if _private(name):
        return False
    if name.startswith("__"):  # __version__
        return True
    declared = _declared(module)
    if declared is None or name in declared:
        return True
    try:  # a public submodule: `from mcp_sync import oauth`
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def private_uses(source: str, package: str) -> list[str]:
    """Each private mcp_sync name ``source`` reaches, as ``line: what``."""
    found: list[str] = []
    tree = ast.parse(source)
    own_modules: set[str] = set()  # names bound by `import x` of a module outside mcp_sync
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "mcp_sync":
                    own_modules.add((alias.asname or alias.name).split(".")[0])
                elif any(_private(part) for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            if module.split(".")[0] != "mcp_sync":
                continue
            if package == CLI and (module == CLI or module.startswith(CLI + ".")):
                continue  # the command line's own modules
            if any(_private(part) for part in module.split(".")):
                found.append(f"{node.lineno}: from {module} import ...")
                continue
            for alias in node.names:
                if alias.name != "*" and not _public_in(module, alias.name):
                    found.append(f"{node.lineno}: from {module} import {alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            root: ast.expr = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (
                root.id in ("self", "cls") or root.id in own_modules
            ):
                continue  # a class's own state, or a private name of another library
            found.append(f"{node.lineno}: .{node.attr}")
    return found


@pytest.mark.parametrize(
    "where,source,package", [pytest.param(*stand_in, id=stand_in[0]) for stand_in in _stand_ins()]
)
def test_stand_ins_use_only_the_public_api(where, source, package):
    assert private_uses(source, package) == [], where


def test_the_scan_sees_private_names():
    source = """
import mcp_sync._client.targets
from mcp_sync._client.targets import open_client
from mcp_sync.llm import _base64_size
from mcp_sync import transports
from ..llm import _base64_size
import os
client = mcp_sync.connect("x")
client._transport.pid
os._exit(0)
"""
    assert private_uses(source, CLI) == [
        "2: import mcp_sync._client.targets",
        "3: from mcp_sync._client.targets import ...",
        "4: from mcp_sync.llm import _base64_size",
        "6: from mcp_sync.llm import _base64_size",
        "9: ._transport",
    ]


def test_every_kind_of_stand_in_is_scanned():
    where = [w for w, _, _ in _stand_ins()]
    for kind in (
        "mcp_sync/cli/",
        "tests/conformance/client.py",
        "tests/conformance/auth_client.py",
        "examples/",
        "docs/client.md:",
        "docs/notebooks/quickstart.ipynb cell",
    ):
        assert any(w.startswith(kind) for w in where), kind
