"""An MCP server's tools, resources and prompts for LangChain and LangGraph (extra
``langchain``; ``langchain-core`` >= 1.0).

::

    from mcp_sync.integrations.langchain import langchain_tools

    tools = langchain_tools(client)              # list[StructuredTool], one per MCP tool
    model = chat_model.bind_tools(tools)
    message = tools[0].invoke(tool_call)         # a ToolMessage

Each tool keeps the MCP tool's name (after ``prefix``) and description, its input schema
verbatim as the ``args_schema`` (LangChain takes a JSON schema dict as it is), but for the
invisible characters :func:`~mcp_sync.llm.clean_tool` strips (``clean=False`` keeps them), and
the definition's ``_meta`` and annotations in its ``metadata``. App-only MCP Apps tools are
left out (``include_app_only=True`` keeps them). Calling it calls the MCP tool on the calling
thread; ``ainvoke`` runs that call on LangChain's own executor, so an async agent never blocks
its event loop.

Results use ``response_format="content_and_artifact"``: the content is a list of LangChain
standard blocks (``text``, and ``image`` with ``base64`` and ``mime_type``) made from the
result's ``content`` (SEP-2200; ``prefer="structured"`` sends the structured content instead),
the artifact the whole :class:`~mcp_sync.types.CallToolResult`. A result with ``isError`` raises
LangChain's ``ToolException``; the tools set ``handle_tool_error=True``, so a tool-calling loop
gets a ``ToolMessage`` with ``status="error"``. So do a timeout, a closed connection and an
unavailable server unless ``on_error="raise"``. Other protocol errors (an unknown tool,
invalid arguments) are raised as mcp_sync errors.

During a call the server's progress and log messages are LangChain custom events of the tool's
run (``mcp_progress``, ``mcp_log``; ``on_custom_event`` of a callback handler, or
``astream_events``), and go to the ``callbacks`` object given, if any.
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManager
from langchain_core.tools import StructuredTool, ToolException

from .._extra_headers import extra_headers
from .._numbers import call_timeout
from ..errors import ConnectionClosed, RequestTimeout, ServerUnavailable
from ..group import ClientGroup
from ..protocol.types import CallToolResult, LoggingMessageNotificationParams, Tool
from ..protocol.types import ProgressNotificationParams as Progress
from ._langchain_loaders import load_mcp_blobs, load_mcp_documents, load_mcp_prompt
from ._results import (
    ResultPreference,
    ToolSource,
    clean_tool,
    description_of,
    result_items,
    tools_of,
)

__all__ = [
    "Interceptor",
    "McpElicitation",
    "McpStructuredTool",
    "McpToolCall",
    "McpToolCallbacks",
    "langchain_tool",
    "langchain_tools",
    "load_mcp_blobs",
    "load_mcp_documents",
    "load_mcp_prompt",
]

ErrorPolicy = Literal["message", "raise"]

#: The faults a model can react to (retry, try another tool, tell the user) rather than bugs.
TRANSIENT = (RequestTimeout, ConnectionClosed, ServerUnavailable)


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
    """The model's id for this call, when LangChain was given a tool call (for a LangGraph
    ``Command`` whose ToolMessage must answer it)."""
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The request's ``_meta`` (a trace id, a tenant, ...): sent when not empty (then the call
    goes through ``client.request`` and ``options`` keeps only ``timeout`` and
    ``on_progress``)."""
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    """Extra HTTP headers for this call alone (a tenant, a per-user token): sent through
    :func:`mcp_sync.extra_headers`, whose rules apply."""


#: ``interceptor(call, call_next)``: may change ``call`` before ``call_next(call)``, call it
#: again (retry), or return something else. It returns a :class:`~mcp_sync.types.CallToolResult`
#: (shown as usual) or any other value, which becomes the ToolMessage's content as it is.
Interceptor = Callable[[McpToolCall, Callable[[McpToolCall], Any]], Any]


