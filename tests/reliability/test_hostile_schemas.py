"""``call_tool(..., validate=True)`` against a hostile server: a backtracking pattern, an invalid
schema, a remote ``$ref``, a schema that refers to itself, nesting and ``$ref`` fan-out.

The server is the official Python SDK's low-level server, in this process
(``tests/servers/hostile_server.py``): its tool declares whatever ``outputSchema`` the test
gives and returns whatever structured content. Whatever they hold, the call ends soon, without
freezing the process, and fails only with ``OutputValidationError``.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from typing import Any

import pytest

import mcp_sync
from mcp_sync.errors import McpError, OutputValidationError
from mcp_sync.protocol.validation import MAX_DEPTH, MAX_SUBSCHEMAS
from tests.servers.hostile_server import schema_server

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("leaks")]


def check(schema: dict[str, Any], content: Any, timeout: float = 30) -> Any:
    """Call the hostile server's tool with ``validate=True``; the call's result."""
    with mcp_sync.connect(schema_server(schema, content), request_timeout=30) as client:
        return client.call_tool("check", validate=True, timeout=timeout)


def check_fails(schema: dict[str, Any], content: Any) -> OutputValidationError:
    with pytest.raises(McpError) as raised:
        check(schema, content)
    assert isinstance(raised.value, OutputValidationError), repr(raised.value)
    return raised.value


class Ticker:
    """A thread that notes the time every 10 ms: a gap in its notes is a frozen process."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.times.append(time.monotonic())
            self._stop.wait(0.01)

    def __enter__(self) -> Ticker:
        self._thread.start()
        while not self.times:
            self._stop.wait(0.001)
        return self

    def __exit__(self, *exc: object) -> None:
        self.times.append(time.monotonic())
        self._stop.set()
        self._thread.join(5)

    def longest_gap(self) -> float:
        return max(b - a for a, b in zip(self.times, self.times[1:], strict=False))


def test_a_backtracking_pattern_neither_freezes_the_process_nor_outlasts_the_timeout() -> None:
    # Python's re takes about 8 s for 28 "a" and a "!" (about 4 times more for each 2 more),
    # holding the GIL all along: no other thread runs and the timeout cannot fire.
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}},
        "required": ["s"],
    }
    with mcp_sync.connect(schema_server(schema, {"s": "a" * 28 + "!"})) as client:
        client.list_tools()
        with Ticker() as ticker:
            started = time.monotonic()
            with pytest.raises(OutputValidationError) as raised:
                client.call_tool("check", validate=True, timeout=1)
            took = time.monotonic() - started
    assert raised.value.path == "/s"
    assert "does not match" in str(raised.value)
    assert took < 5, f"the call took {took:.1f} s with timeout=1"
    assert ticker.longest_gap() < 3, f"no other thread ran for {ticker.longest_gap():.1f} s"


def test_the_pattern_still_matches_what_it_should() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    assert check(schema, {"s": "a" * 5000}).structured_content == {"s": "a" * 5000}
    keys = {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}}
    assert check_fails(keys, {"x-n": "one"}).path == "/x-n"


@pytest.mark.parametrize(
    "pattern",
    ["^(a)\\1$", "^(?=a)a$", "^(?!b)a$", "(?<=a)b"],
    ids=["backref", "ahead", "not-ahead", "behind"],
)
def test_a_pattern_the_linear_engine_cannot_compile_is_an_error_naming_it(pattern: str) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    error = check_fails(schema, {"s": "aa"})
    assert error.in_schema and error.path == "/properties/s/pattern"
    assert pattern.replace("\\", "\\\\") in str(error) and "linear-time" in str(error)


def test_an_invalid_schema_is_an_output_validation_error_naming_the_problem() -> None:
    # Before: TypeError from inside jsonschema.
    error = check_fails({"type": "object", "required": 5}, {})
    assert error.in_schema and error.path == "/required"
    assert "outputSchema cannot be used" in str(error) and "5 is not of type" in str(error)
    error = check_fails({"type": "objekt"}, {})
    assert error.in_schema and error.path == "/type"


def test_a_self_referring_schema_is_an_error_not_a_recursion_error() -> None:
    # Before: RecursionError for each of these.
    for schema in (
        {"$ref": "#"},
        {"anyOf": [{"$ref": "#"}, {"type": "integer"}]},
        {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"not": {"$ref": "#/$defs/a"}}},
            "$ref": "#/$defs/a",
        },
    ):
        error = check_fails(schema, {"n": 1})
        assert error.in_schema and "refers back to itself" in str(error), schema


