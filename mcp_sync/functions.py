"""A server's tools as typed Python functions: ``client.functions``.

Each tool becomes a function whose signature (``inspect.signature``, ``help()``, IPython's
``?``, Jupyter's completion) comes from its ``inputSchema`` and whose docstring comes from its
descriptions. A call checks the arguments before anything is sent, and returns what the tool
declares: the structured content as a pydantic model when it has an ``outputSchema``, else the
text. A failing tool raises :class:`~mcp_sync.errors.ToolError`.

:func:`stubs` writes the same signatures as a module that mypy checks.

Why functions are built from a listing rather than per call: the signature is what the user
reads before calling, so it must exist before the call; the listing is made on first use and
again after the server says its tools changed (``notifications/tools/list_changed``).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from ._connection.lifecycle import weak_callback
from ._presentation.schema_types import STUB_NAMES, Namer, Type, Typer, docstring
from ._presentation.tool_view import ModelTool, clean_text, model_view
from .abort import AbortSignal
from .errors import (
    InvalidStateError,
    McpError,
    OutputValidationError,
    ToolArgumentError,
    ToolError,
    UnknownName,
)
from .protocol.types import CallToolResult, Tool

if TYPE_CHECKING:
    from .protocol.jsonrpc import Notification

__all__ = ["Functions", "stubs"]

#: Keyword-only extras every function takes; a tool parameter of the same name gets a ``_``
#: (and so does one named ``self``, the stub's first parameter).
EXTRAS = ("timeout", "signal")


class _Caller(Protocol):
    """What a typed function calls its tool through."""

    def call_tool(
        self,
        name: str,
        arguments: Any = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        validate: bool = False,
    ) -> CallToolResult: ...


class _Client(_Caller, Protocol):
    def list_tools(self, *, timeout: float | None = None) -> list[Tool]: ...

    def on_notification(self, method: str | None, callback: Any) -> Any: ...


class _Plan:
    """One tool's function, in types: what both the runtime function and the stub are made of,
    from the tool as a model may see it (names, descriptions and schemas cleaned)."""

    def __init__(self, view: ModelTool, name: str, typer: Typer) -> None:
        self.view, self.tool, self.name = view, view.tool, name
        schema = view.input_schema
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = set(required) if isinstance(required, list) else set()
        keys = [k for k in properties if isinstance(k, str)]
        names = Namer(keys, frozenset({*EXTRAS, "self"})).of
        hint = name[:1].upper() + name[1:]
        # (wire key, Python name, type, required, default or ..., description, takes null);
        # a default the type does not take (a null for an integer) shows as None, optional
        self.params: list[tuple[str, str, Type, bool, Any, str, bool]] = []
        for key in sorted(keys, key=lambda k: k not in required):  # required ones first
            sub = properties[key] if isinstance(properties[key], dict) else {}
            kind = typer.of(schema, sub, f"{hint}_{key}", models=False)
            text = sub.get("description")
            default = sub.get("default", ...)
            self.params.append(
                (
                    key,
                    names[key],
                    kind,
                    key in required,
                    default if default is ... or kind.fits(default) else ...,
                    text if isinstance(text, str) else "",
                    kind.kind in ("any", "none")
                    or any(a.kind == "none" for a in kind.args)
                    or (kind.kind == "literal" and None in kind.values),
                )
            )
        output = view.output_schema
        self.output: Type | None = None
        if isinstance(output, dict):
            self.output = typer.of(output, output, f"{hint}Result", models=True)

    def returns(self) -> str:
        return "str" if self.output is None else self.output.source()

    def doc(self) -> str:
        lines = [(self.view.description or self.view.name).strip(), ""]
        if self.tool.name != self.name:
            name = self.tool.name  # its hidden characters, if any, as escapes
            lines[1:1] = ["", f"The MCP tool {ascii(name) if clean_text(name)[1] else repr(name)}."]
        lines += ["Parameters", "----------"]
        for _key, name, kind, required, default, text, _null in self.params:
            shown = kind.source()
            if not required:
                shown += ", optional" if default is ... else f", default {default!r}"
            lines.append(f"{name} : {shown}")
            if text:
                lines.extend(f"    {line}" for line in text.strip().splitlines())
        lines += [
            "timeout : float, optional",
            "    Seconds to wait for the answer (the client's request_timeout when None).",
            "signal : AbortSignal, optional",
            "    Aborts the call when it fires.",
            "",
            "Returns",
            "-------",
            self.returns(),
            "    The structured content, as a model of the tool's outputSchema."
            if self.output is not None
            else "    The text of the result.",
            "",
            "Raises",
            "------",
            "ToolArgumentError",
            "    An argument does not fit the inputSchema (nothing is sent).",
            "ToolError",
            "    The tool reported an error (isError).",
        ]
        return "\n".join(lines)

    def source(self) -> list[str]:
        """The function as a method of the stub's Protocol."""
        params = ["self", "*"]
        for _key, name, kind, required, default, _text, _null in self.params:
            if required:
                params.append(f"{name}: {kind.source()}")
            elif default is ...:
                params.append(f"{name}: {kind.optional().source()} = None")
            else:
                params.append(f"{name}: {kind.source()} = {default!r}")
        params += ["timeout: float | None = None", "signal: AbortSignal | None = None"]
        head = f"    def {self.name}(\n" + "".join(f"        {p},\n" for p in params)
        body = "\n".join(
            f"        {line}" if line else "" for line in docstring(self.doc()).split("\n")
        )
        return [head + f"    ) -> {self.returns()}:", body, "        ..."]

    def function(self, client: _Caller) -> Any:
        """The runtime function, calling ``client``."""
        parameters = []
        for _key, name, kind, required, default, _text, _null in self.params:
            if required:
                parameters.append(
                    inspect.Parameter(
                        name, inspect.Parameter.KEYWORD_ONLY, annotation=kind.runtime()
                    )
                )
            else:
                shown = None if default is ... else default
                annotation = (kind.optional() if default is ... else kind).runtime()
                parameters.append(
                    inspect.Parameter(
                        name, inspect.Parameter.KEYWORD_ONLY, default=shown, annotation=annotation
                    )
                )
        kw = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter("timeout", kw, default=None, annotation=float | None))
        parameters.append(
            inspect.Parameter("signal", kw, default=None, annotation=AbortSignal | None)
        )
        model = (
            self.output.runtime()
            if self.output is not None and self.output.kind == "class"
            else None
        )
        signature = inspect.Signature(
            parameters, return_annotation=model or (Any if self.output else str)
        )
        tool, view, wire = self.tool, self.view, {p[1]: p for p in self.params}
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {"type": "object"}

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise _binding_error(tool.name, exc, args, kwargs, signature) from None
            given = bound.arguments
            timeout, signal = given.pop("timeout", None), given.pop("signal", None)
            arguments = {}
            for name, value in given.items():
                key, _n, _kind, required, _d, _t, takes_null = wire[name]
                if value is None and not required and not takes_null:
                    continue  # None for an optional parameter: leave it out
                arguments[key] = value
            arguments = view.arguments(arguments)  # the keys and values the server wrote
            _check(tool.name, schema, arguments, wire)
            result = client.call_tool(
                tool.name,
                arguments,
                timeout=timeout,
                signal=signal,
                validate=tool.output_schema is not None,
            )
            if result.is_error:
                raise ToolError(tool.name, result)
            if tool.output_schema is None:
                return result.text
            if model is None:
                return result.structured_content
            return _parse(tool.name, model, result.structured_content)

        call.__name__ = call.__qualname__ = self.name
        call.__doc__ = self.doc()
        call.__module__ = "mcp_sync.functions"
        call.__signature__ = signature  # type: ignore[attr-defined]
        call.__annotations__ = {p.name: p.annotation for p in parameters} | {
            "return": signature.return_annotation
        }
        call.tool = tool  # type: ignore[attr-defined]
        return call