class McpToolCallbacks:
    """What a tool call reports while it runs; subclass and override what you need. Called on
    the client's reader thread: be quick, and do not call the client from it."""

    def on_progress(self, call: McpToolCall, progress: Progress) -> None:
        """A progress notification of the call."""

    def on_log(self, call: McpToolCall, message: LoggingMessageNotificationParams) -> None:
        """A log message the server sent while the call ran."""

    def on_elicitation(self, call: McpToolCall, params: Any) -> None:
        """An elicitation request made while the call ran (see :class:`McpElicitation`)."""


class McpElicitation:
    """An elicitation handler for ``client.on_elicitation()`` that first reports each request
    to the LangChain runs of the tools given it as ``elicitation=`` (custom event
    ``mcp_elicitation``) and to their ``callbacks``, then answers with ``answer(params)``.
    The client asks one handler for the whole session, so each tool call running at that
    moment hears of it."""

    def __init__(self, answer: Callable[[Any], Any]) -> None:
        self._answer = answer
        self._lock = threading.Lock()
        self._running: list[_reporting] = []

    def __call__(self, params: Any) -> Any:
        with self._lock:
            running = list(self._running)
        for run in running:
            run.elicited(params)
        return self._answer(params)

    def _track(self, run: _reporting, *, running: bool) -> None:
        with self._lock:
            if running:
                self._running.append(run)
            else:
                self._running.remove(run)


