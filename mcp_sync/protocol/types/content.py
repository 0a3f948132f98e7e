"""Content blocks: what tools return, prompts contain and sampling exchanges.

Content lists are parsed leniently: a block whose ``type`` this client does not know becomes
:class:`UnknownContent`, which keeps the whole JSON object and writes it back unchanged, so a
newer server never breaks a result. A block of a known type with missing required fields is
still a validation error.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, StrictBool, Tag, TypeAdapter

from ._base import McpModel, MetaModel, Number

__all__ = [
    "Annotations",
    "AudioContent",
    "BaseResourceContents",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "Role",
    "SamplingContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
    "UnknownContent",
    "parse_content",
    "parse_resource_contents",
    "parse_sampling_content",
]

Role = Literal["user", "assistant"]


class Annotations(McpModel):
    """Hints about who a piece of content is for and how important it is."""

    # Plain strings, not Role: an unexpected audience must not make a whole result invalid.
    audience: list[str] | None = None
    priority: Number | None = None
    #: ISO 8601 timestamp, kept as the server's string.
    last_modified: str | None = None


class Icon(McpModel):
    """An icon a client may show (2025-11-25). Only ``https:`` and ``data:`` sources are safe."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    #: ``"light"`` or ``"dark"``; other values are kept as sent.
    theme: str | None = None


class TextContent(MetaModel):
    """Plain text."""

    _always_sent = frozenset({"type"})
    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None


class ImageContent(MetaModel):
    """A base64-encoded image."""

    _always_sent = frozenset({"type"})
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: Annotations | None = None


class AudioContent(MetaModel):
    """Base64-encoded audio (2025-03-26)."""

    _always_sent = frozenset({"type"})
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: Annotations | None = None


class ResourceFields(MetaModel):
    """Fields shared by :class:`~mcp_sync.protocol.types.Resource` and :class:`ResourceLink`."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    #: Size in bytes of the raw content, if the server knows it.
    size: int | None = None
    icons: list[Icon] | None = None


class ResourceLink(ResourceFields):
    """A reference to a resource the client may read (2025-06-18)."""

    _always_sent = frozenset({"type"})
    type: Literal["resource_link"] = "resource_link"


class BaseResourceContents(MetaModel):
    """What the text and blob forms of resource contents share."""

    uri: str
    mime_type: str | None = None


class TextResourceContents(BaseResourceContents):
    """The contents of a text resource."""

    text: str


class BlobResourceContents(BaseResourceContents):
    """The contents of a binary resource, base64-encoded."""

    blob: str


def _resource_contents_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        if "text" in value:
            return "text"
        return "blob" if "blob" in value else None
    if isinstance(value, TextResourceContents):
        return "text"
    return "blob" if isinstance(value, BlobResourceContents) else None


#: Text or blob resource contents, told apart by which of ``text``/``blob`` is present.
ResourceContents = Annotated[
    Annotated[TextResourceContents, Tag("text")] | Annotated[BlobResourceContents, Tag("blob")],
    Discriminator(
        _resource_contents_tag,
        custom_error_type="invalid_resource_contents",
        custom_error_message="resource contents need a 'text' or a 'blob' field",
    ),
]


class EmbeddedResource(MetaModel):
    """A resource's contents embedded in a message or result."""

    _always_sent = frozenset({"type"})
    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: Annotations | None = None


class UnknownContent(McpModel):
    """A content block of a type this client does not know; the whole object is kept.

    Its fields are in ``model_extra`` under their wire keys; :meth:`to_wire` returns the block
    exactly as received.
    """

    type: str


class ToolUseContent(MetaModel):
    """A tool call requested by the model during sampling (2025-11-25)."""

    _always_sent = frozenset({"type"})
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


def _content_tag_picker(known: frozenset[str]) -> Any:
    def tag(value: Any) -> str | None:
        if isinstance(value, dict):
            kind = value.get("type")
        elif isinstance(value, UnknownContent):
            return "unknown"
        else:
            kind = getattr(value, "type", None)
        if not isinstance(kind, str):
            return None
        return kind if kind in known else "unknown"

    return tag


_NO_TYPE_ERROR = "invalid_content"
_NO_TYPE_MESSAGE = "a content block must be an object with a string 'type'"

#: A content block in tool results, prompt messages and embedded tool results. Unknown types
#: parse as :class:`UnknownContent`.
ContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ResourceLink, Tag("resource_link")]
    | Annotated[EmbeddedResource, Tag("resource")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(
        _content_tag_picker(frozenset({"text", "image", "audio", "resource_link", "resource"})),
        custom_error_type=_NO_TYPE_ERROR,
        custom_error_message=_NO_TYPE_MESSAGE,
    ),
]


class ToolResultContent(MetaModel):
    """The result of a tool call, sent back to the model during sampling (2025-11-25)."""

    _always_sent = frozenset({"type", "content"})
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: StrictBool | None = None


#: A content block inside a sampling message: text, image, audio, tool use or tool result.
#: Unknown types parse as :class:`UnknownContent`.
SamplingContentBlock = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ToolUseContent, Tag("tool_use")]
    | Annotated[ToolResultContent, Tag("tool_result")]
    | Annotated[UnknownContent, Tag("unknown")],
    Discriminator(
        _content_tag_picker(frozenset({"text", "image", "audio", "tool_use", "tool_result"})),
        custom_error_type=_NO_TYPE_ERROR,
        custom_error_message=_NO_TYPE_MESSAGE,
    ),
]


# Built on first use, not at import (they would build every content model's validator).
@functools.cache
def _content() -> TypeAdapter[ContentBlock]:
    return TypeAdapter(ContentBlock)


@functools.cache
def _sampling_content() -> TypeAdapter[SamplingContentBlock]:
    return TypeAdapter(SamplingContentBlock)


@functools.cache
def _resource_contents() -> TypeAdapter[ResourceContents]:
    return TypeAdapter(ResourceContents)


def parse_content(obj: Any) -> ContentBlock:
    """Parse one content block; an unknown ``type`` gives :class:`UnknownContent`."""
    return _content().validate_python(obj)


def parse_sampling_content(obj: Any) -> SamplingContentBlock:
    """Parse one sampling content block; an unknown ``type`` gives :class:`UnknownContent`."""
    return _sampling_content().validate_python(obj)


def parse_resource_contents(obj: Any) -> ResourceContents:
    """Parse text or blob resource contents (by the presence of ``text`` or ``blob``)."""
    return _resource_contents().validate_python(obj)
