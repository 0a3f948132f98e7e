"""Argument completion (``completion/complete``) for prompts and resource templates."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool

from ._base import McpModel
from .common import RequestParams, Result

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceTemplateReference",
]


class PromptReference(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class ResourceTemplateReference(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["ref/resource"] = "ref/resource"
    uri: str


CompletionReference = Annotated[
    PromptReference | ResourceTemplateReference, Field(discriminator="type")
]


class CompletionArgument(McpModel):
    name: str
    value: str


class CompletionContext(McpModel):
    """Values of arguments already filled in (2025-06-18)."""

    arguments: dict[str, str] | None = None


class CompleteRequestParams(RequestParams):
    ref: CompletionReference
    argument: CompletionArgument
    context: CompletionContext | None = None


class Completion(McpModel):
    """At most 100 suggested values; ``total`` and ``has_more`` tell whether there are more."""

    values: list[str] = Field(default_factory=list)
    total: int | None = None
    has_more: StrictBool | None = None

    _always_sent = frozenset({"values"})


class CompleteResult(Result):
    completion: Completion = Field(default_factory=Completion)

    _always_sent = frozenset({"completion"})
