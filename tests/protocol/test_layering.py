"""``protocol/`` is data and rules: it imports nothing of mcp_sync outside itself but the
errors, even lazily inside a function. Presentation (Jupyter display, LLM formats) reaches the
wire types through ``protocol.types._presentation``, filled in by ``mcp_sync._repr`` and
``mcp_sync.llm``."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_sync"


def _imports(path: Path) -> set[str]:
    """The mcp_sync modules ``path`` imports, anywhere in it, as dotted names."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("mcp_sync")}


def test_protocol_imports_only_itself_and_the_errors():
    strays = {}
    for path in sorted((PACKAGE / "protocol").rglob("*.py")):
        outside = {
            name for name in _imports(path)
            if not name.startswith(("mcp_sync.protocol", "mcp_sync.errors"))
            and name != "mcp_sync"
        }
        if outside:
            strays[str(path.relative_to(PACKAGE))] = sorted(outside)
    assert strays == {}


def test_types_present_themselves_when_only_the_types_are_imported():
    script = textwrap.dedent("""
        from mcp_sync.protocol.types import CallToolResult, TextContent, Tool

        tool = Tool(name="add", input_schema={"type": "object", "properties": {"a": {"type": "number"}}})
        result = CallToolResult(content=[TextContent(text="5")])
        assert "<table" in tool._repr_html_() and "add" in tool._repr_markdown_()
        assert tool.to_openai()["function"]["name"] == "add"
        assert tool.to_anthropic()["name"] == "add"
        assert result.to_llm_content() == [{"type": "text", "text": "5"}]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
