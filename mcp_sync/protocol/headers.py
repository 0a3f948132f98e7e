"""The HTTP headers of the 2026-07-28 Streamable HTTP transport, as pure functions (no I/O).

Every POST of the stateless era mirrors parts of its JSON-RPC body into headers, so that
gateways can route without reading bodies:

- ``MCP-Protocol-Version``: the version the request speaks (equal to its ``_meta`` value);
- ``Mcp-Method``: the JSON-RPC ``method``;
- ``Mcp-Name``: ``params.name`` of ``tools/call`` and ``prompts/get``, ``params.uri`` of
  ``resources/read``, ``params.taskId`` of ``tasks/get|update|cancel`` (tasks extension);
- ``Mcp-Param-<Name>``: for each tool argument whose ``inputSchema`` property carries
  ``"x-mcp-header": "<Name>"``, its value, when present and not null.

Values travel as they are when they are plain visible ASCII; anything else is sent as
``=?base64?<base64 of the UTF-8 bytes>?=`` (:func:`encode_header_value`). No input can make an
encoded value contain CR, LF or any other control character, and header names built from a
server's schema are checked to be RFC 9110 tokens, so a server (or a user's argument) cannot
inject headers.

Rules chosen where the spec leaves room:

- A string is wrapped when it *starts with* ``=?base64?`` in any letter case, a superset of
  "looks like the sentinel": a receiver that reads the prefix case-insensitively, or without
  checking the ``?=`` suffix, still gets the exact value back.
- The empty string is plain (an empty header value).
- ``x-mcp-header`` is accepted only on a property whose ``type`` is exactly one of
  ``"string"``, ``"integer"``, ``"boolean"``; a missing ``type`` or a list of types (even
  ``["string", "null"]``) is a problem, since the client could not know what it mirrors.
- Argument values are mirrored by their JSON type, not the schema's: ``true``/``false``,
  integers (and integral floats such as ``3.0``) in decimal, strings encoded; objects,
  arrays and non-integral numbers are not mirrored (the server rejects the call either way).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from typing import Any

from . import meta, methods

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "X_MCP_HEADER",
    "decode_header_value",
    "encode_header_value",
    "merge",
    "param_headers",
    "standard_headers",
    "tool_header_problems",
]

PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"
#: The ``inputSchema`` property annotation naming a ``Mcp-Param-*`` header.
X_MCP_HEADER = "x-mcp-header"

_PREFIX = "=?base64?"
_SUFFIX = "?="
# RFC 9110 section 5.6.2: token = 1*tchar
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VISIBLE = re.compile(r"[\x20-\x7e]*")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})

# JSON Schema keywords whose value is a schema, a list of schemas, or a map of schemas.
# ``properties`` is the one keyword that keeps a position reachable for x-mcp-header; data
# keywords (default, examples, const, enum) are never entered and ``$ref`` is not followed.
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalItems",
        "contains",
        "unevaluatedItems",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAPS = frozenset(
    {"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)


# -- values -------------------------------------------------------------------------------------


def _is_plain(text: str) -> bool:
    return (
        _VISIBLE.fullmatch(text) is not None
        and not text.startswith(" ")
        and not text.endswith(" ")
        and text[: len(_PREFIX)].lower() != _PREFIX
    )


def merge(headers: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``headers`` updated with ``extra``, a name in any letter case replacing the old one."""
    for name, value in extra.items():
        lower = name.lower()
        for old in [key for key in headers if key.lower() == lower]:
            del headers[old]
        headers[name] = value
    return headers


