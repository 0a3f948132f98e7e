"""What the framework integrations share: a tool's description and its result as LLM content.

Each framework module maps these plain items to its own block types, so a tool result is
read one way everywhere (:func:`mcp_sync.to_llm_content`: text, images, embedded resources,
placeholders for what a model cannot take, structured content as JSON when there is no other
content).
"""

from __future__ import annotations

from typing import Any

from ..client import Client
from ..llm import clean_tool, to_llm_content
from ..protocol.types import CallToolResult, Tool

__all__ = ["clean_tool", "description_of", "result_items", "tools_of"]


def tools_of(client: Client, tools: list[Tool] | None, names: list[str] | None) -> list[Tool]:
    """``tools`` (or every tool the server lists), keeping only ``names`` when given, in
    the server's order; an unknown name raises :class:`KeyError` naming it."""
    listed = client.list_tools() if tools is None else tools
    if names is None:
        return listed
    known = {tool.name for tool in listed}
    missing = [name for name in names if name not in known]
    if missing:
        raise KeyError(f"the server has no tool named {', '.join(map(repr, missing))}")
    return [tool for tool in listed if tool.name in names]


def description_of(tool: Tool) -> str:
    """The tool's description, else its title, else its name (frameworks require one)."""
    return tool.description or tool.title or tool.name


def result_items(result: CallToolResult) -> list[dict[str, Any]]:
    """The result as ``{"type": "text", "text"}`` and ``{"type": "image", "data",
    "mimeType"}`` items."""
    return to_llm_content(result)
