"""Turning MCP results into what LLM APIs take.

:func:`to_llm_content` converts a tool result into a list of plain ``{"type": "text"}`` and
``{"type": "image"}`` items, the common denominator of chat-completion APIs. Adapters for
specific LLM SDKs will live here too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .protocol.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    UnknownContent,
    parse_content,
)

__all__ = ["to_llm_content"]


def to_llm_content(
    result: CallToolResult | Sequence[ContentBlock | dict[str, Any]],
    *,
    max_text_bytes: int | None = None,
) -> list[dict[str, Any]]:
    """Convert a tool result (or a list of content blocks) into LLM message content.

    Each block becomes one item:

    - text: ``{"type": "text", "text": ...}``;
    - image: ``{"type": "image", "data": <base64>, "mimeType": ...}``;
    - embedded text resource: a text item with the resource's text;
    - embedded blob resource: an image item if its mimeType is ``image/*``, otherwise a text
      placeholder such as ``[binary resource file:///x (application/pdf, 1234 bytes)]``;
    - audio: ``[audio: audio/wav, 1234 bytes]``; resource link:
      ``[resource link: name <uri> (mimeType)]``; any other type: ``[unsupported content: T]``.

    A result with no content but with ``structured_content`` gives one text item holding that
    value as indented JSON. Wire dicts in a list are parsed as content blocks first.

    ``max_text_bytes`` caps the UTF-8 size of the text the items keep (images are not
    counted). If the text items together are larger, the cap is shared out so that items
    smaller than an equal share stay whole and the larger ones are each cut down to that same
    share: the middle of the text is removed, the head and tail kept (the head gets the odd
    byte), and ``\\n[... N bytes omitted ...]\\n`` is put where the cut was. The markers are
    not counted against the cap. A cut never splits a UTF-8 character, so an item may keep a
    few bytes less than its share.
    """
    if max_text_bytes is not None and max_text_bytes < 0:
        raise ValueError("max_text_bytes must be >= 0")
    if isinstance(result, CallToolResult):
        blocks: Iterable[Any] = result.content
        structured = result.structured_content
        has_content = bool(result.content)
    else:
        blocks = result
        structured = None
        has_content = True
    items = [_convert(parse_content(b) if isinstance(b, dict) else b) for b in blocks]
    if not has_content and structured is not None:
        items = [_text(json.dumps(structured, indent=2, ensure_ascii=False))]
    if max_text_bytes is not None:
        _cap_text(items, max_text_bytes)
    return items


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(data: str, mime_type: str) -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime_type}


def _convert(block: Any) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return _text(block.text)
    if isinstance(block, ImageContent):
        return _image(block.data, block.mime_type)
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return _text(resource.text)
        return _blob_item(resource)
    if isinstance(block, AudioContent):
        return _text(f"[audio: {block.mime_type}, {_base64_size(block.data)} bytes]")
    if isinstance(block, ResourceLink):
        kind = f" ({block.mime_type})" if block.mime_type else ""
        return _text(f"[resource link: {block.name} <{block.uri}>{kind}]")
    if isinstance(block, UnknownContent):
        return _text(f"[unsupported content: {block.type}]")
    kind = getattr(block, "type", type(block).__name__)
    return _text(f"[unsupported content: {kind}]")


def _blob_item(resource: BlobResourceContents) -> dict[str, Any]:
    mime_type = resource.mime_type
    if mime_type and mime_type.lower().startswith("image/"):
        return _image(resource.blob, mime_type)
    size = f"{_base64_size(resource.blob)} bytes"
    details = f"{mime_type}, {size}" if mime_type else size
    return _text(f"[binary resource {resource.uri} ({details})]")


def _base64_size(data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    compact = "".join(data.split())
    padding = len(compact) - len(compact.rstrip("="))
    return max(len(compact) * 3 // 4 - padding, 0)


# -- text budget ----------------------------------------------------------------------------


def _cap_text(items: list[dict[str, Any]], budget: int) -> None:
    texts = [
        (index, item["text"].encode("utf-8"))
        for index, item in enumerate(items)
        if item["type"] == "text"
    ]
    total = sum(len(raw) for _, raw in texts)
    if total <= budget:
        return
    share = _fair_share([len(raw) for _, raw in texts], budget)
    for index, raw in texts:
        if len(raw) > share:
            items[index] = _text(_cut_middle(raw, share))


def _fair_share(sizes: list[int], budget: int) -> int:
    """The largest per-item size ``s`` with ``sum(min(size, s)) <= budget``."""
    remaining = budget
    ordered = sorted(sizes)
    for position, size in enumerate(ordered):
        left = len(ordered) - position
        if size * left > remaining:
            return remaining // left
        remaining -= size
    return ordered[-1] if ordered else budget


def _cut_middle(raw: bytes, keep: int) -> str:
    head_end = _char_start(raw, (keep + 1) // 2, backwards=True)
    tail_start = _char_start(raw, len(raw) - (keep - (keep + 1) // 2), backwards=False)
    omitted = tail_start - head_end
    head = raw[:head_end].decode("utf-8")
    tail = raw[tail_start:].decode("utf-8")
    return f"{head}\n[... {omitted} bytes omitted ...]\n{tail}"


def _char_start(raw: bytes, position: int, *, backwards: bool) -> int:
    """Move ``position`` to the start of a UTF-8 character (continuation bytes are 10xxxxxx)."""
    step = -1 if backwards else 1
    while 0 < position < len(raw) and raw[position] & 0xC0 == 0x80:
        position += step
    return position
