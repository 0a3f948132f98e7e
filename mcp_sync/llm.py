"""Turning MCP tools and results into what LLM APIs take, as plain dicts.

- :func:`to_llm_content` converts a tool result (or a resource read) into a list of plain
  ``{"type": "text"}`` and ``{"type": "image"}`` items, the common denominator of
  chat-completion APIs; :func:`to_llm_text` into one text.
- :func:`openai_tools` / :func:`anthropic_tools` describe tools in the shape of the OpenAI
  (chat completions or responses) and Anthropic (messages) APIs; :func:`openai_tool_message`
  and :func:`anthropic_tool_result` wrap a result for the next request. No vendor SDK is
  imported: the dicts go straight into ``tools=[...]`` and ``messages=[...]``.

LLM APIs accept tool names of 1 to 64 characters from ``[A-Za-z0-9_-]``; MCP names may be
longer or hold dots and slashes. :func:`llm_tool_names` maps each tool to a safe name that is
unique in its list, and :func:`openai_tools` / :func:`anthropic_tools` use the same names, so
``dict(zip(llm_tool_names(tools), tools))`` finds the tool a model asked for.

One function decides what a model may see of a listed tool, for every shape here and every
framework adapter in :mod:`mcp_sync.integrations`: :func:`model_view`. It leaves out the tools
meant for an app's UI (:func:`model_visible`), and strips what a person cannot see but a model
reads from the name, the description and the whole schema (:func:`clean_tool`; ``clean=False``
keeps it), with a :class:`~mcp_sync.errors.HiddenCharactersWarning` naming what went.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ._presentation.tool_view import (
    ModelTool,
    clean_text,
    clean_tool,
    indexed_views,
    model_tools,
    model_view,
    model_visible,
    tool_input_schema,
    unique,
    view_names,
    view_of,
)
from ._rules.numbers import whole
from .protocol.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
    UnknownContent,
    parse_content,
)

__all__ = [
    "LlmSource",
    "ModelTool",
    "ResultPreference",
    "anthropic_tool",
    "anthropic_tool_result",
    "anthropic_tools",
    "clean_text",
    "clean_tool",
    "llm_tool_names",
    "model_tools",
    "model_view",
    "model_visible",
    "openai_tool",
    "openai_tool_message",
    "openai_tools",
    "sanitize_tool_name",
    "to_llm_content",
    "to_llm_text",
    "tool_input_schema",
    "unique_names",
]

ResultPreference = Literal["content", "structured"]
"""Which half of a result with both ``content`` and ``structuredContent`` a model is sent
(SEP-2200: ``content`` is for the model, ``structuredContent`` for code and UIs)."""


LlmSource = (
    CallToolResult
    | ReadResourceResult
    | Sequence[ContentBlock | TextResourceContents | BlobResourceContents | dict[str, Any]]
)
"""What :func:`to_llm_content` and :func:`to_llm_text` take: a tool result, a resource read,
or a list of content blocks (or their wire dicts)."""


def to_llm_content(
    result: LlmSource, *, max_text_bytes: int | None = None, prefer: ResultPreference = "content"
) -> list[dict[str, Any]]:
    """Convert a tool result (or a resource read, or a list of content blocks) into LLM
    message content.

    Each block becomes one item:

    - text: ``{"type": "text", "text": ...}``;
    - image: ``{"type": "image", "data": <base64>, "mimeType": ...}``;
    - text resource (embedded, or read with ``read_resource``): a text item with its text;
    - blob resource: an image item if its mimeType is ``image/*``, otherwise a text
      placeholder such as ``[binary resource file:///x (application/pdf, 1234 bytes)]``;
    - audio: ``[audio: audio/wav, 1234 bytes]``; resource link:
      ``[resource link: name <uri> (mimeType)]``; any other type: ``[unsupported content: T]``.

    A tool result is sent as one of its halves, never both (SEP-2200): its ``content``, or,
    when it has none, its ``structured_content`` as one text item of indented JSON.
    ``prefer="structured"`` sends the structured content (as that JSON) whenever there is
    some, and the ``content`` otherwise. Wire dicts in a list are parsed as content blocks
    first.

    ``max_text_bytes`` caps the UTF-8 size of the text the items keep (images are not
    counted). If the text items together are larger, the cap is shared out so that items
    smaller than an equal share stay whole and the larger ones are each cut down to that same
    share: the middle of the text is removed, the head and tail kept (the head gets the odd
    byte), and ``\\n[... N bytes omitted ...]\\n`` is put where the cut was. The markers are
    not counted against the cap. A cut never splits a UTF-8 character, so an item may keep a
    few bytes less than its share.
    """
    if max_text_bytes is not None:
        whole(max_text_bytes, "to_llm_content: max_text_bytes")
    if prefer not in ("content", "structured"):
        raise ValueError(f"prefer must be 'content' or 'structured', not {prefer!r}")
    if isinstance(result, CallToolResult):
        blocks: Iterable[Any] = result.content
        structured = result.structured_content
        has_content = bool(result.content)
    elif isinstance(result, ReadResourceResult):
        blocks = result.contents
        structured = None
        has_content = True
    else:
        blocks = result
        structured = None
        has_content = True
    items = [_convert(parse_content(b) if isinstance(b, dict) else b) for b in blocks]
    if structured is not None and (not has_content or prefer == "structured"):
        items = [_text(json.dumps(structured, indent=2, ensure_ascii=False))]
    if max_text_bytes is not None:
        _cap_text(items, max_text_bytes)
    return items


def to_llm_text(
    result: LlmSource, *, max_text_bytes: int | None = None, prefer: ResultPreference = "content"
) -> str:
    """The items of :func:`to_llm_content` as one text, one item after another on its own
    line, an image as ``[image: image/png, N bytes]``: for a display, a log, or an LLM API
    whose tool messages carry text only::

        print(mcp_sync.to_llm_text(client.call_tool("add", {"a": 1, "b": 2})))
    """
    parts: list[str] = []
    for item in to_llm_content(result, max_text_bytes=max_text_bytes, prefer=prefer):
        if item["type"] == "image":
            parts.append(f"[image: {item['mimeType']}, {_base64_size(item['data'])} bytes]")
        else:
            parts.append(item["text"])
    return "\n".join(parts)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(data: str, mime_type: str) -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime_type}


def _convert(block: Any) -> dict[str, Any]:
    if isinstance(block, EmbeddedResource):
        block = block.resource
    if isinstance(block, TextContent):
        return _text(block.text)
    if isinstance(block, ImageContent):
        return _image(block.data, block.mime_type)
    if isinstance(block, TextResourceContents):
        return _text(block.text)
    if isinstance(block, BlobResourceContents):
        return _blob_item(block)
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


# -- tool descriptions ----------------------------------------------------------------------

MAX_NAME_LENGTH = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
OpenAIStyle = Literal["chat", "responses"]


def sanitize_tool_name(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``, cut to 64
    characters (``"tool"`` if nothing is left)."""
    return _UNSAFE.sub("_", name)[:MAX_NAME_LENGTH] or "tool"


def unique_names(names: Iterable[str]) -> list[str]:
    """Sanitise each name and make it unique in the list by suffixing ``_2``, ``_3``, ...

    A name that is already safe and unique is kept as it is; the result is the same for the
    same input, so it can be recomputed to map a model's tool call back.
    """
    return unique([sanitize_tool_name(name) for name in names], limit=MAX_NAME_LENGTH)


def llm_tool_names(tools: Sequence[Tool]) -> list[str]:
    """The name each tool gets in :func:`openai_tools` / :func:`anthropic_tools`: its
    :func:`model_view` name, made safe for LLM APIs (:func:`unique_names`)."""
    return unique_names(view_names(tools, clean=True))


def openai_tool(
    tool: Tool, *, name: str | None = None, style: OpenAIStyle = "chat", clean: bool = True
) -> dict[str, Any]:
    """One tool in the OpenAI shape: ``{"type": "function", "function": {...}}`` for chat
    completions, or the flat ``{"type": "function", "name": ...}`` for the responses API.
    ``clean=False`` keeps invisible characters (see :func:`model_view`)."""
    return _openai(view_of(tool, clean), name, style)


def _openai(view: ModelTool, name: str | None, style: OpenAIStyle) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name or sanitize_tool_name(view.name)}
    if view.description:
        function["description"] = view.description
    function["parameters"] = view.input_schema
    if style == "responses":
        return {"type": "function", **function}
    if style != "chat":
        raise ValueError(f"style must be 'chat' or 'responses', not {style!r}")
    return {"type": "function", "function": function}


def openai_tools(
    tools: Sequence[Tool],
    *,
    style: OpenAIStyle = "chat",
    clean: bool = True,
    include_app_only: bool = False,
) -> list[dict[str, Any]]:
    """Tools for OpenAI's ``tools=[...]``, names made safe and unique (see
    :func:`llm_tool_names`), invisible characters stripped unless ``clean=False``, app-only
    tools left out unless ``include_app_only=True`` (see :func:`model_view`)."""
    return [_openai(view, name, style) for view, name in _named(tools, clean, include_app_only)]


def _named(
    tools: Sequence[Tool], clean: bool, include_app_only: bool
) -> list[tuple[ModelTool, str]]:
    listed = list(tools)
    # names over the whole list, so dict(zip(llm_tool_names(tools), tools)) still maps back
    names = unique_names(view_names(listed, clean))
    return [(view, names[index]) for index, view in indexed_views(listed, clean, include_app_only)]


def anthropic_tool(tool: Tool, *, name: str | None = None, clean: bool = True) -> dict[str, Any]:
    """One tool in the Anthropic messages API shape: ``{"name", "description",
    "input_schema"}``. ``clean=False`` keeps invisible characters (see :func:`model_view`)."""
    return _anthropic(view_of(tool, clean), name)


def _anthropic(view: ModelTool, name: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"name": name or sanitize_tool_name(view.name)}
    if view.description:
        item["description"] = view.description
    item["input_schema"] = view.input_schema
    return item


def anthropic_tools(
    tools: Sequence[Tool], *, clean: bool = True, include_app_only: bool = False
) -> list[dict[str, Any]]:
    """Tools for Anthropic's ``tools=[...]``, names made safe and unique, invisible
    characters stripped unless ``clean=False``, app-only tools left out unless
    ``include_app_only=True``."""
    return [_anthropic(view, name) for view, name in _named(tools, clean, include_app_only)]


# -- results for the next request -----------------------------------------------------------


def anthropic_tool_result(
    tool_use_id: str,
    result: CallToolResult,
    *,
    max_text_bytes: int | None = None,
    prefer: ResultPreference = "content",
) -> dict[str, Any]:
    """A ``tool_result`` content block answering the model's ``tool_use`` block (``prefer``
    as for :func:`to_llm_content`)."""
    content: list[dict[str, Any]] = []
    for item in to_llm_content(result, max_text_bytes=max_text_bytes, prefer=prefer):
        if item["type"] == "image":
            source = {"type": "base64", "media_type": item["mimeType"], "data": item["data"]}
            content.append({"type": "image", "source": source})
        else:
            content.append(item)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    block["content"] = content
    if result.is_error:
        block["is_error"] = True
    return block


def openai_tool_message(
    tool_call_id: str,
    result: CallToolResult,
    *,
    max_text_bytes: int | None = None,
    prefer: ResultPreference = "content",
) -> dict[str, Any]:
    """A chat-completions ``{"role": "tool"}`` message answering one tool call (``prefer``
    as for :func:`to_llm_content`).

    Tool messages carry text only: an image becomes ``[image: image/png, N bytes]``.
    A failed tool's text is prefixed with ``Error:`` so that the model sees it failed.
    """
    text = to_llm_text(result, max_text_bytes=max_text_bytes, prefer=prefer)
    if result.is_error:
        text = f"Error: {text}" if text else "Error"
    return {"role": "tool", "tool_call_id": tool_call_id, "content": text}
