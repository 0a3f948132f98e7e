"""Turning ``key=value`` words into tool arguments, guided by the tool's input schema."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ArgumentError", "parse_arguments", "parse_json_object", "unknown_arguments"]


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


def _types_of(schema: Any) -> list[str]:
    """The JSON types a schema allows, in the order to try them (string last)."""
    if not isinstance(schema, dict):
        return []
    kinds: list[str] = []
    kind = schema.get("type")
    if isinstance(kind, str):
        kinds.append(kind)
    elif isinstance(kind, list):
        kinds.extend(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or []:
            kinds.extend(_types_of(option))
    if not kinds:
        if "enum" in schema and isinstance(schema["enum"], list):
            kinds.extend(_json_type(v) for v in schema["enum"])
        elif "const" in schema:
            kinds.append(_json_type(schema["const"]))
        elif "properties" in schema:
            kinds.append("object")
    order = ["null", "boolean", "integer", "number", "object", "array", "string"]
    return sorted(dict.fromkeys(kinds), key=lambda k: order.index(k) if k in order else 99)


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


def coerce(name: str, raw: str, schema: Any) -> Any:
    """``raw`` converted to the first type ``schema`` allows that it parses as."""
    kinds = _types_of(schema)
    if not kinds:
        # No type to go by: JSON if it parses (numbers, true, {...}), else the text.
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    for kind in kinds:
        ok, value = _convert(kind, raw)
        if ok:
            return value
    expected = " or ".join(_NAMES.get(k, k) for k in kinds)
    raise ArgumentError(f"argument {name!r}: expected {expected}, got {raw!r}")


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
        arguments[key] = coerce(key, raw, properties.get(key))
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
