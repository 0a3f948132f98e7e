"""key=value words parsed against a tool's input schema."""

from __future__ import annotations

import pytest

from mcp_sync.cli import parse_command_line
from mcp_sync.cli._arguments import ArgumentError, parse_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "name": {"type": "string"},
        "options": {"type": "object"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "mode": {"enum": ["fast", "slow"]},
        "anything": {},
    },
    "required": ["name"],
}


def test_values_take_the_types_of_the_schema():
    args = parse_arguments(
        [
            "count=3",
            "ratio=0.5",
            "loud=true",
            "name=007",
            'options={"a": [1]}',
            'tags=["x", "y"]',
            "limit=null",
            "mode=fast",
            "anything=42",
        ],
        SCHEMA,
    )
    assert args == {
        "count": 3,
        "ratio": 0.5,
        "loud": True,
        "name": "007",
        "options": {"a": [1]},
        "tags": ["x", "y"],
        "limit": None,
        "mode": "fast",
        "anything": 42,
    }
    assert parse_arguments(["name=a=b", "limit=7", "anything=hello", "ratio=2"], SCHEMA) == {
        "name": "a=b",
        "limit": 7,
        "anything": "hello",
        "ratio": 2,
    }


def test_raw_json_with_colon_equals_and_base_object():
    args = parse_arguments(['count:="3"', "name=x"], SCHEMA, base={"loud": False, "name": "y"})
    assert args == {"count": "3", "name": "x", "loud": False}


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["name=x", "count=three"], "argument 'count': expected an integer, got 'three'"),
        (["name=x", "count=1.5"], "argument 'count': expected an integer, got '1.5'"),
        (["name=x", "loud=maybe"], "argument 'loud': expected true or false, got 'maybe'"),
        (["name=x", "options=[1]"], "argument 'options': expected a JSON object, got '[1]'"),
        (["count=1"], "missing required argument: name"),
        (["name"], "expected key=value, got 'name'"),
    ],
)
def test_bad_values_are_explained(words, message):
    with pytest.raises(ArgumentError) as info:
        parse_arguments(words, SCHEMA)
    assert str(info.value) == message


def test_closed_schemas_reject_unknown_keys():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "additionalProperties": False,
    }
    with pytest.raises(ArgumentError, match=r"unknown argument 'b' \(parameters: a\)"):
        parse_arguments(["b=1"], schema)


def test_command_line_targets():
    args = parse_command_line(["call", "add", "a=1", "--json", "-v", "--", "python", "server.py"])
    assert (args.verb, args.name, args.words, args.json, args.verbose, args.command) == (
        "call",
        "add",
        ["a=1"],
        True,
        1,
        ["python", "server.py"],
    )
    args = parse_command_line(["https://example.com/mcp", "tools"])
    assert args.url == "https://example.com/mcp" and args.command == []
    args = parse_command_line(["tools", "--", "http://127.0.0.1:9/mcp"])
    assert args.url == "http://127.0.0.1:9/mcp"
    args = parse_command_line(
        ["call", "add", "--json", '{"a": 1}', "--config", "m.json", "--server", "s"]
    )
    assert (args.arguments, args.json, args.config, args.server) == (
        '{"a": 1}',
        False,
        "m.json",
        "s",
    )


def test_a_url_after_a_verb_without_words_is_the_target():
    args = parse_command_line(["--timeout", "5", "tools", "--json", "https://example.com/mcp"])
    assert (args.verb, args.url, args.timeout) == ("tools", "https://example.com/mcp", 5.0)
    args = parse_command_line(["login", "--no-browser", "https://example.com/mcp"])
    assert (args.verb, args.url, args.no_browser) == ("login", "https://example.com/mcp", True)
