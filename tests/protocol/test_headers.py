"""The 2026-07-28 HTTP header rules (mcp_sync.protocol.headers)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sync.protocol.headers import (
    decode_header_value,
    encode_header_value,
    param_headers,
    standard_headers,
    tool_header_problems,
)


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# -- encode / decode ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        ("us-west-1", "us-west-1"),
        ("hello world", "hello world"),  # inner spaces are fine
        ("", ""),
        ("a:b;c=d?e", "a:b;c=d?e"),
        ("Hello, 世界", b64("Hello, 世界")),
        ("café", b64("café")),
        (" lead", b64(" lead")),
        ("trail ", b64("trail ")),
        ("  both  ", b64("  both  ")),
        ("\ttab", b64("\ttab")),
        ("line1\r\nline2", b64("line1\r\nline2")),
        ("nul\x00", b64("nul\x00")),
        ("del\x7f", b64("del\x7f")),
        ("=?base64?SGVsbG8=?=", b64("=?base64?SGVsbG8=?=")),  # looks like the sentinel
        ("=?base64?abc", b64("=?base64?abc")),  # the prefix alone
        ("=?BASE64?SGVsbG8=?=", b64("=?BASE64?SGVsbG8=?=")),  # any case
        ("x=?base64?y?=", "x=?base64?y?="),  # not at the start: plain
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_encode(value: str | int | bool, wire: str) -> None:
    assert encode_header_value(value) == wire
    if isinstance(value, str):
        assert decode_header_value(wire) == value


def test_encode_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        encode_header_value(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_header_value(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("wire", "value"),
    [
        ("plain", "plain"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("=?base64??=", ""),
        ("SGVsbG8=", "SGVsbG8="),  # no sentinel: literal
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no suffix: literal
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),  # the sentinel is case-sensitive
        ("=?base64?=", "=?base64?="),  # too short to hold prefix and suffix
    ],
)
def test_decode(wire: str, value: str) -> None:
    assert decode_header_value(wire) == value


@pytest.mark.parametrize(
    "wire",
    [
        "=?base64?SGVsbG8?=",  # bad padding
        "=?base64?SGVs!!!bG8=?=",  # not the alphabet
        "=?base64?SGVsbG9=?=",  # non-canonical (trailing bits set)
        "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?=",  # not UTF-8
    ],
)
def test_decode_rejects_malformed_sentinel(wire: str) -> None:
    with pytest.raises(ValueError):
        decode_header_value(wire)


@given(st.text())
def test_round_trip(text: str) -> None:
    assert decode_header_value(encode_header_value(text)) == text


@given(st.text(alphabet=st.characters(codec="utf-8")) | st.text())
def test_output_is_visible_ascii_with_inner_spaces_only(text: str) -> None:
    wire = encode_header_value(text)
    assert "\r" not in wire and "\n" not in wire
    assert all(0x20 <= ord(ch) <= 0x7E for ch in wire)
    assert wire == wire.strip(" ")


@given(st.text(alphabet=st.sampled_from("=?base64BASE\r\n \t:é")))
def test_round_trip_near_the_sentinel(text: str) -> None:
    wire = encode_header_value(text)
    assert decode_header_value(wire) == text
    assert "\r" not in wire and "\n" not in wire


@given(st.integers() | st.booleans())
def test_scalars(value: int | bool) -> None:
    wire = encode_header_value(value)
    if isinstance(value, bool):
        assert wire == ("true" if value else "false")
    else:
        assert int(wire) == value


# -- standard headers ---------------------------------------------------------------------------

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_standard_headers_discover() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    assert standard_headers(message, "2025-11-25") == {
        "MCP-Protocol-Version": "2026-07-28",  # the _meta value wins
        "Mcp-Method": "server/discover",
    }


def test_standard_headers_without_meta_use_the_given_version() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert standard_headers(message, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("tools/call", {"name": "get_weather", "arguments": {}}, "get_weather"),
        ("prompts/get", {"name": "greet"}, "greet"),
        ("resources/read", {"uri": "file:///tmp/a b.txt"}, "file:///tmp/a b.txt"),
        ("resources/read", {"uri": "file:///tmp/é"}, b64("file:///tmp/é")),
        ("tools/call", {"name": "=?base64?x?="}, b64("=?base64?x?=")),
        ("tools/call", {"name": "evil\r\nX-Injected: 1"}, b64("evil\r\nX-Injected: 1")),
    ],
)
def test_standard_headers_name(method: str, params: dict[str, Any], name: str) -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": META}}
    assert standard_headers(message, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        "Mcp-Name": name,
    }


def test_standard_headers_no_name_for_other_methods() -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {"name": "x"}}
    assert "Mcp-Name" not in standard_headers(message, "2026-07-28")


def test_standard_headers_ignore_a_malformed_meta_version() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28\r\nX: y"}
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta}}
    assert standard_headers(message, "2026-07-28")["MCP-Protocol-Version"] == "2026-07-28"


# -- x-mcp-header validity (the conformance suite's http-invalid-tool-headers tools) ----------


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


VALID_TOOL = obj(region={"type": "string", "x-mcp-header": "Region"})

INVALID_TOOLS = {
    "invalid_empty_header": obj(value={"type": "string", "x-mcp-header": ""}),
    "invalid_object_header": obj(data={"type": "object", "x-mcp-header": "Data"}),
    "invalid_array_header": obj(
        items={"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}
    ),
    "invalid_null_header": obj(nil={"type": "null", "x-mcp-header": "Nil"}),
    "invalid_number_header": obj(score={"type": "number", "x-mcp-header": "Score"}),
    "invalid_duplicate_same_case": obj(
        field1={"type": "string", "x-mcp-header": "Region"},
        field2={"type": "string", "x-mcp-header": "Region"},
    ),
    "invalid_duplicate_diff_case": obj(
        field1={"type": "string", "x-mcp-header": "MyField"},
        field2={"type": "string", "x-mcp-header": "myfield"},
    ),
    "invalid_space_in_name": obj(value={"type": "string", "x-mcp-header": "My Region"}),
    "invalid_colon_in_name": obj(value={"type": "string", "x-mcp-header": "Region:Primary"}),
    "invalid_non_ascii_name": obj(value={"type": "string", "x-mcp-header": "Région"}),
    "invalid_control_char_name": obj(value={"type": "string", "x-mcp-header": "Region\t1"}),
    # beyond the suite
    "crlf_in_name": obj(value={"type": "string", "x-mcp-header": "A\r\nX-Evil"}),
    "non_string_name": obj(value={"type": "string", "x-mcp-header": 7}),
    "no_type": obj(value={"x-mcp-header": "Value"}),
    "type_list": obj(value={"type": ["string", "null"], "x-mcp-header": "Value"}),
    "on_root": {"type": "object", "x-mcp-header": "Root", "properties": {}},
    "under_items": obj(list={"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}),
    "under_any_of": obj(v={"anyOf": [{"type": "string", "x-mcp-header": "V"}]}),
    "under_defs": {
        "type": "object",
        "$defs": {"r": {"type": "string", "x-mcp-header": "R"}},
        "properties": {"r": {"$ref": "#/$defs/r"}},
    },
    "under_additional_properties": obj(
        m={"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "M"}}
    ),
    "nested_duplicate": obj(
        a={"type": "string", "x-mcp-header": "Id"},
        b=obj(c={"type": "string", "x-mcp-header": "ID"}),
    ),
}


@pytest.mark.parametrize("name", sorted(INVALID_TOOLS))
def test_invalid_annotations(name: str) -> None:
    assert tool_header_problems(INVALID_TOOLS[name]) != []


@pytest.mark.parametrize(
    "schema",
    [
        VALID_TOOL,
        {"type": "object"},
        obj(),
        obj(q={"type": "string"}),
        obj(
            region={"type": "string", "x-mcp-header": "Region"},
            priority={"type": "integer", "x-mcp-header": "Priority"},
            verbose={"type": "boolean", "x-mcp-header": "Verbose"},
            method_val={"type": "string", "x-mcp-header": "Method"},
            weird={"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09az"},
        ),
        obj(outer=obj(inner={"type": "integer", "x-mcp-header": "Inner"})),
        # data keywords are not schemas: an "x-mcp-header" key inside them is data
        obj(
            v={"type": "string", "default": {"x-mcp-header": ""}, "examples": [{"x-mcp-header": 1}]}
        ),
        # a property merely named x-mcp-header
        obj(**{"x-mcp-header": {"type": "string"}}),
    ],
)
def test_valid_annotations(schema: dict[str, Any]) -> None:
    assert tool_header_problems(schema) == []


def test_problems_name_the_property() -> None:
    (problem,) = tool_header_problems(INVALID_TOOLS["invalid_number_header"])
    assert "score" in problem and "number" in problem
    (problem,) = tool_header_problems(INVALID_TOOLS["invalid_duplicate_diff_case"])
    assert problem.startswith("field2:") and problem.endswith("field1")


# -- Mcp-Param-* (the conformance suite's test_custom_headers tool) ----------------------------

CUSTOM = obj(
    region={"type": "string", "x-mcp-header": "Region"},
    priority={"type": "integer", "x-mcp-header": "Priority"},
    verbose={"type": "boolean", "x-mcp-header": "Verbose"},
    debug={"type": "boolean", "x-mcp-header": "Debug"},
    empty_val={"type": "string", "x-mcp-header": "EmptyVal"},
    method_val={"type": "string", "x-mcp-header": "Method"},
    float_val={"type": "number"},
    non_ascii_val={"type": "string", "x-mcp-header": "NonAscii"},
    whitespace_val={"type": "string", "x-mcp-header": "Whitespace"},
    leading_space_val={"type": "string", "x-mcp-header": "LeadingSpace"},
    trailing_space_val={"type": "string", "x-mcp-header": "TrailingSpace"},
    internal_space_val={"type": "string", "x-mcp-header": "InternalSpace"},
    control_char_val={"type": "string", "x-mcp-header": "ControlChar"},
    crlf_val={"type": "string", "x-mcp-header": "CrLf"},
    tab_val={"type": "string", "x-mcp-header": "Tab"},
    query={"type": "string"},
)


def test_custom_headers() -> None:
    assert tool_header_problems(CUSTOM) == []
    arguments = {
        "region": "us-west-1",
        "priority": 5,
        "verbose": False,
        "debug": True,
        "empty_val": "",
        "method_val": "POST",
        "float_val": 3.14,
        "non_ascii_val": "日本語",
        "whitespace_val": "  padded  ",
        "leading_space_val": " lead",
        "trailing_space_val": "trail ",
        "internal_space_val": "a b c",
        "control_char_val": "bell\x07",
        "crlf_val": "a\r\nb",
        "tab_val": "\tx",
        "query": "not mirrored",
    }
    assert param_headers(CUSTOM, arguments) == {
        "Mcp-Param-Region": "us-west-1",
        "Mcp-Param-Priority": "5",
        "Mcp-Param-Verbose": "false",
        "Mcp-Param-Debug": "true",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-Method": "POST",
        "Mcp-Param-NonAscii": b64("日本語"),
        "Mcp-Param-Whitespace": b64("  padded  "),
        "Mcp-Param-LeadingSpace": b64(" lead"),
        "Mcp-Param-TrailingSpace": b64("trail "),
        "Mcp-Param-InternalSpace": "a b c",
        "Mcp-Param-ControlChar": b64("bell\x07"),
        "Mcp-Param-CrLf": b64("a\r\nb"),
        "Mcp-Param-Tab": b64("\tx"),
    }


def test_custom_headers_null_and_missing_are_omitted() -> None:
    arguments = {"region": "eu", "priority": 1, "verbose": None, "query": "q"}
    assert param_headers(CUSTOM, arguments) == {
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Priority": "1",
    }


def test_nested_properties_follow_nested_arguments() -> None:
    schema = obj(
        location=obj(
            region={"type": "string", "x-mcp-header": "Region"},
            zone=obj(id={"type": "integer", "x-mcp-header": "Zone"}),
        ),
        top={"type": "boolean", "x-mcp-header": "Top"},
    )
    assert tool_header_problems(schema) == []
    args = {"location": {"region": "eu-1", "zone": {"id": 3}}, "top": True}
    assert param_headers(schema, args) == {
        "Mcp-Param-Region": "eu-1",
        "Mcp-Param-Zone": "3",
        "Mcp-Param-Top": "true",
    }
    # a missing or non-object parent: nothing to mirror
    assert param_headers(schema, {"location": "flat"}) == {}
    assert param_headers(schema, {"location": {"zone": None}}) == {}


def test_values_by_json_type() -> None:
    schema = obj(n={"type": "integer", "x-mcp-header": "N"})
    assert param_headers(schema, {"n": 3.0}) == {"Mcp-Param-N": "3"}
    assert param_headers(schema, {"n": 3.5}) == {}
    assert param_headers(schema, {"n": {"a": 1}}) == {}
    assert param_headers(schema, {"n": [1]}) == {}
    assert param_headers(schema, {"n": 10**5000}) == {}  # beyond int-to-str limits: no header


def test_invalid_annotations_never_reach_the_wire() -> None:
    for schema in INVALID_TOOLS.values():
        for name, value in param_headers(schema, _fill(schema)).items():
            assert name.startswith("Mcp-Param-")
            assert all(0x21 <= ord(ch) <= 0x7E and ch != ":" for ch in name)
            assert "\r" not in value and "\n" not in value


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: "x" for key in schema.get("properties", {})}


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=5),
        st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
        max_size=5,
    )
)
def test_param_headers_never_inject(arguments: dict[str, Any]) -> None:
    schema = obj(
        **{
            key: {"type": "string", "x-mcp-header": f"H{index}"}
            for index, key in enumerate(arguments)
        }
    )
    for value in param_headers(schema, arguments).values():
        assert all(0x20 <= ord(ch) <= 0x7E for ch in value)
