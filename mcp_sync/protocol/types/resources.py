"""Resources: listing, templates, reading and update notifications."""

from __future__ import annotations

from pydantic import Field

from ._base import MetaModel
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


class Resource(ResourceFields):
    """A resource the server can read, as listed by ``resources/list``."""

    def _repr_html_(self) -> str | None:
        from ..._repr import html_for

        return html_for(self)

    def _repr_markdown_(self) -> str | None:
        from ..._repr import markdown_for

        return markdown_for(self)


class ResourceTemplate(MetaModel):
    """An RFC 6570 URI template for resources the server can read."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None

    def _repr_html_(self) -> str | None:
        from ..._repr import html_for

        return html_for(self)

    def _repr_markdown_(self) -> str | None:
        from ..._repr import markdown_for

        return markdown_for(self)


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


class ReadResourceResult(CacheableResult):
    """Contents of a resource: text or base64 blobs (one resource may have several parts)."""

    contents: list[ResourceContents] = Field(default_factory=list)

    _always_sent = frozenset({"contents"})

    def _repr_html_(self) -> str | None:
        from ..._repr import html_for

        return html_for(self)

    def _repr_markdown_(self) -> str | None:
        from ..._repr import markdown_for

        return markdown_for(self)


class ResourceUpdatedNotificationParams(NotificationParams):
    uri: str
