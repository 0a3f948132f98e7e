"""What the framework integrations share: which tools a model sees, a tool's description, and
its result as LLM content.

Each framework module maps these plain items to its own block types, so a tool result is
read one way everywhere (:func:`mcp_sync.to_llm_content`: text, images, embedded resources,
placeholders for what a model cannot take).

Two rules hold for every framework, decided here once:

- **Visibility.** An MCP Apps tool whose ``_meta.ui.visibility`` leaves out ``"model"`` is
  for the app's UI: it is not made into a framework tool unless ``include_app_only=True``
  (:func:`mcp_sync.llm.model_visible`).
- **One half of a result (SEP-2200).** A result with both ``content`` and
  ``structuredContent`` sends the model its ``content`` (the server wrote that for a model;
  the structured half may be a large payload for a UI), and the structured content, as JSON,
  only when there is no content. ``prefer="structured"`` sends the structured content
  whenever there is some. The whole result stays available to code (LangChain's artifact,
  LlamaIndex's ``raw_output``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..client import Client
from ..group import ClientGroup
from ..llm import ResultPreference, clean_tool, model_visible, to_llm_content
from ..protocol.types import CallToolResult, Tool

__all__ = [
    "ResultPreference",
    "ToolSource",
    "clean_tool",
    "description_of",
    "result_items",
    "tools_of",
]


ToolSource = Client | ClientGroup
"""What the integrations call tools through: a client, or a group of them."""


def tools_of(
    client: ToolSource,
    tools: Sequence[Tool] | None,
    names: Sequence[str] | None,
    *,
    include_app_only: bool = False,
) -> list[Tool]:
    """``tools`` (or every tool the server lists) a model may see, keeping only ``names``
    when given, in the server's order. An unknown name raises :class:`KeyError` naming it;
    so does an app-only tool named without ``include_app_only=True``."""
    listed = client.list_tools() if tools is None else list(tools)
    shown = [tool for tool in listed if include_app_only or model_visible(tool)]
    if names is None:
        return shown
    known = {tool.name for tool in shown}
    hidden = {tool.name for tool in listed} - known
    missing = [name for name in names if name not in known]
    if missing:
        why = [
            f"{n!r}{' (app-only: pass include_app_only=True)' if n in hidden else ''}"
            for n in missing
        ]
        raise KeyError(f"the server has no model-visible tool named {', '.join(why)}")
    return [tool for tool in shown if tool.name in names]


def description_of(tool: Tool) -> str:
    """The tool's description, else its title, else its name (frameworks require one)."""
    return tool.description or tool.title or tool.name


def result_items(
    result: CallToolResult, prefer: ResultPreference = "content"
) -> list[dict[str, Any]]:
    """The result as ``{"type": "text", "text"}`` and ``{"type": "image", "data",
    "mimeType"}`` items: its ``content``, or its structured content (see the module's
    SEP-2200 rule)."""
    return to_llm_content(result, prefer=prefer)