def encode_header_value(value: str | int | bool) -> str:
    """``value`` as an HTTP header value: a plain string as-is, else the base64 sentinel.

    Booleans are ``true``/``false``, integers decimal. A string is plain when it is visible
    ASCII (0x20-0x7E) with no space at either end and does not start like the sentinel; any
    other string becomes ``=?base64?<base64(utf-8)>?=``. The result never holds a control
    character. Raises ``TypeError`` for other types.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot put a {type(value).__name__} in a header")
    if _is_plain(value):
        return value
    # surrogatepass: a lone surrogate (possible in a Python str) still round-trips
    payload = base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")
    return f"{_PREFIX}{payload}{_SUFFIX}"


def decode_header_value(text: str) -> str:
    """The value :func:`encode_header_value` encoded: the sentinel decoded, anything else as-is.

    The sentinel is case-sensitive; a malformed one (bad or non-canonical base64, bad UTF-8)
    raises ``ValueError``.
    """
    if not (
        text.startswith(_PREFIX)
        and text.endswith(_SUFFIX)
        and len(text) >= len(_PREFIX) + len(_SUFFIX)
    ):
        return text
    payload = text[len(_PREFIX) : len(text) - len(_SUFFIX)]
    try:
        raw = base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"malformed base64 header value: {exc}") from None
    if base64.b64encode(raw).decode("ascii") != payload:
        raise ValueError("non-canonical base64 header value")
    try:
        return raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise ValueError(f"base64 header value is not UTF-8: {exc}") from None


# -- standard headers ---------------------------------------------------------------------------


def _plain_token(value: object) -> str | None:
    return value if isinstance(value, str) and _TOKEN.fullmatch(value) else None


def standard_headers(message: Mapping[str, Any], protocol_version: str) -> dict[str, str]:
    """``MCP-Protocol-Version``, ``Mcp-Method`` and (where defined) ``Mcp-Name`` for a message.

    The version is the message's ``params._meta["io.modelcontextprotocol/protocolVersion"]``
    when it has one (it must equal the header), else ``protocol_version``.
    """
    params = message.get("params")
    params = params if isinstance(params, Mapping) else {}
    meta_map = params.get("_meta")
    version = None
    if isinstance(meta_map, Mapping):
        version = _plain_token(meta_map.get(meta.PROTOCOL_VERSION))
    headers = {PROTOCOL_VERSION_HEADER: version or encode_header_value(protocol_version)}
    method = message.get("method")
    if isinstance(method, str):
        headers[METHOD_HEADER] = encode_header_value(method)
        field = methods.method(method).name_field
        name = params.get(field) if field is not None else None
        if isinstance(name, str):
            headers[NAME_HEADER] = encode_header_value(name)
    return headers


# -- x-mcp-header -------------------------------------------------------------------------------


def _schema_positions(root: object) -> Iterator[tuple[tuple[str, ...] | None, Mapping[str, Any]]]:
    """``(path, schema)`` for every schema position; ``path`` is the chain of ``properties``
    keys from the root, or None once another keyword was crossed. Iterative: any depth."""
    todo: list[tuple[tuple[str, ...] | None, object]] = [((), root)]
    while todo:
        path, node = todo.pop()
        if not isinstance(node, Mapping):
            continue
        yield path, node
        children: list[tuple[tuple[str, ...] | None, object]] = []
        for key, value in node.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    children.append((None if path is None else (*path, str(name)), sub))
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                children.extend((None, sub) for sub in value.values())
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                children.extend((None, sub) for sub in value)
            elif key in _ONE_SCHEMA:
                children.append((None, value))
        todo.extend(reversed(children))  # visited in document order: "b duplicates a"


def tool_header_problems(input_schema: Mapping[str, Any]) -> list[str]:
    """What is wrong with a tool's ``x-mcp-header`` annotations; empty when they are valid.

    An annotation must be a non-empty RFC 9110 token, unique case-insensitively across the
    schema, on a property of type ``string``, ``integer`` or ``boolean``, reached from the
    root through ``properties`` alone. A client drops a tool with problems from its list.
    """
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path, schema in _schema_positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        annotation = schema[X_MCP_HEADER]
        if not path:
            where = "the schema root" if path == () else "a position outside `properties` chains"
            problems.append(f"{X_MCP_HEADER} at {where}: only properties may carry it")
            continue
        where = ".".join(path)
        if not isinstance(annotation, str):
            kind_name = type(annotation).__name__
            problems.append(f"{where}: {X_MCP_HEADER} is a {kind_name}, not a string")
            continue
        if not annotation:
            problems.append(f"{where}: {X_MCP_HEADER} is empty")
            continue
        if not _TOKEN.fullmatch(annotation):
            problems.append(f"{where}: {X_MCP_HEADER} {annotation!r} is not an RFC 9110 token")
            continue
        kind = schema.get("type")
        if not (isinstance(kind, str) and kind in _HEADER_TYPES):
            problems.append(
                f"{where}: {X_MCP_HEADER} needs type string, integer or boolean (type is {kind!r})"
            )
        other = seen.setdefault(annotation.lower(), where)
        if other != where:
            problems.append(f"{where}: {X_MCP_HEADER} {annotation!r} duplicates the one on {other}")
    return problems


def _render(value: object) -> str | None:
    if isinstance(value, bool | int | str):
        try:
            return encode_header_value(value)
        except ValueError:  # an int beyond Python's int-to-str digit limit
            return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None


def param_headers(input_schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-<Name>`` headers of a ``tools/call`` with these ``arguments``.

    One per annotated property (nested ``properties`` chains follow nested argument objects)
    whose argument is present and not null. Annotations that are not tokens are skipped, so a
    schema with problems (see :func:`tool_header_problems`) never yields a malformed header.
    """
    headers: dict[str, str] = {}
    for path, schema in _schema_positions(input_schema):
        name = _plain_token(schema.get(X_MCP_HEADER))
        if not path or name is None:
            continue
        value: object = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        rendered = _render(value) if value is not None else None
        if rendered is not None:
            headers.setdefault(f"{PARAM_HEADER_PREFIX}{name}", rendered)
    return headers
