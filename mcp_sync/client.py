"""The public client: one blocking method per MCP request, typed results.

Every request method takes, keyword-only:

- ``timeout``: seconds to wait for the answer (default: the client's ``request_timeout``;
  ``math.inf`` waits forever). Progress notifications renew it; ``max_total_timeout`` caps it.
- ``signal``: an :class:`~mcp_sync.abort.AbortSignal`; aborting it ends the call with
  :class:`~mcp_sync.errors.Aborted` and cancels the request on the wire.
- ``on_progress``: called with each :class:`ProgressNotificationParams` the server sends.

Handlers and callbacks run on the client's dispatcher thread, one at a time, in arrival order.

Layout: this module is the public API and nothing else; each body hands the call to one of
the parts a :class:`Client` is composed of (``docs/contributing.md`` draws them), none of which
knows the client.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._client import calls as _calls
from ._client.facade import Moved, Option
from ._client.tasks import Tasks
from ._client.tools import PinSource, Tools
from ._connection.connection import (
    ClientState,
    CloseCallback,
    Connection,
    ProgressHandler,
    TransportSource,
)
from ._connection.handlers import ClientHandlers, RootsSource, weak_context
from ._connection.negotiation import ServerState, choose_protocol
from ._connection.options import ConnectionOptions, client_info, recovery_policy
from ._connection.subscriptions import ResourceSubscriptions, Subscription
from ._rules.numbers import call_timeout, whole
from ._rules.warn import deprecated
from ._version import __version__
from .abort import AbortSignal
from .backoff import Backoff
from .errors import InvalidStateError
from .protocol import methods, versions
from .protocol.jsonrpc import Notification
from .protocol.types import (
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    Implementation,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    ServerCapabilities,
    Tool,
)
from .skills import Skills

if TYPE_CHECKING:
    from .functions import Functions

__all__ = ["Client", "ClientState", "HandlerContext", "ServerState", "Subscription"]

_C = TypeVar("_C", bound="Client")
#: Held while a client's ``functions`` is made, so that two threads get the same one.
_MAKING_FUNCTIONS = threading.Lock()


@dataclass(frozen=True)
class HandlerContext:
    """What a handler may want besides the request's params.

    ``signal`` fires when the server cancels the request (or the connection closes); a long
    handler should check it. ``client`` is the client the request came through: a handler may
    call it (e.g. list resources while sampling) without deadlock.
    """

    signal: AbortSignal
    client: Client
    method: str


class Client:
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
      ``initialize`` offers; ``probe_timeout``: how long the probe waits once a stdio
      server has read it (seconds; not over Streamable HTTP, where every server answers it).
    - ``max_input_rounds``: how many 2026 ``input_required`` rounds one call may take.
    - ``cache``: keep 2026 list/read results for their ``ttlMs`` (off by default).
    - ``recovery``: ``True`` or a :class:`Backoff` to heal a lost connection on the next
      call (a stdio server that exited is started again, an HTTP server that forgot the
      session or restarted gets a new handshake), with the same handlers, roots and
      subscriptions. A request the server did not run (connection refused, HTTP 404 for
      the session) is sent again; one that was out when the connection broke fails with
      :class:`ConnectionClosed` and is never re-sent. See ``docs/legacy.md``. (Its older
      name, ``auto_reinitialize=True``, is deprecated: see ``docs/api.md``.)
    - ``on_close``: ``callback(cause)`` when the connection ends, by :meth:`close` (cause
      None) or underneath, such as a stdio server that exits (see :meth:`on_close`).
    - ``pin``: a pin file, ``True`` (in memory) or a :class:`Pins`: see ``docs/pins.md``.
    """

    request_timeout: Option[float] = Option()
    max_total_timeout: Option[float | None] = Option()
    strict_capabilities: Option[bool] = Option()
    probe_timeout: Option[float] = Option()
    client_info: Option[Implementation] = Option()
    #: The ``recovery=`` policy, or None when a lost connection ends the client.
    recovery: Option[Backoff | None] = Option()

    def __init__(
        self,
        name: str = "mcp_sync",
        version: str = __version__,
        *,
        title: str | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_version: str = versions.LATEST_HANDSHAKE,
        request_timeout: float = 30.0,
        max_total_timeout: float | None = None,
        roots: RootsSource | None = None,
        strict_capabilities: bool = True,
        protocol: str = "auto",
        probe_timeout: float = 2.0,
        max_input_rounds: int = 8,
        cache: bool = False,
        recovery: Backoff | bool | None = None,
        auto_reinitialize: bool = False,
        on_close: CloseCallback | None = None,
        pin: PinSource = None,
    ) -> None:
        protocol, protocol_version = choose_protocol(protocol, protocol_version)
        self._connection = Connection(
            ConnectionOptions(
                client_info=client_info(name, version, title),
                protocol=protocol,
                handshake_version=protocol_version,
                request_timeout=request_timeout,
                max_total_timeout=max_total_timeout,
                strict_capabilities=strict_capabilities,
                probe_timeout=probe_timeout,
                max_input_rounds=max_input_rounds,
                cache=cache,
                recovery=recovery_policy(recovery, auto_reinitialize),
                on_close=on_close,
            )
        )
        self._tools = Tools(self._connection, pin)
        #: The task operations by task id (``get``, ``result``, ``list``, ``cancel``,
        #: ``update``) and ``call_tool`` to start one: see :class:`~mcp_sync.Tasks`.
        self.tasks = Tasks(self._connection, self._tools.check_pinned)
        #: The skills extension (``list``, ``get``, ``load``): see :class:`~mcp_sync.skills.Skills`.
        self.skills = Skills(self._connection)
        self._functions: Functions | None = None
        self._handlers = ClientHandlers(roots, capabilities)
        self._resources = ResourceSubscriptions(self._connection)
        if "IPython" in sys.modules:  # in a notebook, list_tools() shows as a table from now on
            from ._presentation.repr import register_ipython

            register_ipython()

    @property
    def functions(self) -> Functions:
        """Each tool as a typed function (``client.functions.get_time(zone="UTC")``): see
        :class:`~mcp_sync.Functions`."""
        with _MAKING_FUNCTIONS:
            if self._functions is None:
                # made on first use: its module and the schema-to-type code load only then
                from .functions import Functions

                self._functions = Functions(self)
            return self._functions

    @property
    def max_input_rounds(self) -> int:
        """How many 2026 ``input_required`` rounds one call may take."""
        return self._connection.stateless.max_input_rounds

    @max_input_rounds.setter
    def max_input_rounds(self, rounds: int) -> None:
        self._connection.stateless.max_input_rounds = whole(rounds, "Client: max_input_rounds")

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """``"idle"``, ``"connecting"``, ``"connected"``, ``"disconnected"`` or ``"closed"``.

        ``"closed"`` as soon as the connection ends, whether by :meth:`close` or underneath
        (a stdio server that exits, a stream that drops for good). A closed client stays
        closed: connect a new :class:`~mcp_sync.Client`. With ``recovery=``, a connection
        that ends underneath leaves the client ``"disconnected"`` instead, until the next call
        reconnects it.
        """
        return self._connection.state

    @property
    def auto_reinitialize(self) -> bool:
        """Deprecated: ``client.recovery is not None`` (``auto_reinitialize=`` is ``recovery=``)."""
        deprecated("client.auto_reinitialize is now client.recovery is not None")
        return self._connection.options.recovery is not None

    def on_close(self, callback: CloseCallback) -> Callable[[], None]:
        """Call ``callback(cause)`` once when the connection ends; returns a remover.

        ``cause`` is None after :meth:`close`, else why the connection ended (for a stdio
        server that died, a :class:`~mcp_sync.errors.ConnectionClosed` with ``exit_status``
        and ``stderr_tail``). The callback runs after the client has shut down (its threads
        ended, the server stopped), on no lock: on the thread that called :meth:`close`, or on
        a short-lived ``mcp-sync-closer`` thread when the connection ended underneath. It may
        call the client, and build and connect a new one. Also the ``on_close=`` option.
        """
        return self._connection.on_close(callback)

    def connect(self: _C, transport: TransportSource, *, timeout: float | None = None) -> _C:
        """Start ``transport`` and agree on a protocol version. Returns the client.

        ``transport`` is a :class:`Transport`, or a function returning a new one: with
        ``recovery=``, the client calls it again to replace a connection that closed (a stdio
        server that exited). Given a transport object, recovery can only re-initialize on it.

        With ``protocol="auto"`` (the default) the client first probes with
        ``server/discover`` (2026-07-28, the stateless era); a server that does not answer it
        as a 2026-era server (within ``probe_timeout`` of reading it, except over Streamable
        HTTP, where every server answers) gets the ``initialize`` handshake on the same
        connection; all of it within ``timeout``.
        ``protocol="handshake"`` skips the probe; a version pins it.

        Raises :class:`UnsupportedProtocolVersion` (after closing) when no version is shared.
        """
        self._install_handlers()
        wait = self.request_timeout if timeout is None else timeout
        self._connection.connect(transport, self.capabilities(), wait)
        return self

    def close(self) -> None:
        """Close the connection: pending calls fail with ``ConnectionClosed``, the transport
        stops (a stdio server is shut down) and the client's threads end; then the ``on_close``
        callbacks run. Idempotent; safe from any thread, a handler included.

        In a child made by ``fork()``, the copy of a client made before the fork only closes
        the child's copies of its pipes and sockets: the parent's server and session go on.
        """
        self._connection.close()

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        server = self._connection.server
        info = server.server_info if server else None
        name = info.name if info else None
        return f"<mcp_sync.Client {self.state} server={name!r}>"

    # -- what the server told us --------------------------------------------------------

    @property
    def server_info(self) -> Implementation | None:
        """The server's name, version and title (from the handshake, or in the 2026 era from
        ``server/discover`` and the latest result that carried it)."""
        return self._connection.initialized().server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self._connection.initialized().capabilities

    @property
    def instructions(self) -> str | None:
        """The server's usage instructions, if it gave any."""
        return self._connection.initialized().instructions

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version."""
        return self._connection.initialized().protocol_version

    @property
    def era(self) -> versions.Era:
        """``"handshake"`` (handshake) or ``"stateless"`` (stateless, 2026-07-28+)."""
        return self._connection.initialized().era

    def discover(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> DiscoverResult:
        """Ask the server again what it supports (``server/discover``, 2026 era only)."""
        connection = self._connection
        timeout = call_timeout(timeout, "server/discover")
        connection.require_era("stateless", "server/discover")
        result = _calls.call(connection, methods.SERVER_DISCOVER, None, timeout, signal)
        connection.server = connection.initialized().rediscovered(result)
        return result

    # -- capabilities and handlers ------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities this client declares, from its handlers and options."""
        return self._handlers.capabilities()

    def _install_handlers(self) -> None:
        """Give the connection a handler for each server request this client answers."""
        context = weak_context(self, HandlerContext)
        self._handlers.install(self._connection.set_handler, context)

    def _before_connect(self, what: str) -> None:
        if self.state != "idle":
            raise InvalidStateError(
                f"register {what} before connect(): capabilities are declared in the handshake"
            )

    # -- generic requests ---------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> Any:
        """Send any request and return its raw result (a dict). For methods the typed API
        does not cover."""
        return self._connection.request(
            method, params, timeout=timeout, signal=signal, on_progress=on_progress
        )

    def notify(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Send a notification. Raises :class:`~mcp_sync.errors.WriteTimeout` when a server
        that stopped reading has not taken it within ``timeout`` (default ``request_timeout``)."""
        self._connection.notify(method, params, timeout)

    def on_sampling(
        self, handler: Callable[..., Any], *, tools: bool = False, context: bool = False
    ) -> None:
        """Answer ``sampling/createMessage`` with ``handler(params[, ctx])``.

        ``params`` is a :class:`CreateMessageRequestParams`; return a
        :class:`CreateMessageResult` (or its dict). ``tools=True`` declares support for tools
        in sampling, ``context=True`` for ``includeContext``. Register before ``connect()``.
        """
        self._before_connect("on_sampling")
        self._handlers.sampling = (handler, tools, context)

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
        self._handlers.elicitation[mode] = handler

    def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots (a list of :class:`Root`, paths or URIs, or a callable returning
        one) and tell the server with ``notifications/roots/list_changed``."""
        if self._handlers.roots is None and self.state != "idle":
            raise InvalidStateError("the roots capability was not declared at connect()")
        self._handlers.roots = roots
        if self.state == "connected":
            self._install_handlers()
            if not self._connection.is_stateless:  # 2026: the server asks when it needs them
                self.notify("notifications/roots/list_changed")

    def on_notification(
        self, method: str | None, callback: Callable[[Notification], None]
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for each notification of ``method`` (None: all).

        Returns a function that removes the callback.
        """
        return self._connection.on_notification(method, callback)

    def on_error(self, callback: Callable[[BaseException], None]) -> Callable[[], None]:
        """Call ``callback(error)`` for problems that do not end the connection (a garbled
        message, a transport hiccup). Without a callback they are logged."""
        return self._connection.on_error(callback)

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
        wanted = {
            "tools": tools_list_changed,
            "prompts": prompts_list_changed,
            "resources": resources_list_changed,
        }
        kinds = [kind for kind, on in wanted.items() if on]
        return self._resources.listen(kinds, list(resource_subscriptions), callback, timeout)

    # -- utilities ----------------------------------------------------------------------

    def ping(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the 2026 era,
        which has no ping)."""
        method = "server/discover" if self._connection.is_stateless else "ping"
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
        if self._connection.is_stateless:
            self._connection.log_level = level
            return
        self._connection.require("logging/setLevel", "logging")
        self.request("logging/setLevel", {"level": level}, timeout=timeout, signal=signal)
        self._connection.log_level = level  # sent again if the client reconnects

    # -- tools --------------------------------------------------------------------------

    def list_tools(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Tool]:
        """Every tool the server offers (all pages).

        ``timeout`` bounds the whole listing, all pages together; progress renews it.
        """
        return self._tools.list(timeout, signal, on_progress)

    def list_tools_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListToolsResult:
        """One page of tools; pass the previous page's ``next_cursor`` to get the next."""
        return _calls.page(
            self._connection, methods.TOOLS_LIST, cursor, timeout, signal, on_progress
        )

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
    ) -> CallToolResult:
        """Call a tool. A failing tool is a result with ``is_error`` set, not an exception.

        ``validate=True`` checks ``structured_content`` against the tool's ``outputSchema``
        (needs the ``validation`` extra) and raises :class:`OutputValidationError` naming the
        path. To run the call as a task, see :meth:`Tasks.call_tool` (``client.tasks``);
        ``task=`` is its deprecated spelling.
        """
        if task is not None:  # 0.1.0's spelling: task=True, a TaskMetadata or its dict
            deprecated("call_tool(task=...) is now client.tasks.call_tool(...)")
            ttl = task.get("ttl") if isinstance(task, Mapping) else getattr(task, "ttl", None)
            return self.tasks.call_tool(
                name, arguments, ttl=ttl, timeout=timeout, signal=signal, on_progress=on_progress
            )
        self._connection.require("tools/call", "tools")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        return self._tools.call(params, timeout, signal, on_progress, validate)

    # -- resources ----------------------------------------------------------------------

    def list_resources(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Resource]:
        """Every resource the server lists (all pages).

        ``timeout`` bounds the whole listing, all pages together; progress renews it.
        """
        return _calls.every(self._connection, methods.RESOURCES_LIST, timeout, signal, on_progress)

    def list_resources_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListResourcesResult:
        """One page of resources."""
        return _calls.page(
            self._connection, methods.RESOURCES_LIST, cursor, timeout, signal, on_progress
        )

    def list_resource_templates(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[ResourceTemplate]:
        """Every resource template (all pages).

        ``timeout`` bounds the whole listing, all pages together; progress renews it.
        """
        return _calls.every(
            self._connection, methods.RESOURCES_TEMPLATES_LIST, timeout, signal, on_progress
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
        return _calls.page(
            self._connection, methods.RESOURCES_TEMPLATES_LIST, cursor, timeout, signal, on_progress
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
        params = {"uri": uri}
        row = methods.RESOURCES_READ
        return _calls.call(self._connection, row, params, timeout, signal, on_progress)

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
        return self._resources.subscribe(uri, callback, timeout, signal)

    def unsubscribe_resource(
        self, uri: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> None:
        """Stop every subscription to ``uri``."""
        self._resources.unsubscribe(uri, timeout, signal)

    # -- prompts and completion ---------------------------------------------------------

    def list_prompts(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Prompt]:
        """Every prompt the server offers (all pages).

        ``timeout`` bounds the whole listing, all pages together; progress renews it.
        """
        return _calls.every(self._connection, methods.PROMPTS_LIST, timeout, signal, on_progress)

    def list_prompts_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ListPromptsResult:
        """One page of prompts."""
        return _calls.page(
            self._connection, methods.PROMPTS_LIST, cursor, timeout, signal, on_progress
        )

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
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        row = methods.PROMPTS_GET
        return _calls.call(self._connection, row, params, timeout, signal, on_progress)

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
            self._connection.require("completion/complete", "completions")
        wire_ref = ref.to_wire() if hasattr(ref, "to_wire") else dict(ref)
        params: dict[str, Any] = {
            "ref": wire_ref,
            "argument": {"name": argument_name, "value": value},
        }
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        row = methods.COMPLETION_COMPLETE
        return _calls.call(self._connection, row, params, timeout, signal, on_progress)

    # -- extensions: ``client.tasks`` and ``client.skills``; their old names still work -----

    list_skills = Moved("skills", "list")
    get_skill = Moved("skills", "get")
    load_skill = Moved("skills", "load")
    get_task = Moved("tasks", "get")
    get_task_result = Moved("tasks", "result")
    list_tasks = Moved("tasks", "list")
    cancel_task = Moved("tasks", "cancel")
    update_task = Moved("tasks", "update")
    answer_input_requests = Moved("tasks", "answer_input_requests")
    on_task_status = Moved("tasks", "on_status")
