"""The public client: one blocking method per MCP request, typed results.

Every request method takes, keyword-only:

- ``timeout``: seconds to wait for the answer (default: the client's ``request_timeout``;
  ``math.inf`` waits forever). Progress notifications renew it; ``max_total_timeout`` caps it.
- ``signal``: an :class:`~mcp_sync.abort.AbortSignal`; aborting it ends the call with
  :class:`~mcp_sync.errors.Aborted` and cancels the request on the wire.
- ``on_progress``: called with each :class:`ProgressNotificationParams` the server sends.

Handlers and callbacks run on the client's dispatcher thread, one at a time, in arrival order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, overload

from ._core import ClientState, Subscription
from ._handlers import RootsSource
from ._listen import StatelessListen, listen_filters
from ._negotiation import ServerState
from ._tasks import ToolTask
from ._tasks_and_skills import TasksAndSkills
from .abort import AbortSignal
from .errors import (
    InvalidStateError,
    RpcError,
)
from .protocol import stateless, versions
from .protocol.jsonrpc import Notification
from .protocol.types import (
    CallToolResult,
    CompleteResult,
    CreateTaskResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    TaskMetadata,
    Tool,
)

__all__ = ["Client", "ClientState", "ServerState", "Subscription"]

ProgressHandler = Callable[[ProgressNotificationParams], None]


class Client(TasksAndSkills):
    """A synchronous MCP client. Connect it to a transport, then call it from any thread.

    >>> client = Client("my-app", "1.0")                                  # doctest: +SKIP
    >>> client.connect(StdioTransport("mcp-server-time"))                  # doctest: +SKIP
    >>> client.call_tool("get_current_time", {"timezone": "UTC"}).text    # doctest: +SKIP

    Options (all keyword-only but ``name`` and ``version``, the client info sent to servers):

    - ``title``: a display name for the client info.
    - ``capabilities``: extra client capabilities to declare (merged over those the
      registered handlers imply).
    - ``request_timeout``: default seconds per request (progress renews it);
      ``max_total_timeout``: a hard cap per request, progress or not.
    - ``roots``: a list of :class:`Root`, paths or ``file://`` URIs, or a callable returning
      one, answered to ``roots/list``.
    - ``strict_capabilities``: raise :class:`CapabilityError` before calling a method the
      server did not advertise (default True).
    - ``protocol``: ``"auto"`` (probe for 2026-07-28, fall back to the handshake),
      ``"handshake"`` (handshake only) or a version to pin; ``protocol_version``: the version
      ``initialize`` offers; ``probe_timeout``: how long the probe waits (seconds; not over
      Streamable HTTP, where every server answers it).
    - ``max_input_rounds``: how many 2026 ``input_required`` rounds one call may take.
    - ``cache``: keep 2026 list/read results for their ``ttlMs`` (off by default).
    - ``recovery``: ``True`` or a :class:`Backoff` to heal a lost connection on the next
      call (a stdio server that exited is started again, an HTTP server that forgot the
      session or restarted gets a new handshake), with the same handlers, roots and
      subscriptions. A request the server did not run (connection refused, HTTP 404 for
      the session) is sent again; one that was out when the connection broke fails with
      :class:`ConnectionClosed` and is never re-sent. See ``docs/legacy.md``.
    - ``auto_reinitialize=True``: the older name of ``recovery=True``.
    - ``on_close``: ``callback(cause)`` when the connection ends, by :meth:`close` (cause
      None) or underneath, such as a stdio server that exits (see :meth:`on_close`).
    """

    def on_sampling(
        self, handler: Callable[..., Any], *, tools: bool = False, context: bool = False
    ) -> None:
        """Answer ``sampling/createMessage`` with ``handler(params[, ctx])``.

        ``params`` is a :class:`CreateMessageRequestParams`; return a
        :class:`CreateMessageResult` (or its dict). ``tools=True`` declares support for tools
        in sampling, ``context=True`` for ``includeContext``. Register before ``connect()``.
        """
        self._before_connect("on_sampling")
        self._sampling = (handler, tools, context)

    def on_elicitation(
        self, handler: Callable[..., Any], *, mode: Literal["form", "url"] = "form"
    ) -> None:
        """Answer ``elicitation/create`` requests of ``mode`` with ``handler(params[, ctx])``.

        Form handlers get :class:`ElicitRequestFormParams`, URL handlers
        :class:`ElicitRequestURLParams`; return an :class:`ElicitResult` (or its dict). Only
        the modes given a handler are declared. Schema defaults fill fields an accepting form
        handler left out. Register before ``connect()``.
        """
        self._before_connect("on_elicitation")
        self._elicitation[mode] = handler

    def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots (a list of :class:`Root`, paths or URIs, or a callable returning
        one) and tell the server with ``notifications/roots/list_changed``."""
        if self._roots is None and self._state != "idle":
            raise InvalidStateError("the roots capability was not declared at connect()")
        self._roots = roots
        if self._state == "connected":
            assert self._session is not None
            self._install_handlers(self._session)
            if not self._stateless():  # 2026: the server asks for roots when it needs them
                self.notify("notifications/roots/list_changed")

    def on_notification(
        self, method: str | None, callback: Callable[[Notification], None]
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for each notification of ``method`` (None: all).

        Returns a function that removes the callback.
        """
        entry = (method, callback)
        self._listeners.append(entry)
        if self._session is not None:
            self._listener_removers[id(entry)] = self._session.add_listener(method, callback)
        return lambda: self._remove_listener(self._listeners, entry)

    def on_error(self, callback: Callable[[BaseException], None]) -> Callable[[], None]:
        """Call ``callback(error)`` for problems that do not end the connection (a garbled
        message, a transport hiccup). Without a callback they are logged."""
        self._error_listeners.append(callback)
        if self._session is not None:
            self._listener_removers[id(callback)] = self._session.add_error_listener(callback)
        return lambda: self._remove_listener(self._error_listeners, callback)

    def on_log(
        self, callback: Callable[[LoggingMessageNotificationParams], None]
    ) -> Callable[[], None]:
        """Call ``callback(message)`` for each server log message (``notifications/message``)."""
        return self.on_notification(
            "notifications/message",
            lambda n: callback(LoggingMessageNotificationParams.from_wire(n.params or {})),
        )

    def on_list_changed(
        self, kind: Literal["tools", "prompts", "resources"], callback: Callable[[], None]
    ) -> Callable[[], None]:
        """Call ``callback()`` when the server says its list of ``kind`` changed."""
        if kind == "tools":
            self._tool_cache.clear()
        return self.on_notification(f"notifications/{kind}/list_changed", lambda _n: callback())

    def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
        callback: Callable[[Notification], None],
        timeout: float | None = None,
    ) -> Subscription:
        """Call ``callback(notification)`` for the changes asked for, in either era.

        In the 2026 era this is one ``subscriptions/listen`` request (re-issued if its stream
        drops); in the handshake era, ``resources/subscribe`` for each URI plus the
        list_changed notifications on the connection. ``cancel()`` the returned
        :class:`Subscription` to stop.
        """
        uris = list(resource_subscriptions)
        if self._stateless():
            filters = listen_filters(
                tools_list_changed, prompts_list_changed, resources_list_changed, uris
            )
            listener = StatelessListen(self, filters, callback)
            listener.start(self.request_timeout if timeout is None else timeout)
            return Subscription(listener.cancel)
        stops: list[Callable[[], None]] = []
        kinds = {
            "tools": tools_list_changed,
            "prompts": prompts_list_changed,
            "resources": resources_list_changed,
        }
        for kind, wanted in kinds.items():
            if wanted:
                stops.append(self.on_notification(f"notifications/{kind}/list_changed", callback))

        def updated(uri: str) -> None:
            callback(Notification("notifications/resources/updated", {"uri": uri}))

        def stop_all() -> None:
            for stop in stops:
                stop()

        try:
            for uri in uris:
                stops.append(self.subscribe_resource(uri, updated, timeout=timeout).cancel)
        except BaseException:
            stop_all()
            raise
        return Subscription(stop_all)

    # -- utilities ----------------------------------------------------------------------

    def ping(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the 2026 era,
        which has no ping)."""
        method = "server/discover" if self._stateless() else "ping"
        self.request(method, timeout=timeout, signal=signal)

    def set_logging_level(
        self,
        level: LoggingLevel,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        """Ask the server to send log messages at ``level`` and above (see :meth:`on_log`).

        In the 2026 era the level travels in each request's ``_meta`` and the messages come
        on that request's stream; nothing is sent now.
        """
        if self._stateless():
            self._log_level = level
            return
        self._require("logging/setLevel", "logging")
        self.request("logging/setLevel", {"level": level}, timeout=timeout, signal=signal)
        self._log_level = level  # sent again if the client reconnects

    # -- tools --------------------------------------------------------------------------

    def list_tools(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Tool]:
        """Every tool the server offers (all pages)."""
        self._require("tools/list", "tools")
        tools = list(
            self._all_pages("tools/list", ListToolsResult, "tools", timeout, signal, on_progress)
        )
        if self._stateless():
            tools = [tool for tool in tools if self._headers_valid(tool)]
        self._tool_cache = {tool.name: tool for tool in tools}
        return tools

    def list_tools_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListToolsResult:
        """One page of tools; pass the previous page's ``next_cursor`` to get the next."""
        self._require("tools/list", "tools")
        return self._page("tools/list", ListToolsResult, cursor, timeout, signal, on_progress)

    @overload
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
        validate: bool = False,
        task: None = None,
    ) -> CallToolResult: ...

    @overload
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
        validate: bool = False,
        task: TaskMetadata | Mapping[str, Any] | Literal[True],
    ) -> ToolTask: ...

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
        validate: bool = False,
        task: TaskMetadata | Mapping[str, Any] | Literal[True] | None = None,
    ) -> CallToolResult | ToolTask:
        """Call a tool. A failing tool is a result with ``is_error`` set, not an exception.

        ``validate=True`` checks ``structured_content`` against the tool's ``outputSchema``
        (needs the ``validation`` extra) and raises :class:`OutputValidationError` naming the
        path. ``task=True`` (or ``TaskMetadata(ttl=...)``) runs the call as a task and returns
        a :class:`ToolTask` handle at once: a 2025-11-25 core task, or in the 2026 era a task
        of the ``io.modelcontextprotocol/tasks`` extension (where the server decides: it may
        answer at once, and the handle is then done; ``ttl`` is not sent).
        """
        self._require("tools/call", "tools")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        if task is not None:
            if self._stateless():
                return self._call_tool_as_task(params, timeout, signal, on_progress)
            self._require("tools/call", "tasks.requests.tools.call")
            if task is True:
                params["task"] = {}
            elif isinstance(task, TaskMetadata):
                params["task"] = task.to_wire()
            else:
                params["task"] = dict(task)
            created = self._call(
                "tools/call",
                params,
                CreateTaskResult,
                timeout=timeout,
                signal=signal,
                on_progress=on_progress,
            )
            return ToolTask(self, created.task)
        try:
            result = self._call(
                "tools/call",
                params,
                CallToolResult,
                timeout=timeout,
                signal=signal,
                on_progress=on_progress,
            )
        except RpcError as exc:
            if exc.code != stateless.HEADER_MISMATCH or not self._stateless():
                raise
            # The tool's x-mcp-header annotations changed since we listed it: list, retry once.
            self.list_tools(timeout=timeout, signal=signal)
            result = self._call(
                "tools/call",
                params,
                CallToolResult,
                timeout=timeout,
                signal=signal,
                on_progress=on_progress,
            )
        if validate and not result.is_error:
            self._validate_output(name, result, timeout)
        return result

    def _validate_output(self, name: str, result: CallToolResult, timeout: float | None) -> None:
        from .protocol.validation import validate_structured

        tool = self._tool_cache.get(name)
        if tool is None:
            self.list_tools(timeout=timeout)
            tool = self._tool_cache.get(name)
        if tool is not None and tool.output_schema is not None:
            validate_structured(name, tool.output_schema, result.structured_content)

    # -- resources ----------------------------------------------------------------------

    def list_resources(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Resource]:
        """Every resource the server lists (all pages)."""
        self._require("resources/list", "resources")
        return list(
            self._all_pages(
                "resources/list", ListResourcesResult, "resources", timeout, signal, on_progress
            )
        )

    def list_resources_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListResourcesResult:
        """One page of resources."""
        self._require("resources/list", "resources")
        return self._page(
            "resources/list", ListResourcesResult, cursor, timeout, signal, on_progress
        )

    def list_resource_templates(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[ResourceTemplate]:
        """Every resource template (all pages)."""
        self._require("resources/templates/list", "resources")
        return list(
            self._all_pages(
                "resources/templates/list",
                ListResourceTemplatesResult,
                "resource_templates",
                timeout,
                signal,
                on_progress,
            )
        )

    def list_resource_templates_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListResourceTemplatesResult:
        """One page of resource templates."""
        self._require("resources/templates/list", "resources")
        return self._page(
            "resources/templates/list",
            ListResourceTemplatesResult,
            cursor,
            timeout,
            signal,
            on_progress,
        )

    def read_resource(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ReadResourceResult:
        """Read a resource's contents."""
        self._require("resources/read", "resources")
        return self._call(
            "resources/read",
            {"uri": uri},
            ReadResourceResult,
            timeout=timeout,
            signal=signal,
            on_progress=on_progress,
        )

    def subscribe_resource(
        self,
        uri: str,
        callback: Callable[[str], None],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> Subscription:
        """Call ``callback(uri)`` whenever the server says ``uri`` was updated.

        Returns a :class:`Subscription`; ``cancel()`` it (or call
        :meth:`unsubscribe_resource`) to stop. The server is asked once per URI.
        """
        if self._stateless():
            return self.listen(
                resource_subscriptions=[uri],
                callback=lambda n: callback(str((n.params or {}).get("uri", uri))),
                timeout=timeout,
            )
        self._require("resources/subscribe", "resources.subscribe")
        with self._subscriptions_lock:
            callbacks = self._subscriptions.setdefault(uri, [])
            first = not callbacks
            callbacks.append(callback)
        if first:
            try:
                self.request("resources/subscribe", {"uri": uri}, timeout=timeout, signal=signal)
            except BaseException:
                with self._subscriptions_lock:
                    self._subscriptions.pop(uri, None)
                raise

        def cancel() -> None:
            with self._subscriptions_lock:
                current = self._subscriptions.get(uri, [])
                if callback in current:
                    current.remove(callback)
                last = not current
            if last:
                self.unsubscribe_resource(uri)

        return Subscription(cancel)

    def unsubscribe_resource(
        self, uri: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> None:
        """Stop every subscription to ``uri``."""
        with self._subscriptions_lock:
            self._subscriptions.pop(uri, None)
        if self._state == "connected":
            self.request("resources/unsubscribe", {"uri": uri}, timeout=timeout, signal=signal)

    # -- prompts and completion ---------------------------------------------------------

    def list_prompts(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Prompt]:
        """Every prompt the server offers (all pages)."""
        self._require("prompts/list", "prompts")
        return list(
            self._all_pages(
                "prompts/list", ListPromptsResult, "prompts", timeout, signal, on_progress
            )
        )

    def list_prompts_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListPromptsResult:
        """One page of prompts."""
        self._require("prompts/list", "prompts")
        return self._page("prompts/list", ListPromptsResult, cursor, timeout, signal, on_progress)

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> GetPromptResult:
        """Render a prompt with ``arguments``."""
        self._require("prompts/get", "prompts")
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return self._call(
            "prompts/get",
            params,
            GetPromptResult,
            timeout=timeout,
            signal=signal,
            on_progress=on_progress,
        )

    def complete(
        self,
        ref: PromptReference | ResourceTemplateReference | Mapping[str, Any],
        argument_name: str,
        value: str,
        context: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> CompleteResult:
        """Ask for completions of one argument of a prompt or resource template.

        ``context`` holds the values of arguments already filled in.
        """
        if versions.at_least(self.protocol_version, "2025-03-26"):
            self._require("completion/complete", "completions")
        wire_ref = ref.to_wire() if hasattr(ref, "to_wire") else dict(ref)
        params: dict[str, Any] = {
            "ref": wire_ref,
            "argument": {"name": argument_name, "value": value},
        }
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return self._call(
            "completion/complete",
            params,
            CompleteResult,
            timeout=timeout,
            signal=signal,
            on_progress=on_progress,
        )