def _binding_error(
    tool: str,
    exc: TypeError,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    signature: inspect.Signature,
) -> ToolArgumentError:
    # decided from the signature, not from the TypeError's text (each Python words it its own way)
    known = list(signature.parameters)
    for name in kwargs:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return ToolArgumentError(tool, f"no parameter {name!r}{hint}", parameter=name)
    if args:
        return ToolArgumentError(tool, "takes keyword arguments only (name=value)")
    for name, parameter in signature.parameters.items():
        if parameter.default is inspect.Parameter.empty and name not in kwargs:
            message = f"missing the required argument {name!r}"
            return ToolArgumentError(tool, message, parameter=name)
    return ToolArgumentError(tool, str(exc))


def _check(
    tool: str, schema: dict[str, Any], arguments: dict[str, Any], wire: dict[str, Any]
) -> None:
    from .protocol.validation import validate_structured

    try:
        validate_structured(tool, schema, arguments)
    except OutputValidationError as exc:
        # the validator speaks of output; the words after the tool's name are the detail
        if exc.in_schema:
            text = "its inputSchema" + str(exc).split("its outputSchema", 1)[-1]
            text = text.replace("outputSchema", "inputSchema")
            raise ToolArgumentError(tool, f"{text} (client.call_tool sends unchecked)") from None
        text = str(exc).split(" is invalid: ", 1)[-1]
        key = exc.path.split("/")[1].replace("~1", "/").replace("~0", "~") if exc.path else ""
        names = {p[0]: p[1] for p in wire.values()}
        parameter = names.get(key)
        where = f"argument {parameter!r}" if parameter else "the arguments"
        if parameter and exc.path.count("/") > 1:
            where += f" at {exc.path[len(key) + 1 :]}"
        raise ToolArgumentError(
            tool, f"{where}: {text}", parameter=parameter, path=exc.path
        ) from None


