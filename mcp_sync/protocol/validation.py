"""Checking what a server sent: results against their types, and a tool's
``structuredContent`` against its ``outputSchema``.

The schema and the content both come from the server, which may be hostile, so checking one
against the other must end soon, whatever they hold, and fail only with
:class:`OutputValidationError`:

- **Patterns in linear time.** The engine is ``jsonschema-rs`` (the ``validation`` extra),
  with its patterns compiled by Rust's ``regex`` crate (``RegexOptions``), whose matching time is
  linear in the text. Python's ``jsonschema`` matches ``pattern`` with ``re``, which backtracks
  while holding the GIL: ``"^(a+)+$"`` against 28 ``a`` and a ``!`` froze every thread of the
  process for 8 s, and no timeout could fire. ``google-re2`` plugged into ``jsonschema`` was the
  other way, and was not taken: ``jsonschema`` calls ``re`` itself for ``pattern`` and
  ``patternProperties`` (both keywords would need replacing), it stays a recursive validator
  (``RecursionError`` on a schema that refers to itself), and ``re2`` ships a wheel per Python
  version where ``jsonschema-rs`` ships one ``abi3`` wheel for 3.10 onwards (checked on 3.10 and
  3.13). The jsonschema-rs default, ``fancy-regex``, is not used: it backtracks too, only up to
  a step limit. A pattern the linear engine cannot compile (a backreference, a lookaround) is a
  schema error naming it; there is no fallback to ``re``. This is the only place mcp_sync
  matches a pattern a server supplied: elicitation answers and the CLI's arguments are not
  checked against patterns.
- **Nothing is fetched.** A ``$ref`` outside the schema document (``http:``, ``file:``) goes to
  a retriever that refuses it, so the schema is an error naming the reference.
- **Bounded work.** The schema and the content are each at most :data:`MAX_DEPTH` levels deep,
  and the schema, with its ``$ref`` followed, at most :data:`MAX_SUBSCHEMAS` subschemas: twenty
  ``$defs`` that each refer twice to the next make a million. A ``$ref`` cycle that never steps
  into the content (``{"$ref": "#"}``, ``{"anyOf": [{"$ref": "#"}]}``) has no meaning: an error.
- **Errors found in bounded time.** The verdict is ``is_valid``, which stays fast. Collecting
  the errors of a schema that recurs does not: every branch of an ``anyOf`` (or ``allOf``, or
  a ``$ref`` beside ``items``) is checked at every level of the content, so the work doubles
  with each level (18 levels took 50 s). For such a schema the mismatch is located with
  ``is_valid`` alone, level by level (:func:`_locate`), and its errors are collected only where
  nothing is left to recur into; where the way down is ambiguous, the error names the place and
  the subschema without the detail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

import pydantic

from ..errors import McpError, OutputValidationError, ProtocolError
from .schema_refs import resolve_local

__all__ = [
    "MAX_DEPTH",
    "MAX_SUBSCHEMAS",
    "OutputValidationError",
    "parse_result",
    "validate_structured",
]

#: Deepest nesting (objects and arrays) of an output schema or of the content it checks.
MAX_DEPTH = 128
#: Most subschemas an output schema may have once each ``$ref`` is followed (cycles cut).
MAX_SUBSCHEMAS = 20_000
_MESSAGE_LIMIT = 500

# Keywords whose subschemas apply to a part of the instance (a property, an item, a key):
# a $ref cycle through one of these ends with the instance.
_INTO_ONE = (
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
)
_INTO_MANY = ("properties", "patternProperties")
_INTO_LIST = ("prefixItems", "items")
# Keywords whose subschemas apply to the instance itself.
_HERE_ONE = ("not", "if", "then", "else")
_HERE_LIST = ("allOf", "anyOf", "oneOf")
_HERE_MANY = ("dependentSchemas", "dependencies")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


class _SchemaProblem(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path, self.message = path, message


def _pointer(parts: list[str | int]) -> str:
    return "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in parts)


def _check_depth(value: Any, what: str) -> None:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise _SchemaProblem("", f"{what} is nested more than {MAX_DEPTH} levels deep")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)


def _subschemas(schema: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """(location, subschema, steps into the instance) for each subschema ``schema`` applies."""
    for key in _INTO_ONE + _HERE_ONE:
        sub = schema.get(key)
        if isinstance(sub, (dict, bool)):
            yield f"/{key}", sub, key not in _HERE_ONE
    for key in _INTO_LIST + _HERE_LIST:
        subs = schema.get(key)
        if isinstance(subs, list):
            for i, sub in enumerate(subs):
                yield f"/{key}/{i}", sub, key not in _HERE_LIST
    for key in _INTO_MANY + _HERE_MANY:
        subs = schema.get(key)
        if isinstance(subs, dict):
            for name, sub in subs.items():
                if isinstance(sub, (dict, bool)):
                    yield _pointer([key, name]), sub, key not in _HERE_MANY


def _check_expansion(root: Any) -> bool:
    """Walk the schema with each local ``$ref`` followed, counting subschemas; a cycle that
    comes back without stepping into the instance is an error. True if the schema may recur
    (a ``$ref`` back into itself through the content, or one this walk cannot follow)."""
    # Each entry: where it is, the subschema, the document its "#/..." refs point into (the
    # nearest "$id"), the schemas on the way here since the instance was last stepped into,
    # and every schema on the way here.
    stack: list[tuple[str, Any, Any, frozenset[int], frozenset[int]]] = [
        ("", root, root, frozenset(), frozenset())
    ]
    seen, recurs = 0, False
    while stack:
        where, schema, document, here, chain = stack.pop()
        seen += 1
        if seen > MAX_SUBSCHEMAS:
            raise _SchemaProblem(
                where, f"it has more than {MAX_SUBSCHEMAS} subschemas once its $refs are followed"
            )
        if not isinstance(schema, dict):
            continue
        if schema is not root and isinstance(schema.get("$id"), str):
            document = schema
        here, chain = here | {id(schema)}, chain | {id(schema)}
        for location, sub, steps_in in _subschemas(schema):
            stack.append(
                (where + location, sub, document, frozenset() if steps_in else here, chain)
            )
        for key in _REFS:
            ref = schema.get(key)
            if not isinstance(ref, str):
                continue
            target = resolve_local(document, ref)
            if target is None:
                recurs = True
                continue
            if id(target) in here:
                raise _SchemaProblem(
                    f"{where}/{key}",
                    f"{key} {ref!r} refers back to itself without stepping into the content",
                )
            if id(target) in chain:  # a recursion through the content is cut here
                recurs = True
            else:
                stack.append((ref[1:], target, document, here, chain))
    return recurs


def _refuse(uri: str) -> Any:
    raise LookupError(f"{uri} is outside the schema, and mcp_sync never fetches a schema")


def _schema_message(error: Any) -> str:
    message: str = error.message
    if message.endswith('is not a "regex"'):
        message += " for a linear-time engine (no backreferences, no lookaround)"
    if "retrieving it failed" in message and "never fetches" in message:
        message = message.split(": LookupError: ", 1)[-1]
    return message


def validate_structured(tool: str, schema: dict[str, Any], instance: Any) -> None:
    """Raise :class:`OutputValidationError` unless ``instance`` matches ``schema``; a schema
    that cannot be used (invalid, remote, too deep, an unsupported pattern) raises it too,
    with ``in_schema`` set."""
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - depends on the environment
        raise McpError(
            "validating tool output needs jsonschema-rs: pip install 'mcp-sync-client[validation]'"
        ) from None
    if instance is None:
        raise OutputValidationError(tool, "", "the tool declares an outputSchema but sent none")
    try:
        _check_depth(schema, "the outputSchema")
        recurs = _check_expansion(schema)
    except _SchemaProblem as problem:
        raise OutputValidationError(tool, problem.path, problem.message, in_schema=True) from None
    try:
        _check_depth(instance, "the structured content")
    except _SchemaProblem as problem:
        raise OutputValidationError(tool, "", problem.message) from None
    options: dict[str, Any] = {
        "pattern_options": jsonschema_rs.RegexOptions(),
        "retriever": _refuse,
    }
    try:
        validator = jsonschema_rs.validator_for(schema, **options)
    except jsonschema_rs.ValidationError as exc:
        where = _pointer(exc.instance_path)
        raise OutputValidationError(
            tool, where, _short(_schema_message(exc)), in_schema=True
        ) from None
    except BaseException as exc:  # e.g. ValueError("Recursion limit reached"), a Rust panic
        _reraise_interrupts(exc)
        raise OutputValidationError(tool, "", _short(str(exc)), in_schema=True) from None
    try:
        if validator.is_valid(instance):
            return
        if recurs:
            validators = jsonschema_rs.validator_map_for(schema, **options)
            path, pointer, value = _locate(schema, validators, instance)
            if _depth(value) <= 1:  # nothing left to recur into: collecting errors is cheap
                validator = validators[pointer]
                instance = value
            else:
                message = f"it does not match the outputSchema at {pointer}"
                raise OutputValidationError(tool, _pointer(path), message)
        else:
            path, pointer = [], "#"
        first = next(iter(validator.iter_errors(instance)), None)
    except OutputValidationError:
        raise
    except BaseException as exc:  # content that is not JSON, e.g. bytes from a Python handler
        _reraise_interrupts(exc)
        raise OutputValidationError(tool, "", _short(str(exc))) from None
    if first is None:  # is_valid said it does not match
        message = f"it does not match the outputSchema at {pointer}"
        raise OutputValidationError(tool, _pointer(path), message)
    where = _pointer([*path, *first.instance_path])
    raise OutputValidationError(tool, where, _short(first.message))


def _children(schema: dict[str, Any], pointer: str, value: Any) -> Iterator[tuple[Any, str, Any]]:
    """(key, subschema pointer, part of ``value``) for each part a subschema applies to, as
    far as that can be told without matching patterns."""
    if isinstance(value, dict):
        properties = schema.get("properties")
        named = properties if isinstance(properties, dict) else {}
        for key, part in value.items():
            if key in named:
                yield key, pointer + _pointer(["properties", key]), part
            elif "additionalProperties" in schema and "patternProperties" not in schema:
                yield key, pointer + "/additionalProperties", part
    elif isinstance(value, list):
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = schema.get("items")
        for i, part in enumerate(value):
            if i < len(prefix):
                yield i, f"{pointer}/prefixItems/{i}", part
            elif isinstance(items, list) and i < len(items):
                yield i, f"{pointer}/items/{i}", part
            elif isinstance(items, (dict, bool)):
                yield i, f"{pointer}/items", part


def _locate(root: Any, validators: Any, instance: Any) -> tuple[list[str | int], str, Any]:
    """Where the content stops matching a schema that may recur: found with ``is_valid``
    alone, which stays fast where collecting errors (every branch of an ``anyOf`` at every
    level) takes time exponential in the content's depth."""
    path: list[str | int] = []
    pointer, schema, value = "#", root, instance
    for _ in range(MAX_SUBSCHEMAS):
        if not isinstance(schema, dict):
            break
        moves: list[tuple[Any, str, Any]] = []
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            moves.append((None, "#" + ref[1:], value))
        for i, _ in enumerate(_list(schema.get("allOf"))):
            moves.append((None, f"{pointer}/allOf/{i}", value))
        for key in ("anyOf", "oneOf"):
            # Follow the one branch that could take a value of this type, if only one could.
            could = [i for i, sub in enumerate(_list(schema.get(key))) if _could_take(sub, value)]
            if len(could) == 1:
                moves.append((None, f"{pointer}/{key}/{could[0]}", value))
        moves.extend(_children(schema, pointer, value))
        for key, target, part in moves:
            sub = validators.get(target)
            if sub is not None and not sub.is_valid(part):
                found = resolve_local(root, target)
                if found is None:
                    continue
                pointer, schema, value = target, found, part
                if key is not None:
                    path.append(key)
                break
        else:
            break
    return path, pointer, value


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _could_take(schema: Any, value: Any) -> bool:
    """False if ``schema`` names types and the value's JSON type is not among them."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind is None:
        return schema is not False
    kinds = {kind} if isinstance(kind, str) else set(_list(kind))
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int):
        return bool(kinds & {"integer", "number"})
    names = {float: "number", str: "string", list: "array", dict: "object", type(None): "null"}
    return names.get(type(value)) in kinds


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _short(message: str) -> str:
    """A message quotes the value that failed, which may be the whole (large) content."""
    if len(message) <= _MESSAGE_LIMIT:
        return message
    keep = _MESSAGE_LIMIT // 2  # the value's start, and the end that says what was wrong
    return f"{message[:keep]} ... {message[-keep:]}"


def _reraise_interrupts(exc: BaseException) -> None:
    # pyo3 raises a Rust panic as a BaseException (PanicException); Ctrl-C must stay Ctrl-C.
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        raise exc


_Model = TypeVar("_Model", bound=pydantic.BaseModel)


def parse_result(method: str, result_type: type[_Model], raw: Any) -> _Model:
    """``raw`` as a ``result_type``; a result of the wrong shape raises :class:`ProtocolError`
    naming the method and the fields, instead of a pydantic traceback."""
    try:
        # The validator itself: model_validate's Python wrapper costs a third of a small
        # result's parse, and every typed call pays it.
        result: _Model = result_type.__pydantic_validator__.validate_python(raw)
        return result
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        raise ProtocolError(
            f"{method}: the server's result has the wrong shape: {problems}"
        ) from None
