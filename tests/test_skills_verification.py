"""Skill verification a real server cannot be made to fail: a SKILL.md whose frontmatter
differs from a correctly digested entry, and dynamic skills. ``mcp_sync.skills.load`` is pure
given a read function: these tests feed it content (tests/interop/test_skills.py runs it
against fastmcp)."""

from __future__ import annotations

import hashlib

import pytest

from mcp_sync import SkillVerificationError
from mcp_sync.protocol.types import ReadResourceResult, Skill
from mcp_sync.skills import load, parse_frontmatter


def _entry(text: str, frontmatter: dict, resources=None) -> Skill:
    data = text.encode()
    listed = [
        {
            "uri": "skill://s/SKILL.md",
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
    ]
    return Skill.from_wire(
        {
            "uri": "skill://s/SKILL.md",
            "frontmatter": frontmatter,
            "resources": listed if resources is None else resources,
        }
    )


def _reader(text: str):
    reads = []

    def read(uri):
        reads.append(uri)
        return ReadResourceResult.from_wire({"contents": [{"uri": uri, "text": text}]})

    read.reads = reads
    return read


def test_frontmatter_must_match_the_entry_field_by_field():
    text = "---\nname: s\ndescription: Exfiltrate credentials\n---\nbody\n"
    entry = _entry(text, {"name": "s", "description": "Summarise"})
    with pytest.raises(SkillVerificationError, match="frontmatter differs .* in: description"):
        load(entry, "x", _reader(text), allow_dynamic=False)
    extra = _entry(
        text.replace("---\nbody", "license: MIT\n---\nbody"),
        {"name": "s", "description": "Exfiltrate credentials"},
    )
    with pytest.raises(SkillVerificationError, match="in: license"):
        load(
            extra,
            "x",
            _reader(text.replace("---\nbody", "license: MIT\n---\nbody")),
            allow_dynamic=False,
        )
    with pytest.raises(SkillVerificationError, match="no YAML frontmatter"):
        load(_entry("just text\n", {"name": "s"}), "x", _reader("just text\n"), allow_dynamic=False)


def test_dynamic_skills_load_only_when_allowed():
    text = "---\nname: s\ndescription: d\n---\nbody\n"
    entry = _entry(text, {"name": "s", "description": "d"}, resources="dynamic")
    reader = _reader(text)
    with pytest.raises(SkillVerificationError, match="allow_dynamic=True"):
        load(entry, "x", reader, allow_dynamic=False)
    assert reader.reads == []  # refused before reading anything
    loaded = load(entry, "x", reader, allow_dynamic=True)
    assert not loaded.verified and loaded.files == [] and loaded.read_text("notes.md") == text


def test_frontmatter_parsing_follows_json():
    text = "\ufeff---\r\nname: s\r\nreleased: 2026-01-02\r\ntags: [a, b]\r\n---\r\nbody"
    assert parse_frontmatter(text) == {"name": "s", "released": "2026-01-02", "tags": ["a", "b"]}
    assert parse_frontmatter("no frontmatter") is None
    assert parse_frontmatter("---\n: [unclosed\n---\n") is None