def _parse(tool: str, model: Any, content: Any) -> Any:
    import pydantic

    try:
        return model.model_validate(content)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        path = "".join(f"/{part}" for part in first["loc"])
        raise OutputValidationError(tool, path, first["msg"]) from None


class Functions:
    """One typed function per tool of the server, by attribute (``client.functions.get_time``)
    and by item (``client.functions["get-time"]``: the tool's own name, else the Python name).
    Iterating gives the Python names; :attr:`tools` maps them to the tools' names.

    The tools are listed on first use, and again after the server says they changed. A tool
    name that is not an identifier is mapped: each character outside ``[A-Za-z0-9_]`` becomes
    ``_``; a name that then does not begin with a letter gets ``tool`` in front (``2d`` ->
    ``tool_2d``, ``_private`` -> ``tool_private``, ``__init__`` -> ``tool__init__``); a
    keyword, this object's own attributes (``invalidate``, ``refresh``, ``tools``) and the
    names a stub module uses (``str``, ``list``, ``Tools``, ``bind``...) get ``_`` behind; and
    names that then collide get ``_2``, ``_3`` in the order of the tools' names. So no
    function's name begins with ``_``: those are Python's, and are never looked up as tools.
    Parameters are mapped the same way, with ``field`` in front (``timeout``, ``signal`` and
    ``self`` become ``timeout_``, ``signal_`` and ``self_``: the first two are every function's
    keyword-only extras).
    """

    def __init__(self, client: _Client) -> None:
        # weakly: the client holds this object, and its functions call the client (a cycle
        # would keep a dropped, unclosed client alive until a garbage collection)
        self._client: _Client = weakref.proxy(client)
        self._lock = threading.Lock()
        self._built: dict[str, Any] | None = None
        self._by_tool: dict[str, str] = {}
        client.on_notification("notifications/tools/list_changed", weak_callback(self.invalidate))

    def invalidate(self, _notification: Notification | None = None) -> None:
        """List the tools again on next use. Done on ``notifications/tools/list_changed``; in
        the 2026-07-28 era that comes only to a subscription, which this fits as its callback:
        ``client.listen(tools_list_changed=True, callback=client.functions.invalidate)``."""
        self._built = None  # maybe on the dispatcher thread: no listing here

    def _functions(self) -> dict[str, Any]:
        with self._lock:
            built = self._built
            if built is None:
                try:
                    listed = self._client.list_tools()
                except ReferenceError:  # (held weakly: see __init__)
                    raise InvalidStateError("the client of these functions is gone") from None
                plans, _typer = _plans(listed)
                built = {plan.name: plan.function(self._client) for plan in plans}
                self._by_tool = {plan.tool.name: plan.name for plan in plans}
                self._built = built
            return built

    def refresh(self) -> None:
        """List the tools again now (also done after ``notifications/tools/list_changed``)."""
        self.invalidate()
        self._functions()

    @property
    def tools(self) -> dict[str, str]:
        """Each function's name and the name of the tool it calls."""
        self._functions()
        return {python: tool for tool, python in self._by_tool.items()}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # IPython's _repr_*_ probes, pickling: never a listing
            raise AttributeError(name)
        functions = self._functions()
        if name in functions:
            return functions[name]
        close = difflib.get_close_matches(name, list(functions), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; the tools are {sorted(functions)}"
        raise AttributeError(f"the server has no tool {name!r}{hint}")

    def __getitem__(self, name: str) -> Any:
        functions = self._functions()
        python = self._by_tool.get(name, name)
        if python in functions:
            return functions[python]
        raise UnknownName(f"the server has no tool {name!r}", name=name)

    def __contains__(self, name: object) -> bool:
        functions = self._functions()
        return name in functions or name in self._by_tool

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._functions()))

    def __len__(self) -> int:
        return len(self._functions())

    def __dir__(self) -> list[str]:
        names = [*super().__dir__()]
        # tab completion on a client that is not connected yet shows the methods
        with contextlib.suppress(McpError):
            names += list(self._functions())
        return sorted(set(names))

    def __repr__(self) -> str:
        built = self._built
        return f"<mcp_sync.Functions {'(not listed yet)' if built is None else sorted(built)}>"


