"""What every framework adapter is built on: the tools a model is shown, and one way to call
them.

- **What the model sees** is :func:`mcp_sync.llm.model_view`: app-only tools left out, names,
  descriptions and schemas cleaned. :func:`views_of` chooses the tools (``names=``) and puts
  a ``prefix`` before each name.
- **A call** goes through :class:`ToolCaller`: the model's arguments in the server's terms
  (:meth:`~mcp_sync.llm.ModelTool.arguments`), the ``timeout``, the ``interceptors`` around
  the call (a :class:`McpToolCall` each), and the ``on_error`` policy: by default
  (``"message"``) a timeout, a closed connection or an unavailable server comes back as an
  error result, which each adapter shows its model as it shows a tool's own failure
  (``isError``); ``"raise"`` raises it.

The options and their defaults are the same in every adapter that takes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .._presentation.tool_view import ModelTool, model_view, model_visible
from .._rules.numbers import call_timeout
from .._session.extra_headers import extra_headers
from ..client import Client
from ..errors import ConnectionClosed, RequestTimeout, ServerUnavailable
from ..group import ClientGroup
from ..protocol.types import CallToolResult, TextContent, Tool
from ..protocol.types import ProgressNotificationParams as Progress

__all__ = [
    "TRANSIENT",
    "CallOptions",
    "ErrorPolicy",
    "Interceptor",
    "PARAMETER_DETAILS",
    "McpToolCall",
    "ProgressCallback",
    "ToolCaller",
    "ToolSource",
    "description_of",
    "views_of",
]

ToolSource = Client | ClientGroup
"""What the integrations call tools through: a client, or a group of them."""

ErrorPolicy = Literal["message", "raise"]

#: The faults a model can react to (retry, try another tool, tell the user) rather than bugs.
TRANSIENT = (RequestTimeout, ConnectionClosed, ServerUnavailable)

#: What of a parameter's schema a model is shown beside its type, by the adapters that declare
#: parameters in a shape of their own (google-genai's typed functions, smolagents' inputs).
PARAMETER_DETAILS = (
    "description", "enum", "format", "pattern", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "minItems", "maxItems",
)  # fmt: skip


@dataclasses.dataclass
class McpToolCall:
    """One call of an MCP tool, as interceptors see it and may change it."""

    tool: Tool
    """The tool as the server listed it (``tool.meta`` is its ``_meta``)."""
    name: str
    """The name called on the client (the MCP name, or a :class:`~mcp_sync.ClientGroup`'s)."""
    arguments: dict[str, Any]
    """The arguments sent: an interceptor may replace or change them."""
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Keyword options of ``call_tool`` (``timeout``, ``on_progress``, ...), changeable too."""
    tool_call_id: str | None = None
    """The model's id for this call, when the framework gives one (LangChain's tool call id,
    for a LangGraph ``Command`` whose ToolMessage must answer it)."""
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The request's ``_meta`` (a trace id, a tenant, ...): sent when not empty (then the call
    goes through ``client.request`` and ``options`` keeps only ``timeout`` and
    ``on_progress``)."""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    """Extra HTTP headers for this call alone (a tenant, a per-user token): sent through
    :func:`mcp_sync.extra_headers`, whose rules apply."""


#: ``interceptor(call, call_next)``: may change ``call`` before ``call_next(call)``, call it
#: again (retry), or return something else. It returns a :class:`~mcp_sync.types.CallToolResult`
#: (shown as usual) or any other value, which the framework gets as the tool's output as it is.
Interceptor = Callable[[McpToolCall, Callable[[McpToolCall], Any]], Any]

#: ``on_progress(call, progress)``: a progress notification of a running call, on the client's
#: reader thread (be quick; do not call the client from it).
ProgressCallback = Callable[[McpToolCall, Progress], None]


@dataclasses.dataclass(frozen=True)
class CallOptions:
    """The call options every adapter takes, checked when made."""

    timeout: float | None = None
    """Seconds for each call (else the client's ``request_timeout``)."""
    on_error: ErrorPolicy = "message"
    """What a timeout, a closed connection or an unavailable server becomes."""
    interceptors: Sequence[Interceptor] = ()
    """Around each call, the first outermost."""
    on_progress: ProgressCallback | None = None
    """Gets each call's progress notifications."""

    def __post_init__(self) -> None:
        if self.on_error not in ("message", "raise"):
            raise ValueError(f"on_error must be 'message' or 'raise', not {self.on_error!r}")
        object.__setattr__(self, "timeout", call_timeout(self.timeout, "timeout"))
        object.__setattr__(self, "interceptors", tuple(self.interceptors))


