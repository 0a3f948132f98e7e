"""The base class of every MCP type, and the wire round-trip rules they share.

Every model keeps what the peer sent: unknown fields are stored under their original wire key
(``extra="allow"``) and written back unchanged, and a field the peer sent as an explicit
``null`` is written back as ``null``. A model built in Python writes only the fields that were
set, plus the few fields listed in ``_always_sent`` (discriminators such as ``"type": "text"``
and required fields that have a lenient default, such as ``CallToolResult.content``).
"""

from __future__ import annotations

import functools
import typing
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from typing_extensions import Self

__all__ = ["JsonObject", "McpModel", "MetaModel", "Number"]

#: A JSON object as ``json.loads`` returns it.
JsonObject = dict[str, Any]
#: A JSON number. Integers stay integers so that ``50`` is not written back as ``50.0``.
Number = int | float


class McpModel(BaseModel):
    """Base of all MCP types: snake_case attributes, camelCase wire keys, unknown fields kept.

    Use :meth:`from_wire` to read a JSON object the peer sent and :meth:`to_wire` to get the
    JSON-ready dict to send. ``X.from_wire(d).to_wire() == d`` for every valid ``d``.
    """

    model_config = ConfigDict(
        extra="allow",
        alias_generator=to_camel,
        populate_by_name=True,
        # Field names such as ``model_preferences`` are MCP's, not pydantic's.
        protected_namespaces=(),
        # Validators are built on a model's first use, not at import: ``import mcp_sync``
        # stays cheap, and a program pays only for the types it meets.
        defer_build=True,
    )

    #: Fields written by :meth:`to_wire` even when they were left at their default.
    _always_sent: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_wire(cls, obj: Any) -> Self:
        """Validate a JSON value received from the peer (raises ``pydantic.ValidationError``)."""
        return cls.model_validate(obj)

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict for this value, with wire (camelCase) keys."""
        # exclude_unset drops defaults; discriminators and required-with-default fields must
        # still go on the wire, so they are marked set here, when writing, rather than on
        # every instance made: results are read far more often than anything is written.
        _mark_always_sent(self)
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _mark_always_sent(value: Any) -> None:
    """Count each model's ``_always_sent`` fields as set, through nested models and containers
    (only fields whose type can hold a model are entered: a big ``Any`` payload is not)."""
    if isinstance(value, McpModel):
        if value._always_sent:
            value.__pydantic_fields_set__.update(value._always_sent)
        for name in _model_fields(type(value)):
            if name in value.__pydantic_fields_set__:
                _mark_always_sent(getattr(value, name))
    elif isinstance(value, (list, tuple)):
        for item in value:
            _mark_always_sent(item)
    elif isinstance(value, dict):
        for item in value.values():
            _mark_always_sent(item)


@functools.cache
def _model_fields(cls: type[McpModel]) -> tuple[str, ...]:
    return tuple(name for name, info in cls.model_fields.items() if _holds_models(info.annotation))


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(arg) for arg in typing.get_args(annotation))


class MetaModel(McpModel):
    """An MCP type that carries the reserved ``_meta`` object."""

    meta: dict[str, Any] | None = Field(
        default=None, validation_alias="_meta", serialization_alias="_meta"
    )