def langchain_tools(
    client: ToolSource,
    *,
    tools: Sequence[Tool] | None = None,
    names: Sequence[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
    callbacks: McpToolCallbacks | None = None,
    elicitation: McpElicitation | None = None,
    prefer: ResultPreference = "content",
) -> list[StructuredTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as LangChain tools
    that call them through ``client`` (a :class:`~mcp_sync.Client` or a
    :class:`~mcp_sync.ClientGroup`); the options as for :func:`langchain_tool`."""
    chosen = tools_of(client, tools, names, include_app_only=include_app_only)
    options: dict[str, Any] = dict(
        clean=clean, prefix=prefix, timeout=timeout, on_error=on_error,
        interceptors=interceptors, callbacks=callbacks, elicitation=elicitation, prefer=prefer,
    )  # fmt: skip
    return [langchain_tool(client, tool, **options) for tool in chosen]


def langchain_tool(
    client: ToolSource,
    tool: Tool,
    *,
    clean: bool = True,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
    callbacks: McpToolCallbacks | None = None,
    elicitation: McpElicitation | None = None,
    prefer: ResultPreference = "content",
) -> StructuredTool:
    """One MCP tool as a LangChain ``StructuredTool`` calling it through ``client``.

    - ``prefix`` goes before the name the model sees (``"github_"``), without a group;
    - ``timeout`` bounds each call of this tool (else the client's ``request_timeout``);
    - ``on_error="message"`` (the default) turns :class:`~mcp_sync.errors.RequestTimeout`,
      :class:`~mcp_sync.errors.ConnectionClosed` and
      :class:`~mcp_sync.errors.ServerUnavailable` into an error ``ToolMessage``;
      ``"raise"`` lets them end the run;
    - ``interceptors`` wrap each call, the first outermost (see :data:`Interceptor`);
    - ``callbacks`` gets the call's progress and log messages, and the elicitation requests
      ``elicitation`` (the client's handler) sees while it runs;
    - ``prefer`` picks the half of a result the model is sent (SEP-2200, see
      :mod:`mcp_sync.integrations._results`).
    """
    if on_error not in ("message", "raise"):
        raise ValueError(f"on_error must be 'message' or 'raise', not {on_error!r}")
    timeout = call_timeout(timeout, "langchain_tool")
    shown = clean_tool(tool, clean=clean)
    chain = _chain(client, list(interceptors))
    reporter = callbacks

    # LangChain hands the run's child callback manager to a parameter named ``callbacks``
    def call(callbacks: CallbackManager | None = None, **arguments: Any) -> tuple[Any, Any]:
        options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        request = McpToolCall(tool, tool.name, arguments, options, _call_id.get())
        try:
            with _reporting(client, request, reporter, callbacks, elicitation):
                outcome = chain(request)
        except TRANSIENT as exc:
            if on_error == "raise":
                raise
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(outcome, CallToolResult):
            return outcome, None
        if outcome.is_error:
            raise ToolException(outcome.text or f"tool {tool.name!r} reported an error")
        return [_block(item) for item in result_items(outcome, prefer)], outcome

    metadata: dict[str, Any] = {"mcp_name": tool.name}
    if tool.meta:
        metadata["mcp_meta"] = tool.meta
    if tool.annotations:
        metadata["mcp_annotations"] = tool.annotations.to_wire()
    return McpStructuredTool(
        name=prefix + shown.name,
        description=description_of(shown),
        args_schema=shown.input_schema,
        func=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
        metadata=metadata,
    )


_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("_call_id", default=None)


class McpStructuredTool(StructuredTool):
    """A ``StructuredTool`` that tells its interceptors the model's tool-call id (LangChain
    injects it only into schemas it built itself)."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        token = _call_id.set(_id_of(input))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _call_id.reset(token)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        # LangChain's executor copies this context into the thread that runs the call
        token = _call_id.set(_id_of(input))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _call_id.reset(token)


def _id_of(input: Any) -> str | None:
    if isinstance(input, dict) and input.get("type") == "tool_call":
        found = input.get("id")
        return found if isinstance(found, str) else None
    return None


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


class _reporting:
    """Routes the call's progress and the server's log messages, while it runs, to the
    callbacks object and to LangChain's callback handlers of the tool's run."""

    def __init__(
        self,
        client: ToolSource,
        request: McpToolCall,
        callbacks: McpToolCallbacks | None,
        manager: CallbackManager | None,
        elicitation: McpElicitation | None = None,
    ) -> None:
        self._client, self._request = client, request
        self._callbacks, self._manager = callbacks, manager
        self._elicitation = elicitation
        self._stop: Callable[[], None] | None = None

    def __enter__(self) -> None:
        if self._callbacks is None and self._manager is None:
            return
        if self._elicitation is not None:
            self._elicitation._track(self, running=True)
        self._request.options.setdefault("on_progress", self._progress)
        on_log = getattr(self._client, "on_log", None)  # a ClientGroup has none
        if on_log is not None:
            self._stop = on_log(self._log)

    def __exit__(self, *exc_info: object) -> None:
        if self._stop is not None:
            self._stop()
        if self._elicitation is not None and (self._callbacks or self._manager):
            self._elicitation._track(self, running=False)

    def elicited(self, params: Any) -> None:
        if self._callbacks is not None:
            self._callbacks.on_elicitation(self._request, params)
        if self._manager is not None:
            wire = params.to_wire() if hasattr(params, "to_wire") else dict(params)
            self._manager.on_custom_event("mcp_elicitation", {"tool": self._request.name, **wire})

    def _progress(self, progress: Progress) -> None:
        if self._callbacks is not None:
            self._callbacks.on_progress(self._request, progress)
        if self._manager is not None:
            data = {"tool": self._request.name, **progress.to_wire()}
            self._manager.on_custom_event("mcp_progress", data)

    def _log(self, message: LoggingMessageNotificationParams) -> None:
        if self._callbacks is not None:
            self._callbacks.on_log(self._request, message)
        if self._manager is not None:
            data = {"tool": self._request.name, **message.to_wire()}
            self._manager.on_custom_event("mcp_log", data)


def _block(item: dict[str, Any]) -> dict[str, Any]:
    if item["type"] == "image":
        return {"type": "image", "base64": item["data"], "mime_type": item["mimeType"]}
    return item
