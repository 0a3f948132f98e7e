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

Both are built from the tools as a model may see them (:func:`~mcp_sync.llm.model_view`:
app-only tools left out, names, descriptions and schemas cleaned), and take the options of
every adapter (:mod:`mcp_sync.integrations._adapter`).

google-genai reads a callable's signature to declare it, and calls it with the model's
arguments until the model answers. :func:`genai_functions` gives the typed functions of
``client.functions`` (one per tool, named as there: ``get-time`` is ``get_time``), without
their ``timeout`` and ``signal`` extras, which are for Python callers, not models, with the
tool's description as their docstring (which google-genai sends as the description), and each
parameter's description, bounds, length limits, pattern and format in an
``Annotated[..., Field(json_schema_extra=...)]``, which google-genai puts in the declaration.
google-genai checks each argument with ``isinstance`` against its annotation, which a
``Literal`` or ``TypedDict`` cannot take: such a parameter is declared with its plain type
(``str``, ``dict``), with an enum's choices carried beside it, but not an object's fields
(the function still checks the arguments against the tool's schema before calling). For the
exact schemas, use :func:`genai_declarations`. A function returns what ``client.functions``
returns (the structured content, else the text, with ``[image: image/png, N bytes]`` for each
image a function's answer cannot carry); a result with ``isError``, and under
``on_error="message"`` a timeout, a closed connection or an unavailable server, raises
:class:`~mcp_sync.errors.ToolError`, which google-genai sends the model as ``{"error": ...}``
(it does so for any exception, so ``on_error="raise"`` changes only the text).

:func:`genai_declarations` gives ``FunctionDeclaration`` objects carrying each tool's input
schema as JSON Schema (``parameters_json_schema``, without ``$schema``, which google-genai
refuses), and :func:`function_response` answers one of the model's ``FunctionCall`` parts with
the ``Part`` to send back.
"""

from __future__ import annotations

import functools
import inspect
import operator
import typing
from collections.abc import Callable, Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union

from google.genai import types
from pydantic import Field
from typing_extensions import is_typeddict

from ..client import Client
from ..errors import UnknownName
from ..functions import _Plan, _plans
from ..llm import model_visible, to_llm_text
from ..protocol.types import CallToolResult, TextContent, Tool
from ._adapter import (
    PARAMETER_DETAILS,
    CallOptions,
    ErrorPolicy,
    Interceptor,
    ToolCaller,
    description_of,
    views_of,
)

__all__ = ["function_response", "genai_declarations", "genai_functions"]

_EXTRAS = ("timeout", "signal")


def genai_functions(
    client: Client,
    *,
    names: Sequence[str] | None = None,
    include_app_only: bool = False,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
) -> list[Callable[..., Any]]:
    """The typed functions of ``client.functions`` (or of the tools named in ``names``, by
    tool name or Python name; an unknown one raises :class:`~mcp_sync.errors.UnknownName`)
    as callables for ``GenerateContentConfig(tools=...)``, each named ``prefix`` + its Python
    name."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    plans, _typer = _plans(client.list_tools())
    shown = [plan for plan in plans if include_app_only or model_visible(plan.tool)]
    if names is not None:
        by_name = {key: plan for plan in shown for key in (plan.name, plan.tool.name)}
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise UnknownName(
                f"the server has no model-visible tool {unknown[0]!r}", name=unknown[0]
            )
        chosen = [by_name[name] for name in names]
        shown = [plan for plan in shown if plan in chosen]
    return [_for_model(plan, ToolCaller(client, plan.view, options), prefix) for plan in shown]


def genai_declarations(
    client: Client,
    *,
    tools: Sequence[Tool] | None = None,
    names: Sequence[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
) -> list[types.FunctionDeclaration]:
    """The server's tools (or ``tools``, or those named in ``names``) as function
    declarations, each with the tool's input schema (cleaned unless ``clean=False``)."""
    views = views_of(
        client, tools, names, clean=clean, include_app_only=include_app_only, prefix=prefix
    )
    return [
        types.FunctionDeclaration(
            name=view.name,
            description=description_of(view),
            parameters_json_schema=view.input_schema,
        )
        for view in views
    ]


def function_response(
    client: Client,
    call: types.FunctionCall,
    *,
    tools: Sequence[Tool] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
) -> types.Part:
    """Call the tool a model's ``FunctionCall`` names (a name :func:`genai_declarations` gave,
    with the same ``tools``, ``clean``, ``include_app_only`` and ``prefix``; the tools are
    listed when ``tools`` is not given) and give the ``Part`` that answers it:
    ``{"result": ...}`` (the structured content, else the text) or ``{"error": ...}``, which
    names a tool the model was not offered."""
    if not call.name:
        raise ValueError("the FunctionCall names no function")
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    choice: dict[str, Any] = dict(clean=clean, include_app_only=include_app_only, prefix=prefix)
    views = {view.name: view for view in views_of(client, tools, None, **choice)}
    view = views.get(call.name)
    answer: dict[str, Any]
    if view is None:
        answer = {"error": f"there is no tool named {call.name!r}"}
    else:
        outcome = ToolCaller(client, view, options)(dict(call.args or {}))
        if not isinstance(outcome, CallToolResult):
            answer = {"result": outcome}  # an interceptor's own value
        elif outcome.is_error:
            answer = {"error": to_llm_text(outcome)}
        elif outcome.structured_content is not None:
            answer = {"result": outcome.structured_content}
        else:
            answer = {"result": to_llm_text(outcome)}
    return types.Part.from_function_response(name=call.name, response=answer)


class _Returned(Exception):
    """An interceptor's own value, carried out of the typed function to be returned."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class _Through:
    """What a typed function calls in place of the client: the adapter's call path, with each
    image a text marker (a function's answer to google-genai carries no image)."""

    def __init__(self, caller: ToolCaller) -> None:
        self._caller = caller

    def call_tool(self, name: str, arguments: Any = None, **options: Any) -> CallToolResult:
        # the typed function gives the arguments in the server's terms already
        request = self._caller.request(dict(arguments or {}), wire=True)
        request.options.update({k: v for k, v in options.items() if v is not None})
        outcome = self._caller.send(request)
        if not isinstance(outcome, CallToolResult):
            raise _Returned(outcome)
        text = TextContent(type="text", text=to_llm_text(outcome))
        return outcome.model_copy(update={"content": [text]})


def _for_model(plan: _Plan, caller: ToolCaller, prefix: str) -> Callable[..., Any]:
    function = plan.function(_Through(caller))
    signature = inspect.signature(function)
    properties = plan.view.input_schema["properties"]
    keys = {python: key for key, python, *_rest in plan.params}
    declared = {
        name: _declared(p.annotation, properties.get(keys[name]))
        for name, p in signature.parameters.items()
        if name not in _EXTRAS
    }
    # google-genai declares a parameter from the type hints with their extras (the schema
    # beside the type), but checks an argument against the signature's annotation, where
    # Annotated breaks isinstance, unless that annotation is a string: then it checks against
    # the hint without extras. So the signature holds text and __annotations__ the types.
    kept = [
        p.replace(annotation=inspect.formatannotation(_checkable(p.annotation)))
        for name, p in signature.parameters.items()
        if name in declared
    ]

    @functools.wraps(function)
    def call(**arguments: Any) -> Any:
        try:
            return function(**arguments)
        except _Returned as returned:
            return returned.value

    call.__name__ = call.__qualname__ = prefix + plan.name
    # google-genai declares the function from this: the tool's parameters only; the return
    # annotation (a TypedDict or model the tool's output schema made) it does not need
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=kept, return_annotation=inspect.Signature.empty
    )
    call.__annotations__ = declared
    # what the model reads: the tool's description (the docstring is for Python callers)
    call.__doc__ = description_of(plan.view)
    del call.__wrapped__  # else inspect finds the extras again
    return call


def _declared(annotation: Any, schema: Any) -> Any:
    """The annotation google-genai declares a parameter with: one it can check values
    against (:func:`_checkable`), and what the model should read of the parameter's schema
    beside it (description, bounds, an enum's choices...)."""
    checkable = _checkable(annotation)
    schema = schema if isinstance(schema, dict) else {}
    carried = {key: schema[key] for key in PARAMETER_DETAILS if key in schema and key != "enum"}
    choices = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    optional = type(None) in typing.get_args(annotation)
    literal = choices[0] if optional and len(choices) == 1 else annotation
    if typing.get_origin(literal) is Literal and isinstance(schema.get("enum"), list):
        # a Literal is declared as its plain type: its choices go beside it (null too for an
        # optional one)
        carried["enum"] = schema["enum"] + ([None] if optional else [])
    return Annotated[checkable, Field(json_schema_extra=carried)] if carried else checkable


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