#: What a tool's function may not be called: ``Functions``' own attributes (``tools``,
#: ``refresh``...) and what the stub module's ``Tools`` class body would shadow.
_RESERVED_TOOLS = STUB_NAMES | {name for name in dir(Functions) if not name.startswith("_")}


def _tool_names(views: list[ModelTool]) -> dict[str, str]:
    """Each tool's clean name (as a model sees it) and the Python name of its function: the
    one place tools are named (for ``client.functions`` and the stubs alike)."""
    return Namer([view.name for view in views], _RESERVED_TOOLS, prefix="tool").of


def _plans(tools: list[Tool]) -> tuple[list[_Plan], Typer]:
    # every tool, app-only ones too: these functions are for code, which is the app
    views = model_view(tools, include_app_only=True)
    names = _tool_names(views)
    typer = Typer(reserved=frozenset(names.values()))
    plans = [
        _Plan(view, names[view.name], typer) for view in sorted(views, key=lambda v: v.tool.name)
    ]
    typer.finish()
    typer.runtime_classes()
    return plans, typer


def stubs(client: _Client, *, server: str | None = None) -> str:
    """A Python module, checked by mypy, that types ``client.functions`` for the tools the
    server offers now: TypedDicts for their arguments, pydantic models for their results, and
    ``bind(client)``, which returns ``client.functions`` as a ``Tools`` protocol. ``server``
    names the server in the module's docstring."""
    plans, typer = _plans(client.list_tools())
    about = f" of {server}" if server else ""
    lines = [
        docstring(
            f"Typed tool functions{about}, written by mcp_sync.functions.stubs "
            "(mcp-sync stubs).\n\n    tools = bind(client)  # client.functions, typed\n"
        ),
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal, Protocol, cast",
        "",
        "import pydantic",
        "from typing_extensions import NotRequired, Required, TypedDict",
        "",
        "from mcp_sync import AbortSignal, Client",
        "",
        '__all__ = ["Tools", "bind"]',
    ]
    lines += typer.source()
    lines += [
        "",
        "",
        "class Tools(Protocol):",
        '    """The server\'s tools, as ``client.functions`` calls them."""',
    ]
    for plan in plans:
        lines += ["", *plan.source()]
    lines += [
        "",
        "",
        "def bind(client: Client) -> Tools:",
        '    """``client.functions``, typed as these tools."""',
        "    return cast(Tools, client.functions)",
        "",
    ]
    return "\n".join(lines)
