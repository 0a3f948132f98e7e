"""Resources: listing, templates, reading and update notifications."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ._base import MetaModel
from ._presentation import Displayable
from .common import (
    CacheableResult,
    InputResponseRequestParams,
    NotificationParams,
    PaginatedResult,
    RequestParams,
)
from .content import Annotations, Icon, ResourceContents, ResourceFields

__all__ = [
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
]


def _name_from(data: Any, key: str) -> Any:
    """Servers that leave out a resource's required ``name`` are common: use ``data[key]``
    (the URI or URI template) as its name, as other clients do, rather than fail the list."""
    if isinstance(data, dict) and "name" not in data and isinstance(data.get(key), str):
        return {**data, "name": data[key]}
    return data


class Resource(ResourceFields, Displayable):
    """A resource the server can read, as listed by ``resources/list`` (without a ``name``
    from the server, its ``uri`` is the name)."""

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        return _name_from(data, "uri")


class ResourceTemplate(MetaModel, Displayable):
    """An RFC 6570 URI template for resources the server can read (without a ``name`` from
    the server, its ``uriTemplate`` is the name)."""

    uri_template: str
    name: str

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        return _name_from(data, "uriTemplate")

    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None


class ListResourcesResult(PaginatedResult, CacheableResult):
    resources: list[Resource] = Field(default_factory=list)

    _always_sent = frozenset({"resources"})


class ListResourceTemplatesResult(PaginatedResult, CacheableResult):
    resource_templates: list[ResourceTemplate] = Field(default_factory=list)

    _always_sent = frozenset({"resource_templates"})


class ResourceRequestParams(RequestParams):
    """Params of ``resources/subscribe`` and ``resources/unsubscribe``."""

    uri: str


class ReadResourceRequestParams(ResourceRequestParams, InputResponseRequestParams):
    """Params of ``resources/read``."""


class ReadResourceResult(CacheableResult, Displayable):
    """Contents of a resource: text or base64 blobs (one resource may have several parts)."""

    contents: list[ResourceContents] = Field(default_factory=list)

    _always_sent = frozenset({"contents"})


class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str
