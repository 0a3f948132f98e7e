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

It is also the one check of the headers a user gives (:func:`checked_headers`): a
transport's ``headers=``, ``mcp_sync.extra_headers``, a config file's ``headers`` and the CLI's
``-H`` all call it, so each refuses the same headers with the same words.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InvalidHeaderValue
from . import meta, methods

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "PROTOCOL_VERSION_HEADER",
    "X_MCP_HEADER",
    "checked_headers",
    "decode_header_value",
    "encode_header_value",
    "header_problem",
    "merge",
    "param_headers",
    "standard_headers",
    "tool_header_problems",
    "value_problem",
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


# -- headers a user gives ----------------------------------------------------------------------

#: Hop-by-hop headers (RFC 9110 section 7.6.1): they speak for one connection, which the HTTP
#: library owns (it reuses it, and a proxy would drop them).
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"}
)
#: Headers that frame the request or say where it goes, set from the body and the URL: a
#: ``Transfer-Encoding: chunked`` next to the ``Content-Length`` of an unchunked body is a
#: request-smuggling shape, and a ``Host`` of its own sends the session, the redirects' checks
#: and a token's audience one place and the request another.
_FRAMING = frozenset({"transfer-encoding", "content-length", "host"})
#: Headers the transport sets for each message: one given would be overridden, or go out on
#: the one request that has none of its own (``initialize``).
_PROTOCOL_OWNED = frozenset(
    {"accept", "content-type", "mcp-session-id", "mcp-protocol-version", "mcp-method",
     "mcp-name", "last-event-id"}
)  # fmt: skip
# C0 controls but HTAB, and DEL (RFC 9110 section 5.5); CR and LF are named apart
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BEYOND_LATIN_1 = re.compile(r"[^\x00-\xff]")


def value_problem(value: object) -> str | None:
    """What makes ``value`` unfit to be a header's value, in words that never quote it (it is
    often a credential); None when it is fit. Latin-1 is the most a header carries: HTTP
    sends bytes, and ``http.client`` encodes a value as Latin-1."""
    if not isinstance(value, str):
        return f"its value must be a str, not {type(value).__name__}"
    if value.endswith("\n"):
        return "its value ends with a newline (strip a token read from a file)"
    if "\r" in value or "\n" in value:
        return "its value holds a line break (it would end the header and start another)"
    bad = _CONTROL.search(value)
    if bad is not None:
        return f"its value holds the control character U+{ord(bad.group()):04X}"
    if value[:1] in (" ", "\t") or value[-1:] in (" ", "\t"):
        return "its value starts or ends with whitespace (the server would strip it)"
    if not value.isascii():
        beyond = _BEYOND_LATIN_1.search(value)
        if beyond is not None:
            return (
                f"its value holds U+{ord(beyond.group()):04X}, beyond Latin-1, which a header "
                "cannot carry (encode it first, e.g. percent-encoded)"
            )
    return None


def header_problem(name: object, value: object) -> str | None:
    """What makes ``name: value`` a header the user may not give (its name is not a token;
    the HTTP library or the protocol sets it; its value is unfit, :func:`value_problem`), or
    None."""
    if not isinstance(name, str) or not _TOKEN.fullmatch(name):
        return "it is not a valid HTTP header name (an RFC 9110 token)"
    lower = name.lower()
    if lower in _FRAMING:
        return "it is a framing header, set from the URL and the body for each request"
    if lower in _HOP_BY_HOP:
        return "it is a hop-by-hop header: it speaks for the connection, which the client owns"
    if lower in _PROTOCOL_OWNED:
        return "it is set by the protocol for each message"
    return value_problem(value)


def checked_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` (a user's: ``headers=``, ``extra_headers``, a config file's, ``-H``) as a
    dict, values kept as given (a :class:`~mcp_sync.redaction.Secret` stays one). Raises
    :class:`~mcp_sync.errors.InvalidHeaderValue` (a ``ValueError``) naming the first header
    that :func:`header_problem` refuses, and why; ``TypeError`` for what is no mapping."""
    if not isinstance(headers, Mapping):
        kind = type(headers).__name__
        raise TypeError(f"headers must be a mapping of names to values, not {kind}")
    for name, value in headers.items():
        problem = header_problem(name, value)
        if problem is not None:
            raise InvalidHeaderValue(name if isinstance(name, str) else repr(name), problem)
    return dict(headers)


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
