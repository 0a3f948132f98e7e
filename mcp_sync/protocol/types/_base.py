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
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import to_jsonable_python
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
        """The JSON-ready dict for this value, with wire (camelCase) keys. The value itself
        is not changed."""
        wire = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        _add_always_sent(self, wire)
        return wire


def _add_always_sent(value: Any, wire: Any) -> None:
    """Write into ``wire`` (``value`` dumped without its unset fields) the ``_always_sent``
    fields that were left unset, through nested models and containers. Only fields whose type
    can hold a model are entered: a big ``Any`` payload is not walked."""
    if isinstance(value, McpModel):
        fields_set = value.__pydantic_fields_set__
        always_sent, nested = _wire_plan(type(value))
        for name, key in always_sent:
            if name not in fields_set:
                wire[key] = _dump(getattr(value, name))
        for name, key in nested:
            if name in fields_set and key in wire:
                _add_always_sent(getattr(value, name), wire[key])
    elif isinstance(value, (list, tuple)):
        for item, item_wire in zip(value, wire, strict=False):
            _add_always_sent(item, item_wire)
    elif isinstance(value, dict):
        for item_key, item in value.items():
            if item_key in wire:
                _add_always_sent(item, wire[item_key])


def _dump(value: Any) -> Any:
    """The wire form of an unset field's value (its default, or a default changed in place)."""
    if isinstance(value, McpModel):
        return value.to_wire()
    if isinstance(value, (list, tuple)):
        return [_dump(item) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item) for key, item in value.items()}
    return to_jsonable_python(value, by_alias=True)


_Fields = tuple[tuple[str, str], ...]


@functools.cache
def _wire_plan(cls: type[McpModel]) -> tuple[_Fields, _Fields]:
    """``(attribute, wire key)`` of a model's always-sent fields, and of its fields whose type
    can hold a model."""
    fields = cls.model_fields

    def keyed(names: Iterable[str]) -> _Fields:
        return tuple((name, fields[name].serialization_alias or name) for name in names)

    nested = [name for name, info in fields.items() if _holds_models(info.annotation)]
    return keyed(sorted(cls._always_sent)), keyed(nested)


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(arg) for arg in typing.get_args(annotation))


class MetaModel(McpModel):
    """An MCP type that carries the reserved ``_meta`` object."""

    meta: dict[str, Any] | None = Field(
        default=None, validation_alias="_meta", serialization_alias="_meta"
    )
