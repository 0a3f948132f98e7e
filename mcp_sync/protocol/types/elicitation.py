"""Elicitation: the server asks the user for input (``elicitation/create``, 2025-06-18).

Form mode sends a flat JSON Schema (``requested_schema``, kept as a plain dict so that every
keyword survives); URL mode (2025-11-25) asks the user to open a URL. A request without
``mode`` is a form request. The ``*Schema`` models describe the property schemas a form may
use; :func:`parse_primitive_schema` reads one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from ._base import McpModel, Number
from .common import NotificationParams, RequestParams, Result
from .tasks import TaskMetadata

__all__ = [
    "BooleanSchema",
    "ElicitAction",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCompleteNotificationParams",
    "EnumOption",
    "LegacyTitledEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledMultiSelectItems",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectItems",
    "UntitledSingleSelectEnumSchema",
    "parse_elicit_params",
    "parse_primitive_schema",
]

ElicitAction = Literal["accept", "decline", "cancel"]


class ElicitRequestFormParams(RequestParams):
    """Ask for structured input through a form. ``mode`` may be absent on the wire (= form)."""

    mode: Literal["form"] = "form"
    message: str
    requested_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    task: TaskMetadata | None = None

    _always_sent = frozenset({"requested_schema"})


class ElicitRequestURLParams(RequestParams):
    """Ask the user to open ``url`` (2025-11-25). Show the full URL and get consent first."""

    mode: Literal["url"] = "url"
    message: str
    url: str
    #: Required in 2025-11-25 (matches ``notifications/elicitation/complete``); absent in 2026.
    elicitation_id: str | None = None
    task: TaskMetadata | None = None

    _always_sent = frozenset({"mode"})


ElicitRequestParams = ElicitRequestFormParams | ElicitRequestURLParams


def parse_elicit_params(obj: Any) -> ElicitRequestParams:
    """Parse ``elicitation/create`` params: ``mode: "url"`` gives URL params, a missing mode
    or ``"form"`` gives form params; any other mode raises ``ValueError``."""
    if not isinstance(obj, dict):
        raise ValueError("elicitation params must be an object")
    mode = obj.get("mode", "form")
    if mode == "url":
        return ElicitRequestURLParams.from_wire(obj)
    if mode == "form":
        return ElicitRequestFormParams.from_wire(obj)
    raise ValueError(f"unknown elicitation mode: {mode!r}")


class ElicitResult(Result):
    """The user's answer. ``content`` only for an accepted form."""

    action: ElicitAction
    content: dict[str, Any] | None = None


class ElicitationCompleteNotificationParams(NotificationParams):
    """A URL-mode elicitation finished (2025-11-25)."""

    elicitation_id: str


# -- form property schemas ----------------------------------------------------------------


class StringSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    #: ``"email"``, ``"uri"``, ``"date"`` or ``"date-time"``.
    format: str | None = None
    default: str | None = None


class NumberSchema(McpModel):
    type: Literal["number", "integer"]
    title: str | None = None
    description: str | None = None
    minimum: Number | None = None
    maximum: Number | None = None
    default: Number | None = None


class BooleanSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["boolean"] = "boolean"
    title: str | None = None
    description: str | None = None
    default: StrictBool | None = None


class EnumOption(McpModel):
    """One choice of a titled enum: the value sent (``const``) and the label shown."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["string"] = "string"
    title: str | None = None
    description: str | None = None
    one_of: list[EnumOption]
    default: str | None = None


class LegacyTitledEnumSchema(UntitledSingleSelectEnumSchema):
    """Deprecated form of a titled enum: labels in ``enum_names``."""

    enum_names: list[str] | None = None


class UntitledMultiSelectItems(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["string"] = "string"
    enum: list[str]


class TitledMultiSelectItems(McpModel):
    any_of: list[EnumOption]


class UntitledMultiSelectEnumSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: UntitledMultiSelectItems
    default: list[str] | None = None


class TitledMultiSelectEnumSchema(McpModel):
    _always_sent = frozenset({"type"})
    type: Literal["array"] = "array"
    title: str | None = None
    description: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    items: TitledMultiSelectItems
    default: list[str] | None = None


PrimitiveSchemaDefinition = (
    StringSchema
    | NumberSchema
    | BooleanSchema
    | UntitledSingleSelectEnumSchema
    | TitledSingleSelectEnumSchema
    | LegacyTitledEnumSchema
    | UntitledMultiSelectEnumSchema
    | TitledMultiSelectEnumSchema
)


def parse_primitive_schema(obj: Any) -> PrimitiveSchemaDefinition:
    """Read one property schema of a form by its shape; raises ``ValueError`` if unknown."""
    if not isinstance(obj, dict):
        raise ValueError("a property schema must be an object")
    kind = obj.get("type")
    if kind == "string":
        if "oneOf" in obj:
            return TitledSingleSelectEnumSchema.from_wire(obj)
        if "enumNames" in obj:
            return LegacyTitledEnumSchema.from_wire(obj)
        if "enum" in obj:
            return UntitledSingleSelectEnumSchema.from_wire(obj)
        return StringSchema.from_wire(obj)
    if kind in ("number", "integer"):
        return NumberSchema.from_wire(obj)
    if kind == "boolean":
        return BooleanSchema.from_wire(obj)
    if kind == "array":
        items = obj.get("items")
        if isinstance(items, dict) and "anyOf" in items:
            return TitledMultiSelectEnumSchema.from_wire(obj)
        return UntitledMultiSelectEnumSchema.from_wire(obj)
    raise ValueError(f"unsupported property schema type: {kind!r}")
