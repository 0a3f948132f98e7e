"""docs/api.md documents every public name of ``mcp_sync`` (everything in ``mcp_sync.__all__``).

api.md's ``::: path`` lines are mkdocstrings directives: a class or function documents itself,
a module its ``members: [...]`` when given, else every name in its ``__all__``. A public name
is documented when the object it names is one of those (so a name may be shown where it is
defined, under the path a reader imports it from, or both).
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path
from typing import Any

import mcp_sync

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"
DIRECTIVE = re.compile(r"^::: (?P<path>\S+)\n(?P<options>(?: {4}.*\n)*)", re.MULTILINE)


def _resolve(path: str) -> Any:
    parts = path.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            found = getattr(found, attribute)
        return found
    raise AssertionError(f"api.md names {path}, which does not exist")


def documented_objects(text: str) -> list[Any]:
    shown: list[Any] = []
    for match in DIRECTIVE.finditer(text):
        target = _resolve(match["path"])
        members = re.search(r"members: \[(.*?)\]", match["options"])
        if members:
            shown += [getattr(target, name.strip()) for name in members[1].split(",")]
        elif isinstance(target, types.ModuleType) and hasattr(target, "__all__"):
            shown += [getattr(target, name) for name in target.__all__]
        else:
            shown.append(target)
    return shown


def test_every_public_name_is_in_the_api_reference():
    shown = documented_objects(API.read_text(encoding="utf-8"))
    missing = [
        name
        for name in mcp_sync.__all__
        if not any(getattr(mcp_sync, name) is obj for obj in shown)
    ]
    assert missing == []


def test_the_check_sees_a_missing_name():
    shown = documented_objects(
        "::: mcp_sync.connect\n\n::: mcp_sync.errors\n    options:\n      members: [McpError]\n"
    )
    assert shown == [mcp_sync.connect, mcp_sync.McpError]
