"""to_llm_content: every kind of content block, structured results, and the text budget."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcp_sync
from mcp_sync.llm import to_llm_content
from mcp_sync.protocol import types as t

PDF = base64.b64encode(b"%PDF" + bytes(1230)).decode()  # 1234 bytes
PNG = base64.b64encode(b"\x89PNG" + bytes(3)).decode()  # 7 bytes, padded
WAV = base64.b64encode(bytes(100)).decode()


def result(*blocks: dict[str, Any], **fields: Any) -> t.CallToolResult:
    return t.CallToolResult.from_wire({"content": list(blocks), **fields})


def test_text_and_image() -> None:
    items = to_llm_content(
        result(
            {"type": "text", "text": "hello", "annotations": {"priority": 1}},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        )
    )
    assert items == [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]


def test_embedded_text_resource_becomes_its_text() -> None:
    items = to_llm_content(
        result({"type": "resource", "resource": {"uri": "file:///a.py", "text": "print(1)"}})
    )
    assert items == [{"type": "text", "text": "print(1)"}]


def test_embedded_image_blob_becomes_an_image() -> None:
    block = {"type": "resource", "resource": {"uri": "u", "blob": PNG, "mimeType": "image/png"}}
    expected = [{"type": "image", "data": PNG, "mimeType": "image/png"}]
    assert to_llm_content(result(block)) == expected


def test_embedded_other_blob_becomes_a_placeholder() -> None:
    block = {
        "type": "resource",
        "resource": {"uri": "file:///x", "blob": PDF, "mimeType": "application/pdf"},
    }
    assert to_llm_content(result(block)) == [
        {"type": "text", "text": "[binary resource file:///x (application/pdf, 1234 bytes)]"}
    ]
    untyped = {"type": "resource", "resource": {"uri": "file:///y", "blob": "AAA="}}
    assert to_llm_content(result(untyped)) == [
        {"type": "text", "text": "[binary resource file:///y (2 bytes)]"}
    ]


def test_audio_placeholder() -> None:
    items = to_llm_content(result({"type": "audio", "data": WAV, "mimeType": "audio/wav"}))
    assert items == [{"type": "text", "text": "[audio: audio/wav, 100 bytes]"}]


def test_resource_link_placeholder() -> None:
    link = {"type": "resource_link", "uri": "file:///r.md", "name": "r", "mimeType": "text/md"}
    assert to_llm_content(result(link)) == [
        {"type": "text", "text": "[resource link: r <file:///r.md> (text/md)]"}
    ]
    bare = {"type": "resource_link", "uri": "file:///r.md", "name": "r"}
    assert to_llm_content(result(bare)) == [
        {"type": "text", "text": "[resource link: r <file:///r.md>]"}
    ]


def test_unknown_content_placeholder_names_its_type() -> None:
    items = to_llm_content(result({"type": "hologram", "data": "..."}))
    assert items == [{"type": "text", "text": "[unsupported content: hologram]"}]


def test_structured_content_only() -> None:
    structured = {"temperature": 22.5, "city": "Zürich"}
    items = to_llm_content(t.CallToolResult.from_wire({"structuredContent": structured}))
    assert items == [{"type": "text", "text": json.dumps(structured, indent=2, ensure_ascii=False)}]
    assert "Zürich" in items[0]["text"]


def test_structured_content_is_not_repeated_when_there_is_content() -> None:
    items = to_llm_content(result({"type": "text", "text": "22.5"}, structuredContent={"t": 22.5}))
    assert items == [{"type": "text", "text": "22.5"}]


def test_structured_array_and_falsy_values() -> None:
    assert to_llm_content(t.CallToolResult.from_wire({"structuredContent": [1]})) == [
        {"type": "text", "text": "[\n  1\n]"}
    ]
    assert to_llm_content(t.CallToolResult.from_wire({"structuredContent": 0})) == [
        {"type": "text", "text": "0"}
    ]
    assert to_llm_content(t.CallToolResult()) == []


def test_list_of_blocks_and_wire_dicts() -> None:
    items = to_llm_content([t.TextContent(text="a"), {"type": "text", "text": "b"}])
    assert items == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]


def test_sampling_only_blocks_get_a_placeholder() -> None:
    blocks: list[Any] = [t.ToolUseContent(id="1", name="f")]
    assert to_llm_content(blocks) == [{"type": "text", "text": "[unsupported content: tool_use]"}]


# -- max_text_bytes ---------------------------------------------------------------------------


def test_short_text_is_untouched() -> None:
    r = result({"type": "text", "text": "héllo"})
    assert to_llm_content(r, max_text_bytes=6) == [{"type": "text", "text": "héllo"}]


def test_long_text_keeps_head_and_tail() -> None:
    text = "A" * 50 + "B" * 100 + "C" * 50
    [item] = to_llm_content(result({"type": "text", "text": text}), max_text_bytes=100)
    assert item["text"] == "A" * 50 + "\n[... 100 bytes omitted ...]\n" + "C" * 50


def test_odd_budget_gives_the_head_the_extra_byte() -> None:
    [item] = to_llm_content(result({"type": "text", "text": "abcdefghij"}), max_text_bytes=3)
    assert item["text"] == "ab\n[... 7 bytes omitted ...]\nj"


def test_cut_never_splits_a_multibyte_character() -> None:
    text = "€" * 10  # 3 bytes each, 30 bytes
    [item] = to_llm_content(result({"type": "text", "text": text}), max_text_bytes=10)
    # 5 bytes for the head -> one whole euro sign (3 bytes); 5 for the tail -> one (3 bytes).
    assert item["text"] == "€\n[... 24 bytes omitted ...]\n€"


def test_budget_is_shared_small_items_stay_whole() -> None:
    r = result(
        {"type": "text", "text": "short"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "text", "text": "x" * 1000},
        {"type": "text", "text": "y" * 1000},
    )
    items = to_llm_content(r, max_text_bytes=105)
    assert items[0] == {"type": "text", "text": "short"}
    assert items[1]["type"] == "image"  # images are not counted or touched
    # 100 bytes left for two big items -> 50 each.
    assert items[2]["text"] == "x" * 25 + "\n[... 950 bytes omitted ...]\n" + "x" * 25
    assert items[3]["text"] == "y" * 25 + "\n[... 950 bytes omitted ...]\n" + "y" * 25


def test_zero_budget_leaves_only_markers() -> None:
    [item] = to_llm_content(result({"type": "text", "text": "abc"}), max_text_bytes=0)
    assert item["text"] == "\n[... 3 bytes omitted ...]\n"


def test_structured_content_is_capped_too() -> None:
    r = t.CallToolResult.from_wire({"structuredContent": {"k": "v" * 500}})
    [item] = to_llm_content(r, max_text_bytes=40)
    assert "bytes omitted" in item["text"]
    assert item["text"].startswith('{\n  "k"')


def test_negative_budget_is_rejected() -> None:
    with pytest.raises(ValueError):
        to_llm_content(t.CallToolResult(), max_text_bytes=-1)


MARKER = "\n[... "


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(st.text(alphabet=st.sampled_from("aé€😀\n"), max_size=60), max_size=5),
    budget=st.integers(min_value=0, max_value=200),
)
def test_budget_property(texts: list[str], budget: int) -> None:
    blocks = [{"type": "text", "text": text} for text in texts]
    items = to_llm_content(result(*blocks), max_text_bytes=budget)
    assert len(items) == len(texts)
    kept = 0
    for original, item in zip(texts, items, strict=True):
        out = item["text"]
        if out == original:
            kept += len(original.encode())
            continue
        head, _, rest = out.partition(MARKER)
        count, _, tail = rest.partition(" bytes omitted ...]\n")
        assert original.startswith(head) and original.endswith(tail)
        assert int(count) == len(original.encode()) - len(head.encode()) - len(tail.encode())
        kept += len(head.encode()) + len(tail.encode())
    assert kept <= budget


def test_a_resource_read_becomes_content_and_one_text() -> None:
    read = t.ReadResourceResult.from_wire(
        {
            "contents": [
                {"uri": "file:///a.txt", "text": "hello"},
                {"uri": "file:///x.pdf", "mimeType": "application/pdf", "blob": PDF},
                {"uri": "file:///p.png", "mimeType": "image/png", "blob": PNG},
            ]
        }
    )
    assert to_llm_content(read) == [
        {"type": "text", "text": "hello"},
        {"type": "text", "text": "[binary resource file:///x.pdf (application/pdf, 1234 bytes)]"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    ]
    assert mcp_sync.to_llm_text(read) == (
        "hello\n[binary resource file:///x.pdf (application/pdf, 1234 bytes)]\n"
        "[image: image/png, 7 bytes]"
    )
    assert "bytes omitted" in mcp_sync.to_llm_text(read, max_text_bytes=10)
