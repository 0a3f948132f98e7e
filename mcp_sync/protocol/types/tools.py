"""Tools: listing them, calling them, and the result of a call."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from ._base import McpModel, MetaModel
from ._presentation import Displayable, presentation
from .common import CacheableResult, InputResponseRequestParams, PaginatedResult, Result
from .content import ContentBlock, Icon, TextContent
from .tasks import TaskMetadata

__all__ = [
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
]


class ToolAnnotations(McpModel):
    """Hints about a tool's behaviour (2025-03-26). Untrusted unless the server is trusted."""

    title: str | None = None
    read_only_hint: StrictBool | None = None
    destructive_hint: StrictBool | None = None
    idempotent_hint: StrictBool | None = None
    open_world_hint: StrictBool | None = None


class ToolExecution(McpModel):
    """How a tool may be run (2025-11-25): ``task_support`` is ``"forbidden"`` (the default),
    ``"optional"`` or ``"required"``."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


def _object_schema() -> dict[str, Any]:
    return {"type": "object"}


class Tool(MetaModel, Displayable):
    """A tool the server offers. ``input_schema`` is a JSON Schema object, passed on untouched."""

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=_object_schema)
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    execution: ToolExecution | None = None

    _always_sent = frozenset({"input_schema"})

    @property
    def display_name(self) -> str:
        """The name to show people: ``title``, else ``annotations.title``, else ``name``."""
        if self.title:
            return self.title
        if self.annotations is not None and self.annotations.title:
            return self.annotations.title
        return self.name

    def to_openai(self, *, style: Literal["chat", "responses"] = "chat") -> dict[str, Any]:
        """This tool for OpenAI's ``tools=[...]``; see :func:`mcp_sync.llm.openai_tool`."""
        return presentation.openai_tool(self, style=style)

    def to_anthropic(self) -> dict[str, Any]:
        """This tool for Anthropic's ``tools=[...]``; see :func:`mcp_sync.llm.anthropic_tool`."""
        return presentation.anthropic_tool(self)


class ListToolsResult(PaginatedResult, CacheableResult):
    tools: list[Tool] = Field(default_factory=list)

    _always_sent = frozenset({"tools"})


class CallToolRequestParams(InputResponseRequestParams):
    name: str
    arguments: dict[str, Any] | None = None
    #: Run the call as a task (2025-11-25; only if the server and the tool allow it).
    task: TaskMetadata | None = None


class CallToolResult(Result, Displayable):
    """The result of a tool call. A failed tool is ``is_error=True``, not an exception.

    ``content`` is ``[]`` when a server leaves it out; ``structured_content`` is the parsed
    JSON value (an object until 2025-11-25, any JSON value from 2026-07-28 on), or None.
    """

    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: StrictBool = False

    _always_sent = frozenset({"content"})

    @property
    def text(self) -> str:
        """The text of all text blocks, joined with newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))

    def to_llm_content(self, *, max_text_bytes: int | None = None) -> list[dict[str, Any]]:
        """This result as LLM message content; see :func:`mcp_sync.llm.to_llm_content`."""
        return presentation.llm_content(self, max_text_bytes=max_text_bytes)
