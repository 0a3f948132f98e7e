"""Sampling: the server asks the client's LLM for a completion (``sampling/createMessage``).

From 2025-11-25 a request may offer tools; message content may then be a list of blocks,
including :class:`~.content.ToolUseContent` and :class:`~.content.ToolResultContent`.
"""

from __future__ import annotations

from typing import Any, Literal

from ._base import McpModel, MetaModel, Number
from .common import RequestParams, Result
from .content import Role, SamplingContentBlock, TextContent
from .tasks import TaskMetadata
from .tools import Tool

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingContent",
    "SamplingMessage",
    "StopReason",
    "ToolChoice",
]

#: One content block or, from 2025-11-25, a list of them.
SamplingContent = SamplingContentBlock | list[SamplingContentBlock]
IncludeContext = Literal["none", "thisServer", "allServers"]
#: ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``, ``"toolUse"`` or a provider's own value.
StopReason = str


class ModelHint(McpModel):
    """A (sub)string of a model name the server would like, e.g. ``"claude-3-sonnet"``."""

    name: str | None = None


class ModelPreferences(McpModel):
    """The server's model wishes; priorities are 0..1."""

    hints: list[ModelHint] | None = None
    cost_priority: Number | None = None
    speed_priority: Number | None = None
    intelligence_priority: Number | None = None


class SamplingMessage(MetaModel):
    role: Role
    content: SamplingContent

    @property
    def blocks(self) -> list[SamplingContentBlock]:
        """``content`` as a list, whether it was sent as one block or as a list."""
        return list(self.content) if isinstance(self.content, list) else [self.content]


class ToolChoice(McpModel):
    """How the model may use the offered tools (2025-11-25)."""

    mode: Literal["auto", "required", "none"] | None = None


class CreateMessageRequestParams(RequestParams):
    messages: list[SamplingMessage]
    max_tokens: int
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    #: Soft-deprecated in 2025-11-25; only honoured if the client declared ``sampling.context``.
    include_context: IncludeContext | None = None
    temperature: Number | None = None
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    #: Only allowed if the client declared ``sampling.tools`` (2025-11-25).
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    #: Run the request as a task (2025-11-25).
    task: TaskMetadata | None = None


class CreateMessageResult(Result):
    """The client's answer to ``sampling/createMessage``: the LLM's message and model name."""

    role: Role = "assistant"
    content: SamplingContent
    model: str
    stop_reason: StopReason | None = None

    _always_sent = frozenset({"role"})

    @property
    def blocks(self) -> list[SamplingContentBlock]:
        """``content`` as a list, whether it was sent as one block or as a list."""
        return list(self.content) if isinstance(self.content, list) else [self.content]

    @property
    def text(self) -> str:
        """The text of all text blocks, joined with newlines."""
        return "\n".join(b.text for b in self.blocks if isinstance(b, TextContent))
