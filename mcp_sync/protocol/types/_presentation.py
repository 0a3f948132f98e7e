"""The hook through which wire types are presented, resolved from outside ``protocol/``.

A ``Tool`` renders as a table in Jupyter and converts to OpenAI's and Anthropic's tool
format; a ``CallToolResult`` becomes LLM message content. That code lives in
:mod:`mcp_sync._presentation.repr` and :mod:`mcp_sync.llm`, which import the types; the types
only call :data:`presentation`, which looks each renderer up by its module's name on first
use. So
``protocol/`` stays data and rules, with no import of the presentation layer, and importing
anything fills in nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

__all__ = ["Displayable", "Presentation", "presentation"]


#: Each renderer by name: (module, function), imported on first use.
_RENDERERS = {
    "html": ("mcp_sync._presentation.repr", "html_for"),
    "markdown": ("mcp_sync._presentation.repr", "markdown_for"),
    "llm_content": ("mcp_sync.llm", "to_llm_content"),
    "openai_tool": ("mcp_sync.llm", "openai_tool"),
    "anthropic_tool": ("mcp_sync.llm", "anthropic_tool"),
}


class Presentation:
    """The renderers the wire types delegate to (one instance, :data:`presentation`).

    ``html(value)`` and ``markdown(value)`` give Jupyter's HTML or Markdown (None: the default
    repr); ``llm_content``, ``openai_tool`` and ``anthropic_tool`` are ``mcp_sync.llm``'s.
    Setting an attribute replaces that renderer.
    """

    html: Callable[[Any], str | None]
    markdown: Callable[[Any], str | None]
    llm_content: Callable[..., list[dict[str, Any]]]
    openai_tool: Callable[..., dict[str, Any]]
    anthropic_tool: Callable[..., dict[str, Any]]

    def __getattr__(self, name: str) -> Any:
        # Only for an attribute not set yet: the first use of a renderer imports it.
        try:
            module, function = _RENDERERS[name]
        except KeyError:
            raise AttributeError(name) from None
        render = getattr(import_module(module), function)
        setattr(self, name, render)
        return render


#: Resolves :mod:`mcp_sync._presentation.repr` (html, markdown) and :mod:`mcp_sync.llm` (the
#: rest) on use.
presentation = Presentation()


class Displayable:
    """Rich display in IPython / Jupyter through :data:`presentation`."""

    def _repr_html_(self) -> str | None:
        return presentation.html(self)

    def _repr_markdown_(self) -> str | None:
        return presentation.markdown(self)
