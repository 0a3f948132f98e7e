"""An MCP server's tools, resources and prompts for LangChain and LangGraph (extra
``langchain``; ``langchain-core`` >= 1.0).

::

    from mcp_sync.integrations.langchain import langchain_tools

    tools = langchain_tools(client)              # list[StructuredTool], one per MCP tool
    model = chat_model.bind_tools(tools)
    message = tools[0].invoke(tool_call)         # a ToolMessage

Each tool is the MCP tool as a model may see it (:func:`~mcp_sync.llm.model_view`): its name
(after ``prefix``), description and input schema (as the ``args_schema``: LangChain takes a
JSON schema dict as it is) with what a person cannot see stripped (``clean=False`` keeps it),
and app-only MCP Apps tools left out (``include_app_only=True`` keeps them); the definition's
``_meta`` and annotations are in its ``metadata``. The options are those of every adapter
(:mod:`mcp_sync.integrations._adapter`). Calling it calls the MCP tool on the calling
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
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManager
from langchain_core.tools import StructuredTool, ToolException

from ..llm import ModelTool
from ..protocol.types import CallToolResult, LoggingMessageNotificationParams, Tool
from ..protocol.types import ProgressNotificationParams as Progress
from ._adapter import (
    CallOptions,
    ErrorPolicy,
    Interceptor,
    McpToolCall,
    ToolCaller,
    ToolSource,
    description_of,
    views_of,
)
from ._langchain_loaders import load_mcp_blobs, load_mcp_documents, load_mcp_prompt
from ._results import ResultPreference, result_items

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
    views = views_of(
        client, tools, names, clean=clean, include_app_only=include_app_only, prefix=prefix
    )
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    return [_tool(client, view, options, callbacks, elicitation, prefer) for view in views]


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
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True, prefix=prefix)
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    return _tool(client, view, options, callbacks, elicitation, prefer)


def _tool(
    client: ToolSource,
    view: ModelTool,
    options: CallOptions,
    reporter: McpToolCallbacks | None,
    elicitation: McpElicitation | None,
    prefer: ResultPreference,
) -> StructuredTool:
    caller = ToolCaller(client, view, options)
    tool = view.tool

    # LangChain hands the run's child callback manager to a parameter named ``callbacks``
    def call(callbacks: CallbackManager | None = None, **arguments: Any) -> tuple[Any, Any]:
        request = caller.request(arguments, call_id=_call_id.get())
        with _reporting(client, request, reporter, callbacks, elicitation):
            outcome = caller.send(request)
        if not isinstance(outcome, CallToolResult):
            return outcome, None
        if outcome.is_error:
            raise ToolException(outcome.text or f"tool {view.name!r} reported an error")
        return [_block(item) for item in result_items(outcome, prefer)], outcome

    metadata: dict[str, Any] = {"mcp_name": tool.name}
    if tool.meta:
        metadata["mcp_meta"] = tool.meta
    if tool.annotations:
        metadata["mcp_annotations"] = tool.annotations.to_wire()
    return McpStructuredTool(
        name=view.name,
        description=description_of(view),
        args_schema=view.input_schema,
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