def test_a_recursive_schema_that_steps_into_the_content_still_validates() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name"],
    }
    good = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    assert check(tree, good).structured_content == good
    bad = {"name": "a", "children": [{"name": "b", "children": [{"title": "c"}]}]}
    assert check_fails(tree, bad).path == "/children/0/children/0"


def test_a_ref_fan_out_is_refused_before_it_runs() -> None:
    # 24 $defs each naming the next twice: 16 million evaluations (jsonschema-rs took 20 s
    # for 18 of them, holding the call past its timeout).
    depth = 24
    defs = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "integer"}
    started = time.monotonic()
    error = check_fails({"$defs": defs, "$ref": "#/$defs/d0"}, "x")
    assert time.monotonic() - started < 10
    assert error.in_schema and f"more than {MAX_SUBSCHEMAS} subschemas" in str(error)


def test_nesting_is_bounded_in_the_schema_and_in_the_content() -> None:
    # Each level is two objects deep (the schema and its "properties").
    deep_schema: dict[str, Any] = {"type": "integer"}
    for _ in range(MAX_DEPTH // 2):
        deep_schema = {"type": "object", "properties": {"a": deep_schema}}
    error = check_fails(deep_schema, {})
    assert error.in_schema and f"more than {MAX_DEPTH} levels" in str(error)
    content: Any = 1
    for _ in range(MAX_DEPTH):
        content = [content]
    error = check_fails({"type": "object", "properties": {"a": {}}}, {"a": content})
    assert not error.in_schema and f"more than {MAX_DEPTH} levels" in str(error)


def test_a_remote_ref_is_never_fetched_and_is_an_error() -> None:
    # Before: referencing.exceptions.Unresolvable, no McpError.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        for schema in (
            {"type": "object", "properties": {"n": {"$ref": f"{url}/n.json"}}},
            {"$schema": f"{url}/meta", "type": "object"},
            {"$ref": "file:///etc/passwd"},
        ):
            error = check_fails(schema, {"n": 1})
            assert error.in_schema, schema
            reference = schema.get("$schema") or schema.get("$ref") or f"{url}/n.json"
            assert reference in str(error)
        # A connection attempt would be waiting in the backlog: none is.
        readable, _, _ = select.select([listener], [], [], 0.5)
        assert readable == [], "something connected to the $ref's address"


def test_an_error_in_the_content_names_its_path() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["id"]}}},
    }
    error = check_fails(schema, {"items": [{"id": 1}, {"name": "x"}]})
    assert (error.path, error.in_schema) == ("/items/1", False)
    assert "'id'" in str(error) or '"id"' in str(error)


def test_the_message_of_a_mismatch_stays_short_however_large_the_content() -> None:
    # Before: the message quoted the whole value (here 1 MB).
    error = check_fails({"type": "array"}, {"blob": "x" * 1_000_000})
    assert len(str(error)) < 1000 and "is not of type" in str(error)
    assert (error.path, error.in_schema) == ("", False)


def test_a_recursive_any_of_over_deep_content_fails_fast() -> None:
    # Each level of the content is checked against both branches of the anyOf, and
    # collecting the errors of both (as jsonschema and jsonschema-rs do) doubles the work at
    # each level: 18 levels took jsonschema-rs 50 s; 100 would outlast the universe.
    branch = {"type": "array", "items": {"$ref": "#/$defs/tree"}}
    schema = {
        "$defs": {"tree": {"anyOf": [branch, {**branch, "minItems": 0}]}},
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/tree"}},
    }
    content: Any = "leaf"
    for _ in range(100):
        content = [content]
    started = time.monotonic()
    error = check_fails(schema, {"tree": content})
    assert time.monotonic() - started < 10
    assert (error.path, error.in_schema) == ("/tree", False)
    assert "does not match the outputSchema at #/$defs/tree" in str(error)
    good: Any = []
    for _ in range(100):
        good = [good]
    assert check(schema, {"tree": good}).structured_content == {"tree": good}


def test_a_mismatch_deep_in_a_recursive_schema_is_located_through_optional_branches() -> None:
    # The shape pydantic gives a recursive model with an optional field.
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
        },
        "required": ["name"],
    }
    schema = {"$defs": {"node": node}, "$ref": "#/$defs/node"}
    content: Any = {"name": "last", "next": None}
    for i in range(60):
        content = {"name": f"n{i}", "next": content}
    assert check(schema, content).structured_content == content
    content["next"]["next"]["next"] = {"title": "no name", "next": None}
    error = check_fails(schema, content)
    assert error.path == "/next/next/next"
    assert "name" in str(error) and "required" in str(error)
