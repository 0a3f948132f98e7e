"""The public surface: the wire types' home and their old top-level spellings (docs/api.md
argues the list)."""

from __future__ import annotations

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
