"""The public surface: the wire types' home, their old top-level spellings, and that
``import mcp_sync`` does nothing but import (docs/api.md argues the list)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import mcp_sync
import mcp_sync.types


def test_the_wire_types_live_in_mcp_sync_types():
    assert "Tool" not in mcp_sync.__all__ and "Tool" in mcp_sync.types.__all__
    tool = mcp_sync.types.Tool.from_wire({"name": "add", "inputSchema": {"type": "object"}})
    assert tool.to_wire()["name"] == "add"


def test_an_old_top_level_spelling_resolves_with_a_warning_naming_the_new_place():
    with pytest.warns(DeprecationWarning, match=r"mcp_sync\.types\.CallToolResult.*0\.2\.0"):
        from mcp_sync import CallToolResult
    assert CallToolResult is mcp_sync.types.CallToolResult
    with pytest.warns(DeprecationWarning, match=r"mcp_sync\.types\.Tool\b"):
        assert mcp_sync.Tool is mcp_sync.types.Tool


def test_an_everyday_name_or_a_typo_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mcp_sync.Client is not None and mcp_sync.connect is not None
        with pytest.raises(AttributeError, match="Tol"):
            mcp_sync.Tol  # noqa: B018


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_in_a_running_ipython_registers_nothing_until_a_client_is_made():
    """Before, ``import mcp_sync`` put a ``list`` formatter into the running IPython shell
    (an import with a side effect on the user's session). Now the first ``Client`` does, so a
    notebook still shows ``client.list_tools()`` as a table without calling anything."""
    out = _run("""
        from IPython.core.interactiveshell import InteractiveShell

        shell = InteractiveShell.instance()
        html = shell.display_formatter.formatters["text/html"]
        import mcp_sync
        from mcp_sync.types import Tool

        print(list in html.type_printers)
        mcp_sync.Client("probe")
        print(list in html.type_printers)
        data, _ = shell.display_formatter.format([Tool(name="add")])
        print("<caption>1 tool</caption>" in data["text/html"])
    """)
    assert out.split() == ["False", "True", "True"]


def test_a_type_renders_though_nothing_filled_the_presentation_hooks_at_import():
    out = _run("""
        from mcp_sync.protocol.types._presentation import presentation
        import mcp_sync

        print("html" in vars(presentation) or "llm_content" in vars(presentation))
        from mcp_sync.types import CallToolResult, TextContent, Tool

        print("<table" in Tool(name="add")._repr_html_())
        print(CallToolResult(content=[TextContent(text="5")]).to_llm_content())
    """)
    assert out.splitlines() == ["False", "True", "[{'type': 'text', 'text': '5'}]"]


def test_every_deprecation_names_the_release_that_removes_it():
    """docs/api.md's "Deprecations" decides: each old spelling warns and goes in 0.2.0. A
    warning raised without naming that release (as every one did before) fails here."""
    import ast
    from pathlib import Path

    from mcp_sync._rules.warn import REMOVED_IN

    silent = []
    for path in sorted(Path(mcp_sync.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn"):
                continue
            text = ast.unparse(node)
            if "DeprecationWarning" in text and not any(
                v in text for v in (REMOVED_IN, "REMOVED_IN")
            ):
                silent.append(f"{path.name}:{node.lineno}")
    assert silent == []


def test_the_old_recovery_keyword_warns_and_still_turns_recovery_on():
    with pytest.warns(DeprecationWarning, match=r"recovery=True.*0\.2\.0"):
        client = mcp_sync.Client(auto_reinitialize=True)
    assert client.recovery is not None
    with pytest.warns(DeprecationWarning, match=r"client\.recovery is not None"):
        assert client.auto_reinitialize is True
    with pytest.warns(DeprecationWarning, match=r"client\.tasks\.get.*0\.2\.0"):
        assert client.get_task == client.tasks.get
