"""MCP resources as LangChain ``Blob``s and ``Document``s, and MCP prompts as LangChain
messages (part of :mod:`mcp_sync.integrations.langchain`)."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from langchain_core.documents.base import Blob, Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from ..llm import to_llm_content
from ..protocol.types import (
    BlobResourceContents,
    GetPromptResult,
    ReadResourceResult,
    Resource,
    TextResourceContents,
)

__all__ = ["load_mcp_blobs", "load_mcp_documents", "load_mcp_prompt"]


class _ResourceSource(Protocol):
    def list_resources(self) -> list[Resource]: ...

    def read_resource(self, uri: str, **options: Any) -> ReadResourceResult: ...


class _PromptSource(Protocol):
    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> GetPromptResult: ...


def load_mcp_blobs(
    client: _ResourceSource, uris: Sequence[str] | None = None, *, timeout: float | None = None
) -> list[Blob]:
    """The contents of the resources at ``uris`` (else of every listed resource) as LangChain
    ``Blob``s: text as ``str``, binary contents decoded to ``bytes``, each with its MIME type,
    and its URI as ``blob.source`` and ``metadata["uri"]``. ``client`` is a
    :class:`~mcp_sync.Client` or a :class:`~mcp_sync.ClientGroup` (which reads each URI from
    the server that listed it). A resource may read as several contents: one Blob each."""
    return [_blob(contents) for contents in _contents(client, uris, timeout)]


def _blob(contents: TextResourceContents | BlobResourceContents) -> Blob:
    data: str | bytes
    if isinstance(contents, TextResourceContents):
        data = contents.text
    else:
        data = base64.b64decode(contents.blob)
    return Blob.from_data(
        data, mime_type=contents.mime_type, path=contents.uri, metadata=_metadata(contents)
    )


def load_mcp_documents(
    client: _ResourceSource, uris: Sequence[str] | None = None, *, timeout: float | None = None
) -> list[Document]:
    """The text contents of the resources at ``uris`` (else of every listed resource) as
    LangChain ``Document``s (for a retriever or a text splitter), with metadata ``uri`` and
    ``mime_type``; binary contents are left out, since a Document holds text."""
    return [
        Document(page_content=contents.text, metadata=_metadata(contents))
        for contents in _contents(client, uris, timeout)
        if isinstance(contents, TextResourceContents)
    ]


def _contents(
    client: _ResourceSource, uris: Sequence[str] | None, timeout: float | None
) -> list[TextResourceContents | BlobResourceContents]:
    chosen = [r.uri for r in client.list_resources()] if uris is None else list(uris)
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return [c for uri in chosen for c in client.read_resource(uri, **options).contents]


def _metadata(contents: TextResourceContents | BlobResourceContents) -> dict[str, Any]:
    metadata: dict[str, Any] = {"uri": contents.uri, "mime_type": contents.mime_type}
    if contents.meta:
        metadata["mcp_meta"] = contents.meta
    return metadata


def load_mcp_prompt(
    client: _PromptSource,
    name: str,
    arguments: Mapping[str, str] | None = None,
    *,
    timeout: float | None = None,
) -> list[BaseMessage]:
    """The prompt ``name``, rendered with ``arguments``, as LangChain messages: a ``user``
    turn a ``HumanMessage``, an ``assistant`` turn an ``AIMessage``, their content LangChain
    standard blocks (text; an image as ``base64`` with ``mime_type``; an embedded resource's
    text). ``client`` is a :class:`~mcp_sync.Client` or a :class:`~mcp_sync.ClientGroup`
    (with the group's prompt name)."""
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    result = client.get_prompt(name, arguments, **options)
    messages: list[BaseMessage] = []
    for message in result.messages:
        blocks: list[str | dict[str, Any]] = [_block(i) for i in to_llm_content([message.content])]
        if len(blocks) == 1 and isinstance(blocks[0], dict) and blocks[0]["type"] == "text":
            content: Any = blocks[0]["text"]
        else:
            content = blocks
        kind = AIMessage if message.role == "assistant" else HumanMessage
        messages.append(kind(content=content))
    return messages


def _block(item: dict[str, Any]) -> dict[str, Any]:
    if item["type"] == "image":
        return {"type": "image", "base64": item["data"], "mime_type": item["mimeType"]}
    return item
