"""The hook through which wire types are presented, filled in from outside ``protocol/``.

A ``Tool`` renders as a table in Jupyter and converts to OpenAI's and Anthropic's tool
format; a ``CallToolResult`` becomes LLM message content. That code lives in
:mod:`mcp_sync._repr` and :mod:`mcp_sync.llm`, which import the types; the types only call
:data:`presentation`, which those modules fill in when they are imported (``import mcp_sync``
imports both, before any type can be used). So ``protocol/`` stays data and rules, with no
import of the presentation layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Displayable", "Presentation", "presentation"]


def _missing(what: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{what} is not registered: import mcp_sync first")

    return fail


class Presentation:
    """The renderers the wire types delegate to (one instance, :data:`presentation`)."""

    def __init__(self) -> None:
        #: ``html(value)``: Jupyter HTML for a type, or None for the default repr.
        self.html: Callable[[Any], str | None] = lambda value: None
        #: ``markdown(value)``: the Markdown for a type, or None.
        self.markdown: Callable[[Any], str | None] = lambda value: None
        #: ``llm_content(result, max_text_bytes=...)``: see ``mcp_sync.llm.to_llm_content``.
        self.llm_content: Callable[..., list[dict[str, Any]]] = _missing("llm_content")
        #: ``openai_tool(tool, style=...)``: see ``mcp_sync.llm.openai_tool``.
        self.openai_tool: Callable[..., dict[str, Any]] = _missing("openai_tool")
        #: ``anthropic_tool(tool)``: see ``mcp_sync.llm.anthropic_tool``.
        self.anthropic_tool: Callable[..., dict[str, Any]] = _missing("anthropic_tool")


#: Filled in by :mod:`mcp_sync._repr` (html, markdown) and :mod:`mcp_sync.llm` (the rest).
presentation = Presentation()


class Displayable:
    """Rich display in IPython / Jupyter through :data:`presentation`."""

    def _repr_html_(self) -> str | None:
        return presentation.html(self)

    def _repr_markdown_(self) -> str | None:
        return presentation.markdown(self)
