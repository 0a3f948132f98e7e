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

import contextlib
import dataclasses
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

import pydantic

from . import _dispatch, _handlers
from ._handlers import RootsSource
from ._listen import ModernListen, listen_filters
from ._session import Session
from ._tasks import ToolTask
from .abort import AbortController, AbortSignal
from .errors import (
    CapabilityError,
    InvalidStateError,
    MissingClientCapability,
    NotSupportedInEra,
    ProtocolError,
    RequestTimeout,
    RpcError,
    TransportError,
    UnsupportedProtocolVersion,
)
from .protocol import modern, versions
from .protocol.jsonrpc import Notification
from .protocol.meta import SERVER_INFO as SERVER_INFO_KEY
from .protocol.pagination import follow_cursors
from .protocol.types import (
    CallToolResult,
    CancelTaskResult,
    CompleteResult,
    CreateTaskResult,
    DiscoverResult,
    GetPromptResult,
    GetTaskResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListTasksResult,
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
    ServerCapabilities,
    Task,
    TaskMetadata,
    TaskStatusNotificationParams,
    Tool,
)
from .transports.base import Transport

__all__ = ["Client", "ClientState", "Subscription"]

logger = logging.getLogger("mcp_sync")

ClientState = Literal["idle", "connecting", "connected", "closed"]
ProgressHandler = Callable[[ProgressNotificationParams], None]
_Model = TypeVar("_Model", bound=pydantic.BaseModel)

_live_clients: weakref.WeakSet[Client] = weakref.WeakSet()


def _mark_forked() -> None:
    for client in list(_live_clients):
        client._forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_forked)


