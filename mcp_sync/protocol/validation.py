"""Checking what a server sent: results against their types, and a tool's
``structuredContent`` against its ``outputSchema``.

Uses ``jsonschema`` (the ``validation`` extra), imported only when a caller asks to validate.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

from ..errors import McpError, OutputValidationError, ProtocolError

__all__ = ["OutputValidationError", "parse_result", "validate_structured"]


def validate_structured(tool: str, schema: dict[str, Any], instance: Any) -> None:
    """Raise :class:`OutputValidationError` unless ``instance`` matches ``schema``."""
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - depends on the environment
        raise McpError(
            "validating tool output needs jsonschema: pip install 'mcp-sync-client[validation]'"
        ) from None
    if instance is None:
        raise OutputValidationError(tool, "", "the tool declares an outputSchema but sent none")
    validator_cls = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    errors = sorted(validator_cls(schema).iter_errors(instance), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        path = "/" + "/".join(str(part) for part in first.absolute_path)
        raise OutputValidationError(tool, path if first.absolute_path else "", first.message)


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
