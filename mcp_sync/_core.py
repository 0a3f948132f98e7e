"""The connection core behind :class:`~mcp_sync.Client`: lifecycle, era negotiation,
handlers, and the one path every request takes (``request()``: ``_meta`` and the 2026
``input_required`` rounds). The public feature methods live in :mod:`mcp_sync.client`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import pydantic

from . import _dispatch, _handlers, _hooks
from ._cache import ResultCache
from ._handlers import RootsSource
from ._listen import StatelessListen
from ._negotiation import Offer, ServerState, negotiate
from ._recovery import Reconnector, dropped_in_flight, refused_unprocessed
from ._session import CLOSED_HINT, Session
from ._version import __version__
from .abort import AbortController, AbortSignal
from .backoff import Backoff
from .errors import (
    CapabilityError,
    ConnectionClosed,
    InvalidStateError,
    McpError,
    MissingClientCapability,
    NotSupportedInEra,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from .protocol import headers, stateless, versions
from .protocol.jsonrpc import Notification
from .protocol.meta import SERVER_INFO as SERVER_INFO_KEY
from .protocol.pagination import follow_cursors
from .protocol.types import (
    TASKS_EXTENSION,
    DiscoverResult,
    Implementation,
    ProgressNotificationParams,
    ServerCapabilities,
    Tool,
)
from .protocol.validation import parse_result
from .transports.base import Transport

if TYPE_CHECKING:
    from .client import Client

__all__ = ["ClientCore", "ClientState", "CloseCallback", "ServerState", "Subscription"]

logger = logging.getLogger("mcp_sync")

ClientState = Literal["idle", "connecting", "connected", "disconnected", "closed"]
#: ``callback(cause)``: the connection ended; ``cause`` is None after :meth:`ClientCore.close`.
CloseCallback = Callable[[BaseException | None], None]
#: What ``connect()`` takes: a transport, or a function making one (needed to recover).
TransportSource = Transport | Callable[[], Transport]
ProgressHandler = Callable[[ProgressNotificationParams], None]
_Model = TypeVar("_Model", bound=pydantic.BaseModel)
_C = TypeVar("_C", bound="ClientCore")
_T = TypeVar("_T")

_live_clients: weakref.WeakSet[ClientCore] = weakref.WeakSet()


def _mark_forked() -> None:
    for client in list(_live_clients):
        client._forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_forked)


def _weak_callback(method: Callable[[Any], _T], default: Any = None) -> Callable[[Any], _T]:
    """``method`` (bound) held weakly: a callback kept by the transport's threads must not keep
    the client alive (an unreachable client is collected and its finaliser closes it). Once
    the client is gone the callback returns ``default``."""
    ref = weakref.WeakMethod(method)

    def call(arg: Any) -> _T:
        target = ref()
        return default if target is None else target(arg)

    return call


def _stop_connection(
    session: Session | None, transport: Transport | None, dispatcher: _dispatch.Dispatcher | None
) -> None:
    """Stop the transport and end the client's threads, finishing every step even when one
    is interrupted (Ctrl-C): a second ``close()`` then resumes what is left."""
    try:
        if transport is not None:
            try:
                transport.close()
            except Exception:
                logger.exception("closing the transport failed")
    finally:
        try:
            if session is not None:
                session.detach()
        finally:
            if dispatcher is not None:
                dispatcher.stop()


class _Live:
    """What a client's finaliser must stop: its current connection (recovery replaces it)."""

    __slots__ = ("dispatcher", "session", "transport")

    def __init__(self) -> None:
        self.session: Session | None = None
        self.transport: Transport | None = None
        self.dispatcher: _dispatch.Dispatcher | None = None


def _close_unreachable(what: str, live: _Live) -> None:
    """The finaliser of a client dropped without ``close()`` (it must not refer to it).

    The garbage collector may run it on any thread, in the middle of anything, one of the
    client's own threads holding one of its locks included: the shutdown runs on a thread of
    its own."""
    warnings.warn(f"unclosed {what}: call close() or use 'with'", ResourceWarning, stacklevel=2)
    threading.Thread(
        target=_stop_live, args=(live,), name="mcp-sync-finalizer", daemon=True
    ).start()


def _stop_live(live: _Live) -> None:
    if live.session is not None:
        live.session.fail_all(None)
    _stop_connection(live.session, live.transport, live.dispatcher)


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