@dataclasses.dataclass(frozen=True)
class ServerState:
    """What the server told us about itself, from ``initialize`` or ``server/discover``."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation | None
    instructions: str | None
    discover: DiscoverResult | None = None


class _LegacyServer(Exception):
    """The ``server/discover`` probe says: not a 2026-era server."""


class Subscription:
    """A live subscription; ``cancel()`` ends it (idempotent). Also a context manager."""

    def __init__(self, cancel: Callable[[], None]) -> None:
        self._cancel: Callable[[], None] | None = cancel

    def cancel(self) -> None:
        """End the subscription."""
        cancel, self._cancel = self._cancel, None
        if cancel is not None:
            cancel()

    @property
    def active(self) -> bool:
        return self._cancel is not None

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.cancel()


class Client:
    """A synchronous MCP client. Connect it to a transport, then call it from any thread.

    >>> client = Client("my-app", "1.0")                                  # doctest: +SKIP
    >>> client.connect(StdioTransport("mcp-server-time"))                  # doctest: +SKIP
    >>> client.call_tool("get_current_time", {"timezone": "UTC"}).text    # doctest: +SKIP
    """

    def __init__(
        self,
        name: str = "mcp_sync",
        version: str = "0.1.0",
        *,
        title: str | None = None,
        capabilities: Mapping[str, Any] | None = None,
        protocol_version: str = versions.LATEST,
        request_timeout: float = 30.0,
        max_total_timeout: float | None = None,
        roots: RootsSource | None = None,
        strict_capabilities: bool = True,
        protocol: str = "auto",
        probe_timeout: float = 2.0,
        max_input_rounds: int = 8,
    ) -> None:
        if not versions.is_supported(protocol_version):
            raise UnsupportedProtocolVersion(protocol_version, versions.SUPPORTED)
        if protocol not in ("auto", "legacy") and not versions.is_supported(protocol):
            raise UnsupportedProtocolVersion(
                protocol, (*versions.MODERN_VERSIONS, *versions.SUPPORTED)
            )
        if protocol in versions.SUPPORTED:
            protocol_version = protocol
        self.client_info = (
            Implementation(name=name, version=version, title=title)
            if title is not None
            else Implementation(name=name, version=version)
        )
        self.request_timeout = request_timeout
        self.max_total_timeout = max_total_timeout
        self.strict_capabilities = strict_capabilities
        self._extra_capabilities = dict(capabilities or {})
        self._requested_version = protocol_version
        self._protocol = protocol
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self._log_level: str | None = None
        self._roots = roots
        self._state: ClientState = "idle"
        self._state_lock = threading.Lock()
        self._forked = False
        self._session: Session | None = None
        self._transport: Transport | None = None
        self._dispatcher: _dispatch.Dispatcher | None = None
        self._sampling: tuple[Callable[..., Any], bool, bool] | None = None
        self._elicitation: dict[str, Callable[..., Any]] = {}
        self._listeners: list[tuple[str | None, Callable[[Notification], None]]] = []
        self._error_listeners: list[Callable[[BaseException], None]] = []
        self._subscriptions: dict[str, list[Callable[[str], None]]] = {}
        self._subscriptions_lock = threading.Lock()
        self._tool_cache: dict[str, Tool] = {}
        self._server: ServerState | None = None
        self._listens: dict[Any, ModernListen] = {}

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """``"idle"``, ``"connecting"``, ``"connected"`` or ``"closed"``."""
        return self._state

    def connect(self, transport: Transport, *, timeout: float | None = None) -> Client:
        """Start ``transport`` and agree on a protocol version. Returns the client.

        With ``protocol="auto"`` (the default) the client first probes with
        ``server/discover`` (2026-07-28, the stateless era); a server that does not answer it
        as a 2026-era server within ``probe_timeout`` gets the ``initialize`` handshake on the
        same connection. ``protocol="legacy"`` skips the probe; a version pins it.

        Raises :class:`UnsupportedProtocolVersion` (after closing) when no version is shared.
        """
        with self._state_lock:
            if self._state != "idle":
                raise InvalidStateError(f"cannot connect: the client is {self._state}")
            self._state = "connecting"
        _live_clients.add(self)
        self._transport = transport
        self._dispatcher = _dispatch.Dispatcher()
        session = self._session = Session(transport, self._dispatcher)
        for method, listener in self._listeners:
            session.add_listener(method, listener)
        for error_listener in self._error_listeners:
            session.add_error_listener(error_listener)
        session.add_listener("notifications/resources/updated", self._on_resource_updated)
        session.add_listener(None, self._route_subscription)
        session.inline_listener = self._route_subscription_inline
        self._install_handlers(session)
        try:
            transport.start()
            self._negotiate(session, timeout)
        except BaseException:
            self.close()
            raise
        with self._state_lock:
            if self._state == "connecting":
                self._state = "connected"
        return self

    def _negotiate(self, session: Session, timeout: float | None) -> None:
        mode = self._protocol
        wait = self.request_timeout if timeout is None else timeout
        if mode == "legacy" or (mode != "auto" and versions.era_of(mode) == "legacy"):
            self._initialize(session, timeout)
        elif mode != "auto":
            self._discover(session, mode, wait, probe=False)
        else:
            try:
                probe_wait = min(self.probe_timeout, wait)
                self._discover(session, versions.MODERN_VERSIONS[0], probe_wait, probe=True)
            except _LegacyServer as reason:
                logger.debug("server/discover probe: %s; using the handshake era", reason)
                self._initialize(session, timeout)

    def _discover(self, session: Session, version: str, timeout: float, probe: bool) -> None:
        """Run ``server/discover``; with ``probe`` a non-2026 answer raises _LegacyServer."""
        for attempt in range(2):
            meta = modern.request_meta(
                version, self._modern_capabilities(None), self.client_info.to_wire()
            )
            try:
                raw = session.request(
                    "server/discover", {"_meta": meta}, timeout=timeout, cancellable=False
                )
                result = self._parse("server/discover", DiscoverResult, raw)
            except RpcError as exc:
                if exc.code == modern.UNSUPPORTED_VERSION:
                    data = exc.data if isinstance(exc.data, dict) else {}
                    offered = data.get("supported") or []
                    chosen = modern.choose_version(offered)
                    if chosen is not None and chosen != version and attempt == 0:
                        version = chosen
                        continue
                    if probe and any(v in versions.SUPPORTED for v in offered):
                        raise _LegacyServer(exc) from None
                    raise UnsupportedProtocolVersion(version, offered) from None
                if probe and exc.code not in modern.MODERN_ERROR_CODES:
                    raise _LegacyServer(exc) from None
                raise
            except (RequestTimeout, TransportError, ProtocolError) as exc:
                if probe:
                    raise _LegacyServer(exc) from None
                raise
            chosen = (
                version
                if version in result.supported_versions
                else modern.choose_version(result.supported_versions)
            )
            if chosen is None:
                if probe:
                    raise _LegacyServer(
                        f"no shared 2026-era version in {result.supported_versions}"
                    )
                raise UnsupportedProtocolVersion(version, result.supported_versions)
            self._server = ServerState(
                chosen, result.capabilities, result.server_info, result.instructions, result
            )
            session.transport.set_protocol_version(chosen)
            # Over HTTP a 2026-era request is cancelled by closing its stream, nothing more.
            session.cancel_on_wire = session.transport.kind != "http"
            return

    def _initialize(self, session: Session, timeout: float | None) -> None:
        params = {
            "protocolVersion": self._requested_version,
            "capabilities": self.capabilities(),
            "clientInfo": self.client_info.to_wire(),
        }
        raw = session.request(
            "initialize",
            params,
            timeout=self.request_timeout if timeout is None else timeout,
            cancellable=False,
        )
        result = self._parse("initialize", InitializeResult, raw)
        if result.protocol_version not in versions.SUPPORTED:
            raise UnsupportedProtocolVersion(result.protocol_version, versions.SUPPORTED)
        self._server = ServerState(
            result.protocol_version, result.capabilities, result.server_info, result.instructions
        )
        session.transport.set_protocol_version(result.protocol_version)
        session.notify("notifications/initialized")

    def close(self) -> None:
        """Close the connection: pending calls fail with ``ConnectionClosed``, the transport
        stops (a stdio server is shut down) and the client's threads end. Idempotent; safe from
        any thread, a handler included."""
        with self._state_lock:
            if self._state == "closed":
                return
            self._state = "closed"
        _live_clients.discard(self)
        session, transport, dispatcher = self._session, self._transport, self._dispatcher
        if session is not None:
            session.fail_all(None)
        if transport is not None:
            try:
                transport.close()
            except Exception:
                logger.exception("closing the transport failed")
        if session is not None:
            session.detach()
        if dispatcher is not None:
            dispatcher.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        info = self._server.server_info if self._server else None
        server = info.name if info else None
        return f"<mcp_sync.Client {self._state} server={server!r}>"

    # -- what the server told us --------------------------------------------------------

    @property
    def server_info(self) -> Implementation | None:
        """The server's name, version and title (from the handshake, or in the 2026 era from
        ``server/discover`` and the latest result that carried it)."""
        return self._initialized().server_info

    @property
    def server_capabilities(self) -> ServerCapabilities:
        return self._initialized().capabilities

    @property
    def instructions(self) -> str | None:
        """The server's usage instructions, if it gave any."""
        return self._initialized().instructions

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version."""
        return self._initialized().protocol_version

    @property
    def era(self) -> versions.Era:
        """``"legacy"`` (handshake) or ``"modern"`` (stateless, 2026-07-28+)."""
        return versions.era_of(self.protocol_version)

    def discover(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> DiscoverResult:
        """Ask the server again what it supports (``server/discover``, 2026 era only)."""
        self._require_era("modern", "server/discover")
        result = self._call(
            "server/discover",
            None,
            DiscoverResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
        )
        state = self._initialized()
        self._server = ServerState(
            state.protocol_version,
            result.capabilities,
            result.server_info or state.server_info,
            result.instructions,
            result,
        )
        return result

    def _initialized(self) -> ServerState:
        if self._server is None:
            raise InvalidStateError(f"the client is {self._state}: call connect() first")
        return self._server

    def _modern(self) -> bool:
        return (
            self._server is not None and versions.era_of(self._server.protocol_version) == "modern"
        )

    def _require_era(self, era: versions.Era, what: str) -> None:
        if self.era != era:
            raise NotSupportedInEra(
                f"{what} does not exist in protocol {self.protocol_version} ({self.era} era)"
            )

    # -- capabilities and handlers ------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities this client declares, from its handlers and options."""
        caps: dict[str, Any] = {}
        if self._roots is not None:
            caps["roots"] = {"listChanged": True}
        if self._sampling is not None:
            _, tools, context = self._sampling
            sampling: dict[str, Any] = {}
            if tools:
                sampling["tools"] = {}
            if context:
                sampling["context"] = {}
            caps["sampling"] = sampling
        if self._elicitation:
            caps["elicitation"] = {mode: {} for mode in sorted(self._elicitation)}
        for key, value in self._extra_capabilities.items():
            caps[key] = value
        return caps

    def _modern_capabilities(self, method: str | None) -> dict[str, Any]:
        """What one 2026-era request may need: the handlers' capabilities for requests that
        may come back ``input_required``, nothing for the rest."""
        if method not in modern.MRTR_METHODS:
            return {}
        caps = self.capabilities()
        if "roots" in caps:
            caps["roots"] = {}
        return caps

    def _install_handlers(self, session: Session) -> None:
        if self._roots is not None:
            roots = self._roots
            session.set_handler(
                "roots/list", lambda _params, _signal: {"roots": _handlers.roots_to_wire(roots)}
            )
        if self._sampling is not None:
            user, tools, _ = self._sampling
            session.set_handler(
                "sampling/createMessage", _handlers.sampling_handler(self, user, tools)
            )
        if self._elicitation:
            session.set_handler(
                "elicitation/create",
                _handlers.elicitation_handler(
                    self, self._elicitation.get("form"), self._elicitation.get("url")
                ),
            )

    def _before_connect(self, what: str) -> None:
        if self._state != "idle":
            raise InvalidStateError(
                f"register {what} before connect(): capabilities are declared in the handshake"
            )

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
            if not self._modern():  # 2026: the server asks for roots when it needs them
                self.notify("notifications/roots/list_changed")

    def on_notification(
        self, method: str | None, callback: Callable[[Notification], None]
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for each notification of ``method`` (None: all).

        Returns a function that removes the callback.
        """
        entry = (method, callback)
        self._listeners.append(entry)
        remove_live = self._session.add_listener(method, callback) if self._session else None

        def remove() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)
            if remove_live is not None:
                remove_live()

        return remove

    def on_error(self, callback: Callable[[BaseException], None]) -> Callable[[], None]:
        """Call ``callback(error)`` for problems that do not end the connection (a garbled
        message, a transport hiccup). Without a callback they are logged."""
        self._error_listeners.append(callback)
        remove_live = self._session.add_error_listener(callback) if self._session else None

        def remove() -> None:
            if callback in self._error_listeners:
                self._error_listeners.remove(callback)
            if remove_live is not None:
                remove_live()

        return remove

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
        if self._modern():
            filters = listen_filters(
                tools_list_changed, prompts_list_changed, resources_list_changed, uris
            )
            listener = ModernListen(self, filters, callback)
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

    def _route_subscription_inline(self, notification: Notification) -> None:
        listener = self._listens.get(modern.subscription_id(notification.params))
        if listener is not None:
            listener.deliver(notification)

    def _route_subscription(self, notification: Notification) -> None:
        listener = self._listens.get(modern.subscription_id(notification.params))
        if listener is not None:
            listener.notify_user(notification)

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
        session = self._connected_session()
        progress = None
        if on_progress is not None:
            user = on_progress

            def progress(raw: dict[str, Any]) -> None:
                user(ProgressNotificationParams.from_wire(raw))

        wait = self.request_timeout if timeout is None else timeout
        body = dict(params) if params is not None else None
        if not self._modern():
            return session.request(
                method,
                body,
                timeout=wait,
                max_total_timeout=self.max_total_timeout,
                signal=signal,
                on_progress=progress,
            )
        body = modern.with_meta(body, self._request_meta(method))
        for _ in range(self.max_input_rounds + 1):
            raw = session.request(
                method,
                body,
                timeout=wait,
                max_total_timeout=self.max_total_timeout,
                signal=signal,
                on_progress=progress,
            )
            self._note_server_info(raw)
            if modern.result_type(raw) == "complete":
                return raw
            responses = self._fulfil_input_requests(session, raw.get("inputRequests"), signal)
            body = modern.retry_params(body, responses, raw.get("requestState"))
        raise ProtocolError(
            f"{method}: the server still asks for input after {self.max_input_rounds} rounds"
        )

    def _request_meta(self, method: str) -> dict[str, Any]:
        return modern.request_meta(
            self.protocol_version,
            self._modern_capabilities(method),
            self.client_info.to_wire(),
            self._log_level,
        )

    def _fulfil_input_requests(
        self, session: Session, requests: Any, signal: AbortSignal | None
    ) -> dict[str, Any]:
        """Answer a 2026 ``input_required`` result's requests with the registered handlers,
        on the calling thread."""
        if not isinstance(requests, dict):
            return {}
        responses: dict[str, Any] = {}
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            handler = session.handler(method) if isinstance(method, str) else None
            if handler is None:
                capability = modern.INPUT_METHODS.get(str(method), str(method))
                raise MissingClientCapability(
                    modern.MISSING_CAPABILITY,
                    f"the server asks for {method} but this client has no {capability} handler"
                    f" (register one with on_{capability}() or roots=)",
                    {"requiredCapabilities": {capability: {}}},
                )
            responses[key] = handler(
                request.get("params") or {}, signal or AbortController().signal
            )
        return responses

    def _note_server_info(self, raw: Any) -> None:
        meta = raw.get("_meta") if isinstance(raw, dict) else None
        info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        state = self._server
        if (
            isinstance(info, dict)
            and state is not None
            and info != (state.server_info.to_wire() if state.server_info else None)
        ):
            with contextlib.suppress(pydantic.ValidationError):
                new_info = Implementation.from_wire(info)
                self._server = dataclasses.replace(state, server_info=new_info)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        self._connected_session().notify(method, dict(params) if params is not None else None)

    def _connected_session(self) -> Session:
        if self._forked:
            raise InvalidStateError(
                "this client was created before fork(): its threads and pipes did not survive; "
                "create the client in the child process, after the fork"
            )
        session = self._session
        if self._state != "connected" or session is None:
            if self._state == "closed" and session is not None and session.closed:
                raise session.closed_error()
            raise InvalidStateError(f"the client is {self._state}: call connect() first")
        return session

    def _call(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        result_type: type[_Model],
        *,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
    ) -> _Model:
        raw = self.request(method, params, timeout=timeout, signal=signal, on_progress=on_progress)
        return self._parse(method, result_type, raw)

    @staticmethod
    def _parse(method: str, result_type: type[_Model], raw: Any) -> _Model:
        try:
            return result_type.model_validate(raw)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'result'}: {err['msg']}"
                for err in exc.errors()[:5]
            )
            raise ProtocolError(
                f"{method}: the server's result has the wrong shape: {problems}"
            ) from None

    def _require(self, method: str, capability: str) -> None:
        """Raise CapabilityError unless the server advertised ``capability`` (dotted path)."""
        if not self.strict_capabilities:
            return
        caps: Any = self._initialized().capabilities.to_wire()
        for part in capability.split("."):
            if not isinstance(caps, dict) or caps.get(part) in (None, False):
                raise CapabilityError(method, capability)
            caps = caps[part]

    def _all_pages(
        self,
        method: str,
        result_type: type[_Model],
        key: str,
        timeout: float | None,
        signal: AbortSignal | None,
    ) -> Iterator[Any]:
        def fetch(cursor: str | None) -> _Model:
            params = {"cursor": cursor} if cursor else None
            return self._call(
                method, params, result_type, timeout=timeout, signal=signal, on_progress=None
            )

        for page in follow_cursors(method, fetch, lambda p: getattr(p, "next_cursor", None)):
            yield from getattr(page, key)

    # -- utilities ----------------------------------------------------------------------

    def ping(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> None:
        """Check that the server answers (``ping``; ``server/discover`` in the 2026 era,
        which has no ping)."""
        method = "server/discover" if self._modern() else "ping"
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
        if self._modern():
            self._log_level = level
            return
        self._require("logging/setLevel", "logging")
        self.request("logging/setLevel", {"level": level}, timeout=timeout, signal=signal)

    # -- tools --------------------------------------------------------------------------

    def list_tools(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> list[Tool]:
        """Every tool the server offers (all pages)."""
        self._require("tools/list", "tools")
        tools = list(self._all_pages("tools/list", ListToolsResult, "tools", timeout, signal))
        self._tool_cache = {tool.name: tool for tool in tools}
        return tools

    def list_tools_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> ListToolsResult:
        """One page of tools; pass the previous page's ``next_cursor`` to get the next."""
        self._require("tools/list", "tools")
        params = {"cursor": cursor} if cursor else None
        return self._call(
            "tools/list", params, ListToolsResult, timeout=timeout, signal=signal, on_progress=None
        )

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
        a :class:`ToolTask` handle at once (protocol 2025-11-25).
        """
        self._require("tools/call", "tools")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        if task is not None:
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
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> list[Resource]:
        """Every resource the server lists (all pages)."""
        self._require("resources/list", "resources")
        return list(
            self._all_pages("resources/list", ListResourcesResult, "resources", timeout, signal)
        )

    def list_resources_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> ListResourcesResult:
        """One page of resources."""
        self._require("resources/list", "resources")
        params = {"cursor": cursor} if cursor else None
        return self._call(
            "resources/list",
            params,
            ListResourcesResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
        )

    def list_resource_templates(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
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
            )
        )

    def list_resource_templates_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> ListResourceTemplatesResult:
        """One page of resource templates."""
        self._require("resources/templates/list", "resources")
        params = {"cursor": cursor} if cursor else None
        return self._call(
            "resources/templates/list",
            params,
            ListResourceTemplatesResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
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
        if self._modern():
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

    def _on_resource_updated(self, notification: Notification) -> None:
        uri = (notification.params or {}).get("uri")
        if not isinstance(uri, str):
            return
        with self._subscriptions_lock:
            callbacks = list(self._subscriptions.get(uri, ()))
        for callback in callbacks:
            try:
                callback(uri)
            except Exception:
                logger.exception("resource update callback for %s raised", uri)

    # -- prompts and completion ---------------------------------------------------------

    def list_prompts(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> list[Prompt]:
        """Every prompt the server offers (all pages)."""
        self._require("prompts/list", "prompts")
        return list(self._all_pages("prompts/list", ListPromptsResult, "prompts", timeout, signal))

    def list_prompts_page(
        self,
        cursor: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> ListPromptsResult:
        """One page of prompts."""
        self._require("prompts/list", "prompts")
        params = {"cursor": cursor} if cursor else None
        return self._call(
            "prompts/list",
            params,
            ListPromptsResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
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
            on_progress=None,
        )

    # -- tasks (2025-11-25) -------------------------------------------------------------

    def get_task(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> GetTaskResult:
        """The current state of a task (``tasks/get``)."""
        return self._call(
            "tasks/get",
            {"taskId": task_id},
            GetTaskResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
        )

    def get_task_result(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until a tool task ends and return its result (``tasks/result``)."""
        return self._call(
            "tasks/result",
            {"taskId": task_id},
            CallToolResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
        )

    def list_tasks(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> list[Task]:
        """Every task the server knows for this client (all pages)."""
        self._require("tasks/list", "tasks.list")
        return list(self._all_pages("tasks/list", ListTasksResult, "tasks", timeout, signal))

    def cancel_task(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CancelTaskResult:
        """Ask the server to cancel a task (``tasks/cancel``)."""
        self._require("tasks/cancel", "tasks.cancel")
        return self._call(
            "tasks/cancel",
            {"taskId": task_id},
            CancelTaskResult,
            timeout=timeout,
            signal=signal,
            on_progress=None,
        )

    def on_task_status(
        self, callback: Callable[[TaskStatusNotificationParams], None]
    ) -> Callable[[], None]:
        """Call ``callback(status)`` for each ``notifications/tasks/status``."""
        return self.on_notification(
            "notifications/tasks/status",
            lambda n: callback(TaskStatusNotificationParams.from_wire(n.params or {})),
        )
