"""Prompts: templates of messages the server offers."""

from __future__ import annotations

from pydantic import Field, StrictBool

from ._base import McpModel, MetaModel
from ._presentation import Displayable
from .common import CacheableResult, InputResponseRequestParams, PaginatedResult, Result
from .content import ContentBlock, Icon, Role

__all__ = [
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(McpModel):
    name: str
    title: str | None = None
    description: str | None = None
    required: StrictBool | None = None


class Prompt(MetaModel, Displayable):
    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None


class ListPromptsResult(PaginatedResult, CacheableResult):
    prompts: list[Prompt] = Field(default_factory=list)

    _always_sent = frozenset({"prompts"})


class GetPromptRequestParams(InputResponseRequestParams):
    name: str
    arguments: dict[str, str] | None = None


class PromptMessage(McpModel):
    role: Role
    content: ContentBlock


class GetPromptResult(Result, Displayable):
    description: str | None = None
    messages: list[PromptMessage] = Field(default_factory=list)

    _always_sent = frozenset({"messages"})
