"""The connection behind a :class:`~mcp_sync.Client`: one object that owns the session over a
transport and everything about its life.

- **Lifecycle**: :meth:`Connection.connect` (start the transport, negotiate an era),
  :meth:`Connection.close` and the close ladder, the state, the ``on_close`` callbacks, the
  finaliser of a connection its client dropped unclosed.
- **What the server said** (:attr:`Connection.server`, a :class:`ServerState`) and the
  capability checks made against it.
- **Handlers and listeners** the client registered, installed on every session it makes.
- **Recovery** (``recovery=``): a lost connection replaced on the next call.
- **The request path**, one concern per method::

      request -> _send_handling_recovery -> _send_in_era -> send_once
                 (lost connection:            (stateless era:      (the hook, then
                  reconnect, re-send if       stateless.py)        the session)
                  the server did not run it)

  ``request`` makes the call one :class:`~mcp_sync._session.outgoing.Outgoing` (its method's
  row, params, deadline, signal, progress callback, extra headers), and every step after it
  takes that value whole.

The client (:mod:`mcp_sync.client`) holds one and builds the public API on this interface;
nothing here knows the client. The stateless-era logic lives in
:mod:`mcp_sync._connection.stateless`.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Literal, NoReturn

from .._rules.deadline import Deadline, call_deadline
from .._rules.numbers import call_timeout
from .._session import dispatch as _dispatch
from .._session.outgoing import Outgoing
from .._session.session import CLOSED_BY_CLOSE, CLOSED_HINT, RequestHandler, Session
from ..abort import AbortSignal
from ..errors import (
    CapabilityError,
    ConnectionClosed,
    InvalidStateError,
    McpError,
    NotSupportedInEra,
    RpcError,
)
from ..protocol import versions
from ..protocol.jsonrpc import Notification
from ..protocol.types import Implementation, ProgressNotificationParams
from ..redaction import hold, secret_values
from ..transports.base import MessageOptions, Transport
from . import hooks as _hooks
from .lifecycle import (
    Live,
    close_unreachable,
    forked_error,
    release_after_fork,
    start_closer,
    stop_connection,
    unwatch_fork,
    watch_fork,
    weak_callback,
)
from .negotiation import Offer, ServerState, negotiate
from .options import CloseCallback, ConnectionOptions
from .recovery import (
    Reconnector,
    Track,
    broke_while_out,
    dropped_in_flight,
    refused_unprocessed,
    restore,
)
from .stateless import StatelessEra

__all__ = [
    "ClientState",
    "CloseCallback",
    "Connection",
    "ProgressHandler",
    "RestoreSend",
    "TransportSource",
]

logger = logging.getLogger("mcp_sync")

ClientState = Literal["idle", "connecting", "connected", "disconnected", "closed"]
#: What ``connect()`` takes: a transport, or a function making one (needed to recover).
TransportSource = Transport | Callable[[], Transport]
#: A user's progress callback.
ProgressHandler = Callable[[ProgressNotificationParams], None]
RawProgress = Callable[[dict[str, Any]], None]
#: ``send(method, params)``: a request on the new session, for what a reconnection restores.
RestoreSend = Callable[[str, "dict[str, Any] | None"], Any]


def _typed_progress(user: ProgressHandler) -> RawProgress:
    """Adapt a user's progress handler to the raw params the session hands over."""

    def progress(raw: dict[str, Any]) -> None:
        user(ProgressNotificationParams.from_wire(raw))

    return progress