def _typed_progress(user: ProgressHandler) -> Callable[[dict[str, Any]], None]:
    """Adapt a user's progress handler to the raw params the session hands over."""

    def progress(raw: dict[str, Any]) -> None:
        user(ProgressNotificationParams.from_wire(raw))

    return progress


class ClientCore:
    """State and plumbing shared by every client method; use :class:`~mcp_sync.Client`."""

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
    ) -> None:
        if protocol_version not in versions.HANDSHAKE_VERSIONS:
            raise UnsupportedProtocolVersion(protocol_version, versions.HANDSHAKE_VERSIONS)
        if protocol == "legacy":
            warnings.warn(
                'protocol="legacy" is now protocol="handshake"', DeprecationWarning, stacklevel=2
            )
            protocol = "handshake"
        if protocol not in ("auto", "handshake") and not versions.is_supported(protocol):
            raise UnsupportedProtocolVersion(protocol, versions.SUPPORTED)
        if protocol in versions.HANDSHAKE_VERSIONS:
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
        self._cache = ResultCache() if cache else None
        if recovery is True or (not recovery and auto_reinitialize):
            recovery = Backoff()
        #: The ``recovery=`` policy, or None when a lost connection ends the client.
        self.recovery = recovery if isinstance(recovery, Backoff) else None
        self._reconnector = Reconnector(self.recovery) if self.recovery is not None else None
        self._transport_factory: Callable[[], Transport] | None = None
        self._generation = 0  # connections made so far (recovery counts them)
        self._listener_removers: dict[int, Callable[[], None]] = {}
        self._roots = roots
        self._state: ClientState = "idle"
        self._state_lock = threading.Lock()
        self._close_callbacks: list[CloseCallback] = [] if on_close is None else [on_close]
        self._close_lock = threading.Lock()  # serializes the shutdown ladder
        self._shut_down = False  # the ladder has run to its end
        self._close_notified = False  # the close callbacks have been handed out
        self._close_cause: BaseException | None = None
        self._closer: threading.Thread | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._live = _Live()
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
        self._listens: dict[Any, StatelessListen] = {}
        self._active_listens: set[StatelessListen] = set()  # not cancelled: restored on recovery

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
        return self._state

    @property
    def auto_reinitialize(self) -> bool:
        """True when ``recovery=`` is on (``auto_reinitialize=True`` is its older name)."""
        return self.recovery is not None

    def on_close(self, callback: CloseCallback) -> Callable[[], None]:
        """Call ``callback(cause)`` once when the connection ends; returns a remover.

        ``cause`` is None after :meth:`close`, else why the connection ended (for a stdio
        server that died, a :class:`~mcp_sync.errors.ConnectionClosed` with ``exit_status``
        and ``stderr_tail``). The callback runs after the client has shut down (its threads
        ended, the server stopped), on no lock: on the thread that called :meth:`close`, or on
        a short-lived ``mcp-sync-closer`` thread when the connection ended underneath. It may
        call the client, and build and connect a new one. Also the ``on_close=`` option.
        """
        self._close_callbacks.append(callback)

        def remove() -> None:
            if callback in self._close_callbacks:
                self._close_callbacks.remove(callback)

        return remove

    def connect(self: _C, transport: TransportSource, *, timeout: float | None = None) -> _C:
        """Start ``transport`` and agree on a protocol version. Returns the client.

        ``transport`` is a :class:`Transport`, or a function returning a new one: with
        ``recovery=``, the client calls it again to replace a connection that closed (a stdio
        server that exited). Given a transport object, recovery can only re-initialize on it.

        With ``protocol="auto"`` (the default) the client first probes with
        ``server/discover`` (2026-07-28, the stateless era); a server that does not answer it
        as a 2026-era server (within ``probe_timeout``, except over Streamable HTTP, where
        every server answers) gets the ``initialize`` handshake on the same connection.
        ``protocol="handshake"`` skips the probe; a version pins it.

        Raises :class:`UnsupportedProtocolVersion` (after closing) when no version is shared.
        """
        with self._state_lock:
            if self._state != "idle":
                hint = f"; {CLOSED_HINT}" if self._state == "closed" else ""
                raise InvalidStateError(f"cannot connect: the client is {self._state}{hint}")
            self._state = "connecting"
        _live_clients.add(self)
        if not isinstance(transport, Transport):
            self._transport_factory = transport
            transport = transport()
        self._transport = transport
        self._dispatcher = _dispatch.Dispatcher()
        session = self._session = self._new_session(transport)
        self._finalizer = weakref.finalize(self, _close_unreachable, repr(self), self._live)
        self._finalizer.atexit = False  # at exit, the process module stops the servers
        try:
            transport.start()
            self._apply(session, negotiate(session, self._offer(), self._wait(timeout)))
        except BaseException:
            self.close()
            raise
        with self._state_lock:
            if self._state == "connecting":
                self._state = "connected"
        return self

    def _new_session(self, transport: Transport) -> Session:
        """A session over ``transport`` with every listener and handler of this client."""
        assert self._dispatcher is not None
        session = Session(transport, self._dispatcher)
        session.before_close = _weak_callback(self._closed_underneath)
        removers = self._listener_removers
        removers.clear()
        for entry in self._listeners:
            removers[id(entry)] = session.add_listener(*entry)
        for error_listener in self._error_listeners:
            removers[id(error_listener)] = session.add_error_listener(error_listener)
        # The transport's threads reach the session: what it holds of the client is weak.
        session.add_listener(
            "notifications/resources/updated", _weak_callback(self._on_resource_updated)
        )
        session.add_listener(None, _weak_callback(self._route_subscription))
        if self._cache is not None:
            cache = self._cache
            session.add_listener(None, lambda n: cache.invalidate(n.method, n.params))
        session.inline_listener = _weak_callback(self._route_subscription_inline)
        self._install_handlers(session)
        self._live.session, self._live.transport = session, transport
        self._live.dispatcher = self._dispatcher
        return session

    def _wait(self, timeout: float | None) -> float:
        return self.request_timeout if timeout is None else timeout

    def _offer(self) -> Offer:
        return Offer(
            self._protocol,
            self._requested_version,
            self.client_info.to_wire(),
            self.capabilities(),
            self.probe_timeout,
        )

    def _apply(self, session: Session, state: ServerState) -> None:
        """Use what the negotiation settled."""
        self._server = state
        if state.era == "stateless":
            session.transport.set_protocol_version(state.protocol_version)
            session.transport.set_header_provider(_weak_callback(self._param_headers, {}))
            # Over HTTP a 2026-era request is cancelled by closing its stream, nothing more.
            session.cancel_on_wire = session.transport.kind != "http"

    def _param_headers(self, message: dict[str, Any]) -> Mapping[str, str]:
        """``Mcp-Param-*`` headers of a 2026-era ``tools/call`` over HTTP (from the schema
        of the tool as last listed)."""
        if message.get("method") != "tools/call":
            return {}
        params = message.get("params") or {}
        tool = self._tool_cache.get(str(params.get("name")))
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return {}
        return headers.param_headers(tool.input_schema, arguments)

    def close(self) -> None:
        """Close the connection: pending calls fail with ``ConnectionClosed``, the transport
        stops (a stdio server is shut down) and the client's threads end; then the ``on_close``
        callbacks run. Idempotent; safe from any thread, a handler included."""
        with self._state_lock:
            self._state = "closed"
        if self._reconnector is not None:
            self._reconnector.stop()
        self._shut_down_and_notify(None)

    def _closed_underneath(self, cause: BaseException | None) -> None:
        """The transport ended on its own (called on its thread, before pending calls fail):
        the client is closed at once; a closer thread shuts it down and tells the user.
        With ``recovery=`` a connected client is "disconnected" instead: the next call
        reconnects."""
        with self._state_lock:
            if self._state == "closed":
                return  # our own close()
            if self._reconnector is not None and self._state in ("connected", "disconnected"):
                self._state = "disconnected"
                return
            self._state = "closed"
            closer = threading.Thread(
                target=self._shut_down_and_notify,
                args=(cause,),
                name="mcp-sync-closer",
                daemon=True,
            )
            closer.start()  # before close() can see it and join it
            self._closer = closer

    def _shut_down_and_notify(self, cause: BaseException | None) -> None:
        closer = self._closer
        current = threading.current_thread()
        # After close() returns, no on_close callback is still running. is_alive() first:
        # join() raises for a thread whose start was not seen (seen under load in the CLI).
        if closer is not None and closer is not current and closer.is_alive():
            closer.join()
        dispatcher = self._dispatcher
        in_handler = dispatcher is not None and dispatcher.on_dispatcher_thread()
        # A handler's close() while another thread closes returns: that thread finishes.
        if not self._close_lock.acquire(blocking=not in_handler):
            return
        try:
            if not self._shut_down:
                self._shut_down_ladder(cause)
                self._shut_down = True
            callbacks = [] if self._close_notified else list(self._close_callbacks)
            self._close_notified = True
            cause = self._close_cause
        finally:
            self._close_lock.release()
        for callback in callbacks:
            try:
                callback(cause)
            except Exception:
                logger.exception("mcp_sync: on_close callback raised")

    def _shut_down_ladder(self, cause: BaseException | None) -> None:
        """Fail what is pending, stop the transport, end the threads (under the close lock)."""
        _live_clients.discard(self)
        finalizer = self._finalizer
        if finalizer is not None:
            finalizer.detach()
        session = self._session
        if session is not None:
            session.fail_all(cause)
            self._close_cause = session.close_cause
        _stop_connection(session, self._transport, self._dispatcher)

    def __enter__(self: _C) -> _C:
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
        """``"handshake"`` (handshake) or ``"stateless"`` (stateless, 2026-07-28+)."""
        return versions.era_of(self.protocol_version)

    def discover(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> DiscoverResult:
        """Ask the server again what it supports (``server/discover``, 2026 era only)."""
        self._require_era("stateless", "server/discover")
        result = self._call("server/discover", None, DiscoverResult, timeout=timeout, signal=signal)
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

    def _stateless(self) -> bool:
        server = self._server
        return server is not None and server.era == "stateless"

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

    def _stateless_capabilities(self, method: str | None) -> dict[str, Any]:
        """What one 2026-era request may need: the handlers' capabilities for requests that
        may come back ``input_required``, nothing for the rest."""
        if method not in stateless.MRTR_METHODS:
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
                "sampling/createMessage",
                _handlers.sampling_handler(weakref.ref(cast("Client", self)), user, tools),
            )
        if self._elicitation:
            session.set_handler(
                "elicitation/create",
                _handlers.elicitation_handler(
                    weakref.ref(cast("Client", self)),
                    self._elicitation.get("form"),
                    self._elicitation.get("url"),
                ),
            )

    def _remove_listener(self, registry: list[Any], entry: Any) -> None:
        """Forget a listener, and take it off the current session (whichever connection that
        is after a recovery)."""
        if entry in registry:
            registry.remove(entry)
        remove_live = self._listener_removers.pop(id(entry), None)
        if remove_live is not None:
            remove_live()

    def _before_connect(self, what: str) -> None:
        if self._state != "idle":
            raise InvalidStateError(
                f"register {what} before connect(): capabilities are declared in the handshake"
            )

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

    def _route_subscription_inline(self, notification: Notification) -> None:
        listener = self._listens.get(stateless.subscription_id(notification.params))
        if listener is not None:
            listener.deliver(notification)

    def _route_subscription(self, notification: Notification) -> None:
        listener = self._listens.get(stateless.subscription_id(notification.params))
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
        body = dict(params) if params is not None else None
        return self._request(method, body, timeout, signal, on_progress)

    def _request(
        self,
        method: str,
        body: dict[str, Any] | None,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
    ) -> Any:
        """:meth:`request` with a ``body`` the caller made for this call (it is not copied)."""
        wait = self.request_timeout if timeout is None else timeout
        session = self._connected_session(wait)
        progress = None if on_progress is None else _typed_progress(on_progress)
        generation = self._generation
        try:
            return self._attempt(session, method, body, wait, signal, progress)
        except McpError as exc:
            if self._reconnector is None:
                raise
            if not refused_unprocessed(exc):
                if dropped_in_flight(exc) and self._state != "closed":
                    # Not the session's "closed for good": with recovery= the next call heals.
                    raise ConnectionClosed(
                        f"the connection broke while {method} was out (not sent again: it may "
                        "have run); the next call reconnects",
                        cause=exc,
                        exit_status=getattr(exc, "exit_status", None),
                        stderr_tail=getattr(exc, "stderr_tail", None),
                    ) from exc
                raise
            deadline = time.monotonic() + wait
            logger.info("%s was refused unprocessed (%s); reconnecting", method, exc)
        # The server did not run it: send it again once the connection is back.
        session = self._recover(generation, deadline)
        return self._attempt(session, method, body, deadline - time.monotonic(), signal, progress)

    def _attempt(
        self,
        session: Session,
        method: str,
        body: dict[str, Any] | None,
        wait: float,
        signal: AbortSignal | None,
        progress: Callable[[dict[str, Any]], None] | None,
    ) -> Any:
        server = self._server
        if server is not None and server.era == "stateless":  # self._stateless(), inlined
            return self._stateless_request(session, method, body, wait, signal, progress)
        return self._send(session, method, body, wait, signal, progress)

    def _send(
        self,
        session: Session,
        method: str,
        body: dict[str, Any] | None,
        wait: float,
        signal: AbortSignal | None,
        progress: Callable[[dict[str, Any]], None] | None,
    ) -> Any:
        hook = _hooks.around_request  # None unless instrumented (tracing)
        if hook is not None:
            # a partial, not a lambda: a closure here would cost every request its cells
            send = functools.partial(
                session.request,
                method,
                timeout=wait,
                max_total_timeout=self.max_total_timeout,
                signal=signal,
                on_progress=progress,
            )
            return hook(self, self._transport, method, body, send)
        return session.request(
            method,
            body,
            timeout=wait,
            max_total_timeout=self.max_total_timeout,
            signal=signal,
            on_progress=progress,
        )

    def _stateless_request(
        self,
        session: Session,
        method: str,
        body: dict[str, Any] | None,
        wait: float,
        signal: AbortSignal | None,
        progress: Callable[[dict[str, Any]], None] | None,
    ) -> Any:
        """A 2026 request: per-request ``_meta``, the cache, ``input_required`` rounds."""
        cache = self._cache
        if cache is not None:
            cached = cache.get(method, body)
            if cached is not None:
                return cached
        key_params = body
        body = stateless.with_meta(body, self._request_meta(method))
        for _ in range(self.max_input_rounds + 1):
            raw = self._send(session, method, body, wait, signal, progress)
            self._note_server_info(raw)
            kind = stateless.result_type(raw)
            if kind == "task" and not stateless.declares_extension(body, TASKS_EXTENSION):
                raise ProtocolError(f"{method}: the server answered with a task unasked")
            if kind != "input_required":
                if cache is not None and kind == "complete":
                    cache.put(method, key_params, raw)
                return raw
            responses = self._fulfil_input_requests(session, raw.get("inputRequests"), signal)
            body = stateless.retry_params(body, responses, raw.get("requestState"))
        raise ProtocolError(
            f"{method}: the server still asks for input after {self.max_input_rounds} rounds"
        )

    # -- recovery (the ``recovery=`` option; policy in mcp_sync/_recovery.py) ------------

    def _recover(self, generation: int, deadline: float) -> Session:
        """Replace the connection lost since connection number ``generation`` (or wait for
        the thread already doing it); return the live session."""
        assert self._reconnector is not None

        def healthy() -> bool:
            session = self._session
            return self._generation != generation and session is not None and not session.closed

        self._reconnector.run(healthy, self._reopen, deadline, "lost the connection to the server")
        session = self._session
        assert session is not None
        return session

    def _reopen(self, timeout: float) -> None:
        """One attempt: a new transport when the old one closed (a stdio server exited),
        else the handshake again on the same one (an HTTP server that forgot the session)."""
        session, transport = self._session, self._transport
        assert session is not None and transport is not None
        if session.closed or transport.closed:
            factory = self._transport_factory
            if factory is None:
                raise InvalidStateError(
                    "the connection closed and recovery cannot replace it: connect() was given "
                    "a transport object; give it a function that returns a new transport"
                )
            session.detach()
            transport.close()  # already closed: this reaps the process and joins its threads
            transport = factory()
            session = self._new_session(transport)
            try:
                transport.start()
                state = negotiate(session, self._offer(), timeout)
            except BaseException:
                session.fail_all(None)
                transport.close()
                session.detach()
                raise
        else:
            state = negotiate(session, self._offer(), timeout)
        with self._state_lock:
            if self._state == "closed":  # close() ran meanwhile and closed the old transport
                transport.close()
                raise ConnectionClosed("the client was closed while reconnecting")
            self._session, self._transport = session, transport
            self._state = "connected"
        self._apply(session, state)
        self._generation += 1
        logger.info("reconnected to the server (connection %d)", self._generation + 1)
        self._restore(session)

    def _restore(self, session: Session) -> None:
        """What the old connection had that the server forgot: resource subscriptions, the
        log level (handshake era), live ``subscriptions/listen`` requests (2026 era)."""
        if self._cache is not None:
            self._cache.clear()
        if self._stateless():
            for listen in list(self._active_listens):
                listen.restart()  # before the call that reconnected goes out
            return
        with self._subscriptions_lock:
            uris = list(self._subscriptions)
        restore = [("resources/subscribe", {"uri": uri}) for uri in uris]
        if self._log_level is not None:
            restore.append(("logging/setLevel", {"level": self._log_level}))
        for method, params in restore:
            try:
                self._send(session, method, params, self.request_timeout, None, None)
            except McpError as exc:
                logger.warning("after reconnecting, %s failed: %s", method, exc)

    def _request_meta(self, method: str) -> dict[str, Any]:
        return stateless.request_meta(
            self.protocol_version,
            self._stateless_capabilities(method),
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
                capability = stateless.INPUT_METHODS.get(str(method), str(method))
                raise MissingClientCapability(
                    stateless.MISSING_CAPABILITY,
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

    def notify(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Send a notification. Raises :class:`~mcp_sync.errors.WriteTimeout` when a server
        that stopped reading has not taken it within ``timeout`` (default ``request_timeout``)."""
        body = dict(params) if params is not None else None
        self._connected_session().notify(method, body, self._wait(timeout))

    def _connected_session(self, wait: float | None = None) -> Session:
        """The live session; with ``recovery=``, a lost one is replaced first (within
        ``wait`` seconds, default ``request_timeout``)."""
        if self._forked:
            raise InvalidStateError(
                "this client was created before fork(): its threads and pipes did not survive; "
                "create the client in the child process, after the fork"
            )
        session = self._session
        if self._state != "connected" or session is None or session.closed:
            lost = session is not None and self._state in ("connected", "disconnected")
            if lost and self._reconnector is not None:
                deadline = time.monotonic() + (self.request_timeout if wait is None else wait)
                return self._recover(self._generation, deadline)
            if self._state in ("closed", "connected") and session is not None and session.closed:
                raise session.closed_error()
            if self._state == "closed":
                raise InvalidStateError(f"the client is closed: {CLOSED_HINT}")
            raise InvalidStateError(f"the client is {self._state}: call connect() first")
        return session

    def _call(
        self,
        method: str,
        params: dict[str, Any] | None,
        result_type: type[_Model],
        *,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None = None,
    ) -> _Model:
        """A typed request; ``params`` is made by the caller for this call (not copied)."""
        raw = self._request(method, params, timeout, signal, on_progress)
        return parse_result(method, result_type, raw)

    def _require(self, method: str, capability: str) -> None:
        """Raise CapabilityError unless the server advertised ``capability`` (dotted path)."""
        if self.strict_capabilities and not self._initialized().has(capability):
            raise CapabilityError(method, capability)

    def _all_pages(
        self,
        method: str,
        result_type: type[_Model],
        key: str,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None = None,
    ) -> Iterator[Any]:
        def fetch(cursor: str | None) -> _Model:
            return self._page(method, result_type, cursor, timeout, signal, on_progress)

        for page in follow_cursors(method, fetch, lambda p: getattr(p, "next_cursor", None)):
            yield from getattr(page, key)

    def _page(
        self,
        method: str,
        result_type: type[_Model],
        cursor: str | None,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None = None,
    ) -> _Model:
        """One page of a paginated list."""
        params = {"cursor": cursor} if cursor else None
        return self._call(
            method, params, result_type, timeout=timeout, signal=signal, on_progress=on_progress
        )

    @staticmethod
    def _headers_valid(tool: Tool) -> bool:
        problems = headers.tool_header_problems(tool.input_schema)
        if problems:
            logger.warning(
                "dropping tool %r: invalid x-mcp-header annotations: %s",
                tool.name,
                "; ".join(problems),
            )
        return not problems
