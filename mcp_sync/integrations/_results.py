"""What the framework integrations share about results: a tool's result as LLM content.

Each framework module maps these plain items to its own block types, so a tool result is
read one way everywhere (:func:`mcp_sync.to_llm_content`: text, images, embedded resources,
placeholders for what a model cannot take). Which tools a model sees, and how they are called,
is :mod:`mcp_sync.integrations._adapter`.

**One half of a result (SEP-2200).** A result with both ``content`` and ``structuredContent``
sends the model its ``content`` (the server wrote that for a model; the structured half may be
a large payload for a UI), and the structured content, as JSON, only when there is no content.
``prefer="structured"`` sends the structured content whenever there is some. The whole result
stays available to code (LangChain's artifact, LlamaIndex's ``raw_output``).
"""

from __future__ import annotations

from typing import Any

from ..llm import ResultPreference, to_llm_content
from ..protocol.types import CallToolResult

__all__ = ["ResultPreference", "result_items"]


def result_items(
    result: CallToolResult, prefer: ResultPreference = "content"
) -> list[dict[str, Any]]:
    """The result as ``{"type": "text", "text"}`` and ``{"type": "image", "data",
    "mimeType"}`` items: its ``content``, or its structured content (see the module's
    SEP-2200 rule)."""
    return to_llm_content(result, prefer=prefer)