class Connection:
    """A client's connection to one server, through every reconnection; see the module
    docstring. Thread-safe."""

    def __init__(self, options: ConnectionOptions) -> None:
        #: The client's options, one frozen value (a client's setter swaps in a new one).
        self.options = options
        #: What the client declares (from its handlers); set by :meth:`connect`.
        self.client_capabilities: dict[str, Any] = {}
        #: The log level asked for: restored after a reconnection, sent in stateless ``_meta``.
        self.log_level: str | None = None
        #: What the server told us (None until the negotiation settles).
        self.server: ServerState | None = None
        self.forked = False
        # A proxy, not a reference: no cycle, so a client dropped unclosed is collected (and
        # its finaliser stops the server) at once, not at the next garbage collection.
        self.stateless = StatelessEra(
            weakref.proxy(self), max_input_rounds=options.max_input_rounds, cache=options.cache
        )
        recovery = options.recovery
        self._reconnector = Reconnector(recovery) if recovery is not None else None
        self._transport_factory: Callable[[], Transport] | None = None
        self._generation = 0  # connections made so far (recovery counts them)
        self._track = Track()  # how the current connection fares, for recovery's backoff
        self._died = False  # the server went away (not our close()): for the error's advice
        self._handlers: dict[str, RequestHandler] = {}
        self._listeners: list[tuple[str | None, Callable[[Notification], None]]] = []
        self._error_listeners: list[Callable[[BaseException], None]] = []
        self._listener_removers: dict[int, Callable[[], None]] = {}
        self._restorers: list[Callable[[RestoreSend], None]] = []
        self._state: ClientState = "idle"
        self._state_lock = threading.Lock()
        self._close_callbacks = [] if options.on_close is None else [options.on_close]
        self._close_lock = threading.Lock()  # serializes the shutdown ladder
        self._shut_down = False  # the ladder has run to its end
        self._close_notified = False  # the close callbacks have been handed out
        self._close_cause: BaseException | None = None
        self._closer: threading.Thread | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._live = Live()
        self._session: Session | None = None
        self._transport: Transport | None = None
        self._dispatcher: _dispatch.Dispatcher | None = None

    @property
    def request_timeout(self) -> float:
        return self.options.request_timeout

    @property
    def max_total_timeout(self) -> float | None:
        return self.options.max_total_timeout

    @property
    def client_info(self) -> Implementation:
        return self.options.client_info

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        return self._state

    def on_close(self, callback: CloseCallback) -> Callable[[], None]:
        """Call ``callback(cause)`` once when the connection ends; returns a remover."""
        self._close_callbacks.append(callback)

        def remove() -> None:
            if callback in self._close_callbacks:
                self._close_callbacks.remove(callback)

        return remove

    def connect(
        self, transport: TransportSource, capabilities: dict[str, Any], timeout: float
    ) -> None:
        """Start ``transport`` (or the one ``transport()`` makes) and negotiate an era,
        declaring ``capabilities``, all within ``timeout``; on failure the connection is
        closed."""
        deadline = call_deadline(timeout, what="connect")
        with self._state_lock:
            if self._state != "idle":
                hint = f"; {CLOSED_BY_CLOSE}" if self._state == "closed" else ""
                raise InvalidStateError(f"cannot connect: the client is {self._state}{hint}")
            self._state = "connecting"
        self.client_capabilities = capabilities
        self._live.pid = os.getpid()
        watch_fork(self)
        if not isinstance(transport, Transport):
            self._transport_factory = transport
            transport = transport()
        self._transport = transport
        self._dispatcher = _dispatch.Dispatcher()
        session = self._session = self._new_session(transport)
        self._finalizer = weakref.finalize(self, close_unreachable, self._live)
        self._finalizer.atexit = False  # at exit, the process module stops the servers
        try:
            transport.start()
            self._apply(session, negotiate(session, self._offer(), deadline))
        except BaseException:
            self.close()
            raise
        with self._state_lock:
            if self._state == "connecting":
                self._state = "connected"

    def _new_session(self, transport: Transport) -> Session:
        """A session over ``transport`` with every handler and listener registered here."""
        assert self._dispatcher is not None
        session = Session(transport, self._dispatcher)
        # The transport's threads reach the session: what it holds of this object is weak.
        session.before_close = weak_callback(self._closed_underneath)
        session.closed_hint = weak_callback(self._closed_hint)
        session.inline_listener = weak_callback(self.stateless.route_inline)
        session.add_listener(None, weak_callback(self.stateless.on_notification))
        removers = self._listener_removers
        removers.clear()
        for entry in self._listeners:
            removers[id(entry)] = session.add_listener(*entry)
        for error_listener in self._error_listeners:
            removers[id(error_listener)] = session.add_error_listener(error_listener)
        for method, handler in self._handlers.items():
            session.set_handler(method, handler)
        self._live.session, self._live.transport = session, transport
        self._live.dispatcher = self._dispatcher
        return session

    def _offer(self) -> Offer:
        options = self.options
        return Offer(
            options.protocol,
            options.handshake_version,
            options.client_info.to_wire(),
            self.client_capabilities,
            options.probe_timeout,
        )

    def _apply(self, session: Session, state: ServerState) -> None:
        """Use what the negotiation settled."""
        self.server = state
        stateless_era = state.era == "stateless"
        # Every message says the version; a stateless-era one stands alone at it.
        session.message_options = MessageOptions(
            version=state.protocol_version, standalone=stateless_era
        )
        # Some transports cancel a stateless-era request by closing its stream, nothing more.
        session.cancel_on_wire = not (stateless_era and session.transport.cancels_by_closing_stream)

    def close(self) -> None:
        """Fail what is pending, stop the transport, end the threads, then run the
        ``on_close`` callbacks. Idempotent; safe from any thread, a handler included. In a
        forked child it only releases the child's copies (see
        :mod:`mcp_sync._connection.lifecycle`)."""
        if self._live.in_forked_child():  # no lock, no callback: they are the parent's
            self.forked, self._state = True, "closed"
            release_after_fork(self._live, self._finalizer)
            return
        with self._state_lock:
            self._state = "closed"
        if self._reconnector is not None:
            self._reconnector.stop()
        self._shut_down_and_notify(None)

    def _closed_underneath(self, cause: BaseException | None) -> None:
        """The transport ended on its own (called on its thread, before pending calls fail):
        the connection is closed at once; a closer thread shuts it down and tells the user.
        With ``recovery=`` a connected one is "disconnected" instead: the next call
        reconnects."""
        with self._state_lock:
            if self._state == "closed":
                return  # our own close()
            self._died = True
            if self._reconnector is not None and self._state in ("connected", "disconnected"):
                self._state = "disconnected"
                self._track.lost(cause)
                return
            self._state = "closed"
            self._closer = start_closer(self._shut_down_and_notify, cause)  # before close() joins

    def _closed_hint(self, _cause: BaseException | None) -> str:
        """The advice for an error of the session's end: only what is true (see CLOSED_HINT)."""
        if self.server is None or self._state != "closed":
            return ""  # connect() failed: its error says why; recovering: the round speaks
        return CLOSED_HINT if self._died and self._reconnector is None else CLOSED_BY_CLOSE

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
        unwatch_fork(self)
        finalizer = self._finalizer
        if finalizer is not None:
            finalizer.detach()
        session = self._session
        if session is not None:
            session.fail_all(cause)
            self._close_cause = session.close_cause
        stop_connection(session, self._transport, self._dispatcher)

    # -- what the server said -----------------------------------------------------------

    def initialized(self) -> ServerState:
        """The server's state; raises :class:`InvalidStateError` before it is known."""
        if self.server is None:
            raise InvalidStateError(f"the client is {self._state}: call connect() first")
        return self.server

    @property
    def is_stateless(self) -> bool:
        """True once a stateless-era (2026-07-28+) version was agreed."""
        server = self.server
        return server is not None and server.era == "stateless"

    def require(self, method: str, capability: str) -> None:
        """Raise CapabilityError unless the server advertised ``capability`` (dotted path)."""
        if self.options.strict_capabilities and not self.initialized().has(capability):
            raise CapabilityError(method, capability)

    def require_extension(self, method: str, extension: str) -> None:
        """Raise CapabilityError unless the server declared ``extension``."""
        extensions = self.initialized().wire_capabilities.get("extensions") or {}
        if self.options.strict_capabilities and extension not in extensions:
            raise CapabilityError(method, f"extensions.{extension}")

    def require_era(self, era: versions.Era, what: str) -> None:
        """Raise NotSupportedInEra unless the agreed version is of ``era``."""
        version = self.initialized().protocol_version
        actual = versions.era_of(version)
        if actual != era:
            raise NotSupportedInEra(f"{what} does not exist in protocol {version} ({actual} era)")

    # -- handlers and listeners (kept across reconnections) -----------------------------

    def set_handler(self, method: str, handler: RequestHandler) -> None:
        """Answer server requests of ``method`` with ``handler``, on this session and the
        next ones."""
        self._handlers[method] = handler
        session = self._session
        if session is not None:
            session.set_handler(method, handler)

    def on_notification(
        self, method: str | None, callback: Callable[[Notification], None]
    ) -> Callable[[], None]:
        """Call ``callback(notification)`` for notifications of ``method`` (None: all), on
        the dispatcher thread; returns a remover."""
        entry = (method, callback)
        self._listeners.append(entry)
        if self._session is not None:
            self._listener_removers[id(entry)] = self._session.add_listener(method, callback)
        return lambda: self._remove_listener(self._listeners, entry)

    def on_error(self, callback: Callable[[BaseException], None]) -> Callable[[], None]:
        """Call ``callback(error)`` for problems that do not end the connection."""
        self._error_listeners.append(callback)
        if self._session is not None:
            self._listener_removers[id(callback)] = self._session.add_error_listener(callback)
        return lambda: self._remove_listener(self._error_listeners, callback)

    def on_reconnect(self, restore: Callable[[RestoreSend], None]) -> None:
        """After a reconnection in the handshake era, call ``restore(send)`` to tell the new
        session what the old one had (resource subscriptions)."""
        self._restorers.append(restore)

    def _remove_listener(self, registry: list[Any], entry: Any) -> None:
        """Forget a listener, and take it off the current session (whichever connection that
        is after a recovery)."""
        if entry in registry:
            registry.remove(entry)
        remove_live = self._listener_removers.pop(id(entry), None)
        if remove_live is not None:
            remove_live()

    # -- requests -----------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> Any:
        """Send a request and return its raw result (``params`` is copied, not changed). A
        recovery, the request and its input rounds all wait by one deadline, ``timeout`` from
        now (or the one of the call this thread is making: see
        :mod:`mcp_sync._rules.deadline`). An argument under a secret-looking name
        (``password``) is a secret from here on.

        The call becomes one :class:`~mcp_sync._session.outgoing.Outgoing` here, with its
        method's row from the table, and goes down whole: recovery -> era -> session."""
        body = dict(params) if params is not None else None
        secrets = secret_values(body["arguments"]) if body and body.get("arguments") else None
        if secrets:  # (mcp_sync.redaction)
            hold(self, *secrets)
        progress = None if on_progress is None else _typed_progress(on_progress)
        options = self.options
        deadline = call_deadline(
            timeout, options.max_total_timeout, what=method, default=options.request_timeout
        )
        outgoing = Outgoing(method, body, deadline, signal, progress)
        return self._send_handling_recovery(outgoing)

    def _send_handling_recovery(self, outgoing: Outgoing) -> Any:
        """With ``recovery=``, a request the server certainly did not run is sent again once
        the connection is back; one that was out when it broke fails."""
        session = self._session
        # connected_session()'s test, inlined for the live session (its frame: 0.5k instructions)
        if self._state != "connected" or session is None or session.closed or self.forked:
            session = self.connected_session(outgoing.deadline, outgoing.signal)
        generation = self._generation
        try:
            result = self._send_in_era(session, outgoing)
            self._track.answered_in = generation
            return result
        except McpError as exc:
            if self._reconnector is None:
                raise
            if isinstance(exc, RpcError):
                self._track.answered_in = generation
            if not refused_unprocessed(exc):
                self._raise_as_sent_once(outgoing.method, exc)
            logger.info("%s was refused unprocessed (%s); reconnecting", outgoing.method, exc)
            if generation == self._generation:
                self._track.lost(exc)  # (an HTTP 404: the session was lost just now)
        session = self._recover(generation, outgoing.deadline, outgoing.signal)
        try:  # sent once more, at most: it fails as the first send would have
            return self._send_in_era(session, outgoing)
        except McpError as exc:
            if refused_unprocessed(exc):
                raise
            self._raise_as_sent_once(outgoing.method, exc)

    def _raise_as_sent_once(self, method: str, error: McpError) -> NoReturn:
        """Raise what a call that went out and was not refused unprocessed fails with: a
        broken exchange is "broke while it was out" (it may have run; the next call
        reconnects); anything else (an answer, an HTTP error) is itself."""
        if dropped_in_flight(error) and self._state != "closed":
            raise broke_while_out(method, error) from error
        raise error

    def _send_in_era(self, session: Session, outgoing: Outgoing) -> Any:
        server = self.server  # is_stateless, inlined: the property costs 0.7k instructions
        if server is not None and server.era == "stateless":
            return self.stateless.request(session, outgoing)
        if _hooks.around_request is None:  # send_once's own path, without its frame (0.5k)
            return session.request(outgoing)
        return self.send_once(session, outgoing)

    def send_once(self, session: Session, outgoing: Outgoing) -> Any:
        """One request on ``session``, through the request hook when one is installed."""
        hook = _hooks.around_request  # None unless instrumented (tracing)
        if hook is not None:
            return hook(self.server, self._transport, outgoing, session.request)
        return session.request(outgoing)

    def notify(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float | None = None
    ) -> None:
        """Send a notification (``timeout``: for the write, default ``request_timeout``)."""
        body = dict(params) if params is not None else None
        wait = self.request_timeout if timeout is None else call_timeout(timeout, method)
        self.connected_session().notify(method, body, wait)

    def connected_session(
        self, deadline: Deadline | None = None, signal: AbortSignal | None = None
    ) -> Session:
        """The live session; with ``recovery=``, a lost one is replaced first (by the call's
        ``deadline``, default ``request_timeout`` from now, unless ``signal`` fires)."""
        if self.forked:
            raise forked_error()
        session = self._session
        if self._state != "connected" or session is None or session.closed:
            lost = session is not None and self._state in ("connected", "disconnected")
            if lost and self._reconnector is not None:
                if deadline is None:
                    deadline = call_deadline(self.request_timeout)
                return self._recover(self._generation, deadline, signal)
            ended = session is not None and (session.closed or self._died)  # (died: even now)
            if self._state in ("closed", "connected") and ended and session is not None:
                raise session.closed_error()
            if self._state == "closed":
                raise InvalidStateError(
                    f"the client is closed: {self._closed_hint(None) or CLOSED_BY_CLOSE}"
                )
            raise InvalidStateError(f"the client is {self._state}: call connect() first")
        return session

    def current_session(self) -> Session | None:
        """The session of the current connection, live or not (None before connect)."""
        return self._session

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the dispatcher thread (where handlers and callbacks run)."""
        if self._dispatcher is not None:
            self._dispatcher.submit(job)

    # -- recovery (the ``recovery=`` option; policy in _connection/recovery.py) ----------------

    def _recover(
        self, generation: int, deadline: Deadline, signal: AbortSignal | None = None
    ) -> Session:
        """Replace the connection lost since connection number ``generation`` (or wait for
        the thread already doing it); return the live session."""
        assert self._reconnector is not None

        def healthy() -> bool:
            session = self._session
            return self._generation != generation and session is not None and not session.closed

        # (the loss a round counts is that of the current connection, the one it replaces)
        loss = lambda: self._track.loss(self._generation)  # noqa: E731
        self._reconnector.run(healthy, self._reopen, deadline, loss, signal)
        session = self._session
        assert session is not None
        return session

    def _reopen(self, deadline: Deadline, signal: AbortSignal) -> None:
        """One attempt, by the call's ``deadline``: a new transport when the old one closed
        (a stdio server exited), else the handshake again on the same one (an HTTP server
        that forgot the session). ``signal`` fires for the call's abort and for ``close()``."""
        assert self._reconnector is not None
        session, transport = self._session, self._transport
        assert session is not None and transport is not None

        def handshake(session: Session, transport: Transport) -> None:
            self._adopt(session, transport, negotiate(session, self._offer(), deadline, signal))

        if session.closed or transport.closed:
            factory, make = self._transport_factory, self._new_session
            self._reconnector.replace(session, transport, factory, make, handshake)
        else:
            handshake(session, transport)
        self._restore(self._session or session, deadline)

    def _adopt(self, session: Session, transport: Transport, state: ServerState) -> None:
        """Make the connection a recovery opened the current one."""
        with self._state_lock:
            if self._state == "closed":  # close() ran meanwhile and closed the old transport
                transport.close()
                raise ConnectionClosed("the client was closed while reconnecting")
            self._session, self._transport = session, transport
            self._state = "connected"
            self._track = Track()
        self._apply(session, state)
        self._generation += 1
        logger.info("reconnected to the server (connection %d)", self._generation + 1)

    def _restore(self, session: Session, deadline: Deadline) -> None:
        """What the old connection had that the server forgot, by the call's ``deadline``:
        live ``subscriptions/listen`` requests (stateless era), resource subscriptions and the
        log level (handshake era)."""
        stateless_era = self.is_stateless
        self.stateless.reconnected(stateless_era, deadline)
        if stateless_era:
            return

        def send(method: str, params: dict[str, Any] | None) -> Any:
            return self.send_once(session, Outgoing(method, params, deadline))

        restore(send, self._restorers, self.log_level)