def views_of(
    client: ToolSource,
    tools: Sequence[Tool] | None,
    names: Sequence[str] | None,
    *,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
) -> list[ModelTool]:
    """``tools`` (or every tool the server lists) as the model sees them
    (:func:`~mcp_sync.llm.model_view`), keeping only ``names`` (MCP names) when given, in the
    server's order, each name after ``prefix``. An unknown name raises :class:`KeyError`
    naming it; so does an app-only tool named without ``include_app_only=True``."""
    listed = client.list_tools() if tools is None else list(tools)
    if names is not None:
        every = {tool.name for tool in listed}
        shown = {tool.name for tool in listed if include_app_only or model_visible(tool)}
        missing = [name for name in names if name not in shown]
        if missing:
            app_only = " (app-only: pass include_app_only=True)"
            why = [f"{name!r}{app_only if name in every else ''}" for name in missing]
            raise KeyError(f"the server has no model-visible tool named {', '.join(why)}")
    views = model_view(listed, clean=clean, include_app_only=include_app_only, names=names)
    if not prefix:
        return views
    return [dataclasses.replace(view, name=prefix + view.name) for view in views]


def description_of(view: ModelTool) -> str:
    """The description a framework shows (frameworks require one): the view's, else its
    name."""
    return view.description or view.name


class ToolCaller:
    """Calls one tool for a framework: the model's arguments restored to the server's terms,
    the options' timeout, interceptors and error policy."""

    def __init__(self, client: ToolSource, view: ModelTool, options: CallOptions) -> None:
        self.view = view
        self.options = options
        self._chain = _chain(client, list(options.interceptors))

    def request(
        self, arguments: dict[str, Any], *, call_id: str | None = None, wire: bool = False
    ) -> McpToolCall:
        """The call of the tool with a model's ``arguments`` (``wire``: arguments already in
        the server's terms), as interceptors will see it."""
        options: dict[str, Any] = {}
        if self.options.timeout is not None:
            options["timeout"] = self.options.timeout
        tool = self.view.tool
        sent = dict(arguments) if wire else self.view.arguments(arguments)
        request = McpToolCall(tool, tool.name, sent, options, call_id)
        if self.options.on_progress is not None:
            report = self.options.on_progress
            options["on_progress"] = lambda progress: report(request, progress)
        return request

    def send(self, request: McpToolCall) -> Any:
        """Make the call: a :class:`~mcp_sync.types.CallToolResult` (an error result for a
        fault the model should hear of, under ``on_error="message"``) or an interceptor's
        own value."""
        try:
            return self._chain(request)
        except TRANSIENT as exc:
            if self.options.on_error == "raise":
                raise
            return failed(exc)

    def __call__(self, arguments: dict[str, Any]) -> Any:
        return self.send(self.request(arguments))


def failed(exc: BaseException) -> CallToolResult:
    """An error result telling a model what went wrong (``RequestTimeout: ...``)."""
    text = TextContent(type="text", text=f"{type(exc).__name__}: {exc}")
    return CallToolResult(content=[text], is_error=True)


def _chain(client: ToolSource, interceptors: list[Interceptor]) -> Callable[[McpToolCall], Any]:
    def innermost(request: McpToolCall) -> Any:
        if request.headers:
            with extra_headers(request.headers):
                return sent(request)
        return sent(request)

    def sent(request: McpToolCall) -> Any:
        if not request.meta:
            return client.call_tool(request.name, request.arguments, **request.options)
        if isinstance(client, ClientGroup):
            server, name = client.route(request.name)
            target = client[server]
        else:
            target, name = client, request.name
        params = {"name": name, "arguments": request.arguments, "_meta": request.meta}
        kept = {k: v for k, v in request.options.items() if k in ("timeout", "on_progress")}
        return CallToolResult.from_wire(target.request("tools/call", params, **kept))

    chain: Callable[[McpToolCall], Any] = innermost
    for interceptor in reversed(interceptors):
        chain = _wrap(interceptor, chain)
    return chain


def _wrap(interceptor: Interceptor, inner: Callable[[McpToolCall], Any]) -> Callable[..., Any]:
    return lambda request: interceptor(request, inner)
