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
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar
from urllib.parse import unquote

import pydantic

from ..errors import McpError, OutputValidationError, ProtocolError

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


def _resolve(root: Any, ref: str) -> tuple[str, Any] | None:
    """The target of a ``$ref`` to a JSON pointer in this document, else None."""
    if not ref.startswith("#") or (len(ref) > 1 and not ref.startswith("#/")):
        return None  # another document, or an anchor: jsonschema-rs resolves (or refuses) it
    node = root
    for raw in ref[2:].split("/") if len(ref) > 1 else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return ref[1:], node


def _check_expansion(root: Any) -> None:
    """Walk the schema with each local ``$ref`` followed, counting subschemas; a cycle that
    comes back without stepping into the instance is an error."""
    # Each entry: where it is, the subschema, the document its "#/..." refs point into (the
    # nearest "$id"), the schemas on the way here since the instance was last stepped into,
    # and every schema on the way here.
    stack: list[tuple[str, Any, Any, frozenset[int], frozenset[int]]] = [
        ("", root, root, frozenset(), frozenset())
    ]
    seen = 0
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
            target = _resolve(document, ref) if isinstance(ref, str) else None
            if target is None:
                continue
            if id(target[1]) in here:
                raise _SchemaProblem(
                    f"{where}/{key}",
                    f"{key} {ref!r} refers back to itself without stepping into the content",
                )
            if id(target[1]) not in chain:  # a recursion through the content is cut here
                stack.append((target[0], target[1], document, here, chain))


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
        _check_expansion(schema)
    except _SchemaProblem as problem:
        raise OutputValidationError(tool, problem.path, problem.message, in_schema=True) from None
    try:
        _check_depth(instance, "the structured content")
    except _SchemaProblem as problem:
        raise OutputValidationError(tool, "", problem.message) from None
    try:
        validator = jsonschema_rs.validator_for(
            schema, pattern_options=jsonschema_rs.RegexOptions(), retriever=_refuse
        )
    except jsonschema_rs.ValidationError as exc:
        where = _pointer(exc.instance_path)
        raise OutputValidationError(
            tool, where, _short(_schema_message(exc)), in_schema=True
        ) from None
    except BaseException as exc:  # e.g. ValueError("Recursion limit reached"), a Rust panic
        _reraise_interrupts(exc)
        raise OutputValidationError(tool, "", _short(str(exc)), in_schema=True) from None
    try:
        first = next(iter(validator.iter_errors(instance)), None)
    except BaseException as exc:  # content that is not JSON, e.g. bytes from a Python handler
        _reraise_interrupts(exc)
        raise OutputValidationError(tool, "", _short(str(exc))) from None
    if first is not None:
        raise OutputValidationError(tool, _pointer(first.instance_path), _short(first.message))


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
