"""An MCP server's tools for google-genai (extra ``google-genai``): Python callables for its
automatic function calling, or function declarations for a loop of your own.

::

    from google import genai
    from google.genai import types
    from mcp_sync.integrations.google_genai import genai_functions

    response = genai.Client().models.generate_content(
        model="gemini-2.5-flash",
        contents="What time is it in Tokyo?",
        config=types.GenerateContentConfig(tools=genai_functions(client)),
    )

google-genai reads a callable's signature to declare it, and calls it with the model's
arguments until the model answers. :func:`genai_functions` gives the typed functions of
``client.functions`` (one per tool, named as there: ``get-time`` is ``get_time``), without
their ``timeout`` and ``signal`` extras, which are for Python callers, not models, and with
the tool's description as their docstring (which google-genai sends as the description).
google-genai checks each argument with ``isinstance`` against its annotation, which a
``Literal`` or ``TypedDict`` cannot take: such a parameter is declared with its plain type
(``str``, ``dict``), so the model does not see an enum's choices or an object's fields there
(the function still checks the arguments against the tool's schema before calling). For the
exact schemas, use :func:`genai_declarations`. A function
returns what ``client.functions`` returns (the structured content, else the text); a result
with ``isError`` raises :class:`~mcp_sync.errors.ToolError`, which google-genai sends the
model as ``{"error": ...}``.

:func:`genai_declarations` gives ``FunctionDeclaration`` objects carrying each tool's input
schema as JSON Schema (``parameters_json_schema``), the tool's own name, and
:func:`function_response` answers one of the model's ``FunctionCall`` parts with the
``Part`` to send back.
"""

from __future__ import annotations

import functools
import inspect
import operator
import typing
from collections.abc import Callable
from types import UnionType
from typing import Any, Literal, Union

from google.genai import types
from typing_extensions import is_typeddict

from ..client import Client
from ..llm import to_llm_text
from ..protocol.types import Tool
from ._results import clean_tool, description_of, tools_of

__all__ = ["function_response", "genai_declarations", "genai_functions"]

_EXTRAS = ("timeout", "signal")


def genai_functions(client: Client, *, names: list[str] | None = None) -> list[Callable[..., Any]]:
    """The typed functions of ``client.functions`` (or of the tools named in ``names``, by
    tool name or Python name; an unknown one raises :class:`~mcp_sync.errors.UnknownName`)
    as callables for ``GenerateContentConfig(tools=...)``."""
    functions = client.functions
    return [_for_model(functions[name]) for name in (list(functions) if names is None else names)]


def genai_declarations(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
) -> list[types.FunctionDeclaration]:
    """The server's tools (or ``tools``, or those named in ``names``) as function
    declarations, each with the tool's input schema (cleaned unless ``clean=False``)."""
    declarations = []
    for tool in tools_of(client, tools, names):
        shown = clean_tool(tool, clean=clean)
        schema = dict(shown.input_schema) if isinstance(shown.input_schema, dict) else {}
        schema.setdefault("type", "object")
        declarations.append(
            types.FunctionDeclaration(
                name=tool.name, description=description_of(shown), parameters_json_schema=schema
            )
        )
    return declarations


def function_response(client: Client, call: types.FunctionCall) -> types.Part:
    """Call the tool a model's ``FunctionCall`` names and give the ``Part`` that answers it:
    ``{"result": ...}`` (the structured content, else the text) or ``{"error": ...}``."""
    if not call.name:
        raise ValueError("the FunctionCall names no function")
    result = client.call_tool(call.name, dict(call.args or {}))
    answer: dict[str, Any]
    if result.is_error:
        answer = {"error": to_llm_text(result)}
    elif result.structured_content is not None:
        answer = {"result": result.structured_content}
    else:
        answer = {"result": to_llm_text(result)}
    return types.Part.from_function_response(name=call.name, response=answer)


def _for_model(function: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(function)
    kept = [
        p.replace(annotation=_checkable(p.annotation))
        for name, p in signature.parameters.items()
        if name not in _EXTRAS
    ]

    @functools.wraps(function)
    def call(**arguments: Any) -> Any:
        return function(**arguments)

    # google-genai declares the function from this: the tool's parameters only; the return
    # annotation (a TypedDict or model the tool's output schema made) it does not need
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=kept, return_annotation=inspect.Signature.empty
    )
    call.__annotations__ = {p.name: p.annotation for p in kept}
    # what the model reads: the tool's description (the docstring is for Python callers)
    call.__doc__ = description_of(function.tool)  # type: ignore[attr-defined]
    del call.__wrapped__  # else inspect finds the extras again
    return call


def _checkable(annotation: Any) -> Any:
    """``annotation`` with what google-genai cannot check a value against made plain.

    Its automatic function calling checks each argument with ``isinstance`` against the
    parameter's annotation, which a ``Literal`` or a ``TypedDict`` cannot take (the call fails
    before it is made). The function checks its arguments against the tool's schema anyway."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        kinds = {type(value) for value in args}
        return kinds.pop() if len(kinds) == 1 else annotation
    if is_typeddict(annotation):
        return dict
    if origin is list and args:
        return list[_checkable(args[0])]  # type: ignore[misc]  # built at run time
    if origin is dict and len(args) == 2:
        key, value = args
        return dict[key, _checkable(value)]  # type: ignore[valid-type,misc]  # built at run time
    if origin in (Union, UnionType):
        return functools.reduce(operator.or_, [_checkable(arg) for arg in args])
    return annotation
