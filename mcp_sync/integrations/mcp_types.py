"""Conversion to and from the official Python SDK's ``mcp.types`` (extra ``mcp``).

For libraries that take the SDK's objects::

    from mcp_sync.integrations.mcp_types import from_mcp, to_mcp

    sdk_tools = to_mcp(client.list_tools())            # list[mcp.types.Tool]
    result = to_mcp(client.call_tool("add", {"a": 1, "b": 2}))   # mcp.types.CallToolResult
    tool = from_mcp(sdk_tools[0])                      # mcp_sync.types.Tool again

Both directions go through the wire JSON, the one form both libraries agree on: ``to_mcp``
gives what the SDK itself makes of the JSON a server sent, and ``from_mcp`` reads the fields
the SDK object holds (those it was given, not its defaults). So ``to_mcp(from_mcp(x)) == x``,
and a server's results survive ``from_mcp(to_mcp(...))`` field for field. What ``mcp.types``
cannot hold, it cannot be given: its models ignore fields they do not declare (mcp_sync keeps
them), and it has no type for a content block it does not know (mcp_sync's
:class:`~mcp_sync.types.UnknownContent`), which raises :class:`TypeError` here rather than being
dropped.

Tested with mcp 1.30 and 2.3: 1.x is where users of mcpadapt and langchain-mcp-adapters are,
and ``to_mcp`` is their route into those libraries' adapters (``docs/integrations.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import mcp.types as sdk_types
from pydantic import BaseModel

from ..protocol import types as our_types
from ..protocol.types import McpModel, UnknownContent

__all__ = ["from_mcp", "to_mcp"]


@overload
def to_mcp(value: McpModel) -> Any: ...
@overload
def to_mcp(value: Sequence[McpModel]) -> list[Any]: ...
def to_mcp(value: McpModel | Sequence[McpModel]) -> Any:
    """The ``mcp.types`` object (or list of them) equal to an mcp_sync type: a tool, a tool
    result, a content block, a resource, a template, resource contents, a prompt, a prompt
    result, an implementation, a list result, ... (any type whose spec name both share)."""
    if isinstance(value, McpModel):
        return _sdk_class(value).model_validate(_checked_wire(value))
    return [to_mcp(item) for item in value]


@overload
def from_mcp(value: BaseModel) -> McpModel: ...
@overload
def from_mcp(value: Sequence[BaseModel]) -> list[McpModel]: ...
def from_mcp(value: BaseModel | Sequence[BaseModel]) -> McpModel | list[McpModel]:
    """The mcp_sync object (or list of them) equal to an ``mcp.types`` object."""
    if isinstance(value, BaseModel):
        ours = getattr(our_types, type(value).__name__, None)
        if not (isinstance(ours, type) and issubclass(ours, McpModel)):
            raise TypeError(f"mcp_sync has no type for {type(value).__qualname__}")
        return ours.from_wire(_sdk_wire(value))
    return [from_mcp(item) for item in value]


def _sdk_wire(value: BaseModel) -> dict[str, Any]:
    """The fields of an SDK object that were set (as the server sent them or the user gave
    them), with every ``type`` discriminator: defaults such as ``isError: false`` that the JSON
    never held stay out, so a server's result comes back as it was."""
    data = value.model_dump(by_alias=True, mode="json", exclude_unset=True)
    _add_discriminators(value, data)
    return data


def _add_discriminators(model: Any, data: Any) -> None:
    if isinstance(model, BaseModel) and isinstance(data, dict):
        fields = type(model).model_fields
        if "type" in fields and "type" not in data:
            data["type"] = getattr(model, "type")  # noqa: B009 (a field, not a method)
        for name, field in fields.items():
            key = field.serialization_alias or field.alias or name
            if key in data:
                _add_discriminators(getattr(model, name), data[key])
    elif isinstance(model, (list, tuple)) and isinstance(data, list):
        for item, item_data in zip(model, data, strict=False):
            _add_discriminators(item, item_data)
    elif isinstance(model, dict) and isinstance(data, dict):
        for key, item in model.items():
            _add_discriminators(item, data.get(key))


def _sdk_class(value: McpModel) -> type[BaseModel]:
    name = type(value).__name__
    cls = getattr(sdk_types, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        raise TypeError(f"mcp.types has no {name}: cannot convert {name} to the SDK's types")
    return cls


def _checked_wire(value: McpModel) -> dict[str, Any]:
    if _holds_unknown_content(value):
        raise TypeError(
            f"{type(value).__name__} holds a content block of a type mcp.types does not know"
            " (an UnknownContent): the SDK's types cannot represent it"
        )
    return value.to_wire()


def _holds_unknown_content(value: Any) -> bool:
    if isinstance(value, UnknownContent):
        return True
    if isinstance(value, McpModel):
        fields = type(value).model_fields
        return any(_holds_unknown_content(getattr(value, name)) for name in fields)
    if isinstance(value, (list, tuple)):
        return any(_holds_unknown_content(item) for item in value)
    return False
