"""Turning ``key=value`` words into tool arguments, guided by the tool's input schema."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..protocol.schema_refs import resolve_local

__all__ = [
    "ArgumentError",
    "effective_schema",
    "parse_arguments",
    "parse_json_object",
    "unknown_arguments",
]


class ArgumentError(ValueError):
    """A command-line argument does not fit the tool's (or prompt's) parameters."""


def parse_json_object(text: str, what: str = "--arguments") -> dict[str, Any]:
    """``text`` as a JSON object (``-`` is not handled here: read stdin first)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentError(f"{what}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ArgumentError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


#: How far ``$ref`` and ``allOf`` are followed for one parameter, and how many sub-schemas
#: are looked at: a schema comes from a server and may loop or fan out without end.
MAX_DEPTH = 16
MAX_NODES = 200
#: The order in which to try the types a value may have: text is the last resort.
_ORDER = ["null", "boolean", "integer", "number", "object", "array", "string"]


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES

    def spend(self) -> bool:
        """False once the budget is spent."""
        self.left -= 1
        return self.left >= 0


def effective_schema(
    schema: Any, root: Any, budget: _Budget | None = None, depth: int = 0
) -> dict[str, Any]:
    """``schema`` with its local ``$ref`` followed and its ``allOf`` merged in (its own keys
    win); ``{}`` (untyped) where the depth or node budget runs out."""
    budget = budget or _Budget()
    if not isinstance(schema, dict) or depth > MAX_DEPTH or not budget.spend():
        return {}
    out = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
    parts: list[dict[str, Any]] = []
    ref = schema.get("$ref")
    if isinstance(ref, str):
        parts.append(effective_schema(resolve_local(root, ref), root, budget, depth + 1))
    members = schema.get("allOf")
    for member in members[:MAX_NODES] if isinstance(members, list) else []:
        parts.append(effective_schema(member, root, budget, depth + 1))
    for part in parts:
        for key, value in part.items():
            mine = out.get(key)
            if key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
                out[key] = {**value, **mine}
            else:
                out.setdefault(key, value)
    return out


def _types_of(schema: Any, root: Any = None, budget: _Budget | None = None) -> list[str]:
    """The JSON types a schema allows, in the order to try them (string last)."""
    budget = budget or _Budget()
    schema = effective_schema(schema, root, budget)
    kinds: list[str] = []
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds.append(kind)
    elif isinstance(kind, list):
        kinds.extend(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        for option in options[:MAX_NODES] if isinstance(options, list) else []:
            kinds.extend(_types_of(option, root, budget))
    if not kinds:
        if "enum" in schema and isinstance(schema["enum"], list):
            kinds.extend(_json_type(v) for v in schema["enum"])
        elif "const" in schema:
            kinds.append(_json_type(schema["const"]))
        elif "properties" in schema:
            kinds.append("object")
    return sorted(dict.fromkeys(kinds), key=lambda k: _ORDER.index(k) if k in _ORDER else 99)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_BOOLEANS = {
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "1": True,
    "0": False,
    "on": True,
    "off": False,
}


def _convert(kind: str, raw: str) -> tuple[bool, Any]:
    """(ok, value) for ``raw`` read as JSON type ``kind``."""
    if kind == "string":
        return True, raw
    if kind == "null":
        return (raw == "null"), None
    if kind == "boolean":
        lowered = raw.lower()
        return (lowered in _BOOLEANS), _BOOLEANS.get(lowered)
    if kind == "integer":
        try:
            return True, int(raw)
        except ValueError:
            try:
                number = float(raw)
            except ValueError:
                return False, None
            return number.is_integer(), int(number) if number.is_integer() else None
    if kind == "number":
        try:
            return True, int(raw)
        except ValueError:
            pass
        try:
            number = float(raw)
        except ValueError:
            return False, None
        return number == number and number not in (float("inf"), float("-inf")), number
    if kind in ("object", "array"):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return False, None
        return isinstance(value, dict if kind == "object" else list), value
    return False, None


_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a JSON object",
    "array": "a JSON array",
    "null": "null",
    "string": "a string",
}


def _array_items(schema: dict[str, Any], root: Any, budget: _Budget) -> Any:
    """The ``items`` schema of the array option of ``schema`` (itself or an ``anyOf``)."""
    if "items" in schema:
        return schema["items"]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        for option in options[:MAX_NODES] if isinstance(options, list) else []:
            resolved = effective_schema(option, root, budget)
            if "array" in _types_of(resolved, root, budget) and "items" in resolved:
                return resolved["items"]
    return None


def _in_enum(value: Any, schema: dict[str, Any]) -> bool:
    enum = schema.get("enum")
    if not isinstance(enum, list):
        return True
    return any(
        value == v
        and isinstance(value, (bool, str)) == isinstance(v, (bool, str))
        and isinstance(value, bool) == isinstance(v, bool)
        for v in enum
    )


def _options(
    schema: dict[str, Any], root: Any, budget: _Budget, *, ranked: bool = True
) -> list[dict[str, Any]]:
    """The ``anyOf``/``oneOf`` options of a schema that has no type of its own, resolved;
    ``ranked``: in the order to try them (the one whose type comes first in ``_ORDER``)."""
    if "type" in schema or "enum" in schema or "const" in schema:
        return []
    found = []
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        for option in options[:MAX_NODES] if isinstance(options, list) else []:
            found.append(effective_schema(option, root, budget))

    def rank(option: dict[str, Any]) -> int:
        kinds = _types_of(option, root, budget)
        return min((_ORDER.index(k) for k in kinds if k in _ORDER), default=len(_ORDER))

    return sorted(found, key=rank) if ranked else found


def _read(
    raw: str, schema: Any, root: Any, budget: _Budget, *, wrap: bool, depth: int = 0
) -> tuple[bool, Any]:
    """(ok, value): ``raw`` as the first type ``schema`` allows that it parses as (and that
    its ``enum`` lists, an option's own enum included); with ``wrap``, failing that, as a
    one-item list of an array's item."""
    resolved = effective_schema(schema, root, budget)
    kinds = _types_of(resolved, root, budget)
    if not kinds:
        # No type to go by: JSON if it parses (numbers, true, {...}), else the text.
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        return _in_enum(value, resolved), value
    options = _options(resolved, root, budget) if depth < MAX_DEPTH else []
    if options:
        for option in options:
            ok, value = _read(raw, option, root, budget, wrap=False, depth=depth + 1)
            if ok:
                return True, value
    else:
        for kind in kinds:
            ok, value = _convert(kind, raw)
            if ok and _in_enum(value, resolved):
                return True, value
    if wrap and "array" in kinds:
        # files=a.txt for an array of strings: a list of one
        ok, item = _read(raw, _array_items(resolved, root, budget), root, budget, wrap=False)
        if ok:
            return True, [item]
    return False, None


def _expected(schema: Any, root: Any, budget: _Budget, depth: int = 0) -> list[str]:
    """What ``schema`` takes, in words: ``one of "a", "b"``, ``an integer``, ``null``."""
    resolved = effective_schema(schema, root, budget)
    enum = resolved.get("enum")
    if isinstance(enum, list) and enum:
        shown = ", ".join(json.dumps(v) for v in enum[:10]) + (", ..." if len(enum) > 10 else "")
        return [f"one of {shown}"]
    options = _options(resolved, root, budget, ranked=False) if depth < MAX_DEPTH else []
    if options:
        words = [w for option in options for w in _expected(option, root, budget, depth + 1)]
        return list(dict.fromkeys(words))
    return [_NAMES.get(k, k) for k in _types_of(resolved, root, budget)]


def coerce(name: str, raw: str, schema: Any, root: Any = None) -> Any:
    """``raw`` converted to the first type ``schema`` allows that it parses as; ``root`` is
    the document its local ``$ref`` point into (the tool's input schema)."""
    ok, value = _read(raw, schema, root, _Budget(), wrap=True)
    if ok:
        return value
    expected = " or ".join(_expected(schema, root, _Budget())) or "a value"
    kinds = _types_of(effective_schema(schema, root, _Budget()), root, _Budget())
    hint = f" (a list is written as JSON: {name}='[...]')" if "array" in kinds else ""
    raise ArgumentError(f"argument {name!r}: expected {expected}, got {raw!r}{hint}")


def parse_arguments(
    words: Iterable[str],
    schema: Mapping[str, Any] | None,
    *,
    base: Mapping[str, Any] | None = None,
    check_required: bool = True,
) -> dict[str, Any]:
    """Build an arguments object from ``key=value`` words (``key:=<json>`` for raw JSON).

    Values are converted to the types ``schema`` gives each property (numbers, booleans, JSON
    objects and arrays); a property without a type takes JSON if the text parses as JSON, else
    the text. ``base`` (from ``--arguments``) is updated by the words.
    """
    schema = schema or {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    assert isinstance(properties, dict)
    closed = schema.get("additionalProperties") is False
    arguments: dict[str, Any] = dict(base or {})
    for word in words:
        key, sep, raw = word.partition("=")
        if not sep or not key:
            raise ArgumentError(f"expected key=value, got {word!r}")
        if key.endswith(":"):
            key = key[:-1]
            try:
                arguments[key] = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ArgumentError(f"argument {key!r}: not valid JSON ({exc.msg})") from None
            continue
        arguments[key] = coerce(key, raw, properties.get(key), schema)
    unknown = unknown_arguments(arguments, schema)
    if unknown and closed:
        known = ", ".join(properties) or "none"
        raise ArgumentError(f"unknown argument {unknown[0]!r} (parameters: {known})")
    if check_required:
        required = schema.get("required")
        missing = [
            str(name)
            for name in (required if isinstance(required, list) else [])
            if name not in arguments
        ]
        if missing:
            raise ArgumentError(
                f"missing required argument{'s' if len(missing) > 1 else ''}: " + ", ".join(missing)
            )
    return arguments


def unknown_arguments(arguments: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    """The keys of ``arguments`` that ``schema`` does not name (none if it names no
    properties and does not forbid extra ones: such a schema says nothing either way)."""
    schema = schema or {}
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        if schema.get("additionalProperties") is not False:
            return []
        properties = {}
    return [key for key in arguments if key not in properties]
