"""The transport contract: the strict point of cut-off between the session core and I/O.

A transport moves whole JSON-RPC messages and knows nothing of their meaning beyond what
framing needs. The session core (:mod:`mcp_sync._session`) owns ids, correlation, timeouts,
cancellation and initialization.

Contract, for someone writing a transport:

``start()``
    Open the connection (spawn the process, open the socket) and start the reader thread,
    named ``mcp-sync-<kind>-reader`` and daemonic. Raise a :class:`~mcp_sync.errors.McpError`
    naming what failed (a missing command, a refused connection). Called once.

``send(message, signal=None, *, options=None)``
    Write one message (a JSON-serializable dict). Serialize concurrent writers. Do not start
    writing if ``signal`` is already aborted: the caller has given up. For a request, the
    session aborts ``signal`` once the request settles (answered, timed out, aborted), so a
    transport that keeps a per-request stream open (HTTP) closes it then. Return once the
    message is handed off; a transport whose peer may take long to answer does that waiting on
    its own threads. Messages reach the peer in ``send()`` order: a request handed off later
    does not overtake a notification handed off earlier. Raise
    :class:`~mcp_sync.errors.ConnectionClosed` after close, or a
    :class:`~mcp_sync.errors.TransportError` when this one message cannot be sent.
    ``options`` (a :class:`MessageOptions`) says what this message needs beyond its bytes;
    a transport uses what applies to it and ignores the rest (stdio, pipes and the in-memory
    pair ignore all of it). ``None`` means "nothing special": a message of the session the
    handshake opened.

``send_before(message, deadline, signal=None, *, options=None)``
    :meth:`send`, giving up at ``deadline`` (a :func:`time.monotonic` time; ``math.inf``: no
    limit) when the peer does not take the message: raise
    :class:`~mcp_sync.errors.WriteTimeout`. If part of the message was written the stream
    is unrecoverable: set ``partial``, and close (``on_close`` with the reason). The session
    sends requests this way, with the request's deadline. The default calls :meth:`send`,
    right for transports whose ``send`` only hands the message off. A transport may also read
    the answer of a request right here, on the caller's thread, within ``deadline`` (the
    caller would wait for it anyway; Streamable HTTP does so for a plain JSON answer): it
    delivers the answer as usual, and gives up when ``signal`` aborts or it is closed.

``close()``
    Idempotent, callable from any thread (a listener included). Messages already handed off
    go out first, within a short bound (a transport that hands off to its own threads waits
    for them that long). Release every reader, stop the peer (a child process is gone when it
    returns), join the threads it started, and fire ``on_close`` once, with ``None`` as the
    cause.

``release_after_fork()``
    Called instead of ``close()`` in a child process made by ``fork()``, on the child's copy
    of a started transport: the peer, the session and the threads belong to the parent. Close
    this process's copies of the descriptors the transport opened, and nothing more: send
    nothing (no goodbye, no ``DELETE``), signal no process, shut no socket down (that would
    end the parent's connection too), join no thread and take no lock (a thread of the parent
    may have held it at the fork). The default does nothing: the copies stay open until the
    child exits.

``set_protocol_version(version)``
    Tells the transport the version the handshake negotiated (HTTP sends it as a header on
    the session's later messages).

Per-message options (:class:`MessageOptions`), all of them optional:

``version``
    This message stands alone at this protocol version (the stateless era, 2026-07-28 on):
    it carries its version itself and belongs to no session. HTTP sends the version headers
    of :func:`mcp_sync.protocol.headers.standard_headers` and no ``Mcp-Session-Id``, and does
    not resume its stream. ``None``: the message belongs to the session the handshake opened.
``headers``
    Extra headers for this message (HTTP: the 2026-07-28 ``Mcp-Param-*`` headers of a
    ``tools/call``). They override the transport's own ``headers=`` but never the headers the
    transport's protocol sets.
``opens_session``
    The handshake completes with this message (``notifications/initialized``): HTTP opens its
    server-push GET stream with it.
``begins_session``
    This request starts a (new) session (``initialize``): HTTP sends it without
    ``Mcp-Session-Id`` and holds the session's other requests until it is answered.
``safe_to_resend``
    The request only reads (``tools/list``): sending it twice changes nothing, so after a
    reset connection HTTP may send it again even if it may have arrived.
``interactive_auth``
    A rejected token (HTTP 401) on this message may start an interactive sign-in. False for
    the messages nobody waits for (notifications, answers to the server): HTTP tells its auth
    provider so (``UnauthorizedContext.interactive``), which may refresh but opens no browser.

Capabilities the session core reads (class attributes):

``cancels_by_closing_stream``
    True when a stateless-era request is cancelled by closing its stream (aborting its
    ``signal``), so the session sends no ``notifications/cancelled`` for it (Streamable HTTP).
``answers_every_request``
    True when every server answers every request, however slowly (Streamable HTTP: a POST
    always gets a response), so version negotiation waits for the ``server/discover`` probe's
    answer for the whole connect timeout instead of a short probe window (stdio, where an
    old server may ignore the probe).

Incoming traffic goes to listeners, called on the transport's threads; they must be quick:

- ``on_message(callback)``: each decoded JSON value (an object, or a batch array), in order.
- ``on_error(callback)``: problems that do not end the connection (an unparsable line, an HTTP
  error for one request). An error with ``request_id`` set fails just that request.
- ``on_close(callback)``: once, when the connection ends, with the cause (None after a normal
  ``close()``; a :class:`~mcp_sync.errors.ConnectionClosed` carries the details).

Each ``on_*`` returns a function that removes the listener.

Example, a transport over a socket-like object ``conn`` with ``readline``/``write``::

    class SocketLineTransport(Transport):
        kind = "line"

        def start(self):
            threading.Thread(target=self._read, name="mcp-sync-line-reader", daemon=True).start()

        def _read(self):
            for line in conn:
                self._deliver(json.loads(line))
            self._fire_close(None)

        def send(self, message, signal=None, *, options=None):
            if signal is None or not signal.aborted:
                conn.write(jsonrpc.encode(message) + b"\\n")

        def close(self):
            conn.close()
            self._fire_close(None)
"""

from __future__ import annotations

import inspect
import logging
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, ClassVar

from ..abort import AbortSignal

__all__ = ["MessageOptions", "Transport"]

logger = logging.getLogger("mcp_sync.transport")

MessageListener = Callable[[Any], None]
ErrorListener = Callable[[BaseException], None]
CloseListener = Callable[[BaseException | None], None]


@dataclass(frozen=True)
class MessageOptions:
    """What a transport must do differently for one message (see the module docstring).

    ``version``: the message stands alone at this (stateless-era) protocol version; ``None``:
    it belongs to the session the handshake opened. ``headers``: extra headers for it (HTTP).
    ``opens_session``: the handshake completes with it. ``streams_progress``: a request that
    asked for progress notifications, so its answer may take long to come (HTTP reads it on a
    worker rather than on the calling thread). ``interactive_auth``: a 401 on it may start an
    interactive sign-in (False for notifications and answers). ``begins_session``: the
    request that starts a (new) session. ``safe_to_resend``: it only reads, so it may be sent
    twice. The session fills the last two from the method's row in
    :mod:`mcp_sync.protocol.methods`, so that no transport reads a method name; a transport
    that ignores them loses nothing but the resend.
    """

    version: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    opens_session: bool = False
    streams_progress: bool = False
    interactive_auth: bool = True
    begins_session: bool = False
    safe_to_resend: bool = False


class Transport(ABC):
    """Base class of every transport. Subclasses implement ``start``, ``send`` and ``close``."""

    #: Short name used in thread names and messages.
    kind: ClassVar[str] = "transport"
    #: A stateless-era request is cancelled by closing its stream (aborting its ``signal``),
    #: not by a ``notifications/cancelled`` message.
    cancels_by_closing_stream: ClassVar[bool] = False
    #: Every server answers every request, so the era probe waits for its answer instead
    #: of giving up after a short window.
    answers_every_request: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("send", "send_before"):
            method = cls.__dict__.get(name)
            if callable(method) and not _takes_options(method):
                warnings.warn(
                    f"{cls.__qualname__}.{name}() takes no options= argument; it is called "
                    "without one until 0.2.0 (see mcp_sync.transports.base)",
                    DeprecationWarning,
                    stacklevel=2,
                )
                setattr(cls, name, _dropping_options(method))

    def __init__(self) -> None:
        self._message_listeners: tuple[MessageListener, ...] = ()
        self._error_listeners: tuple[ErrorListener, ...] = ()
        self._close_listeners: tuple[CloseListener, ...] = ()
        self._listener_lock = threading.Lock()
        self._close_fired = False
        self.protocol_version: str | None = None

    # -- the contract -------------------------------------------------------------------

    @abstractmethod
    def start(self) -> None:
        """Open the connection and start reading."""

    @abstractmethod
    def send(
        self,
        message: dict[str, Any],
        signal: AbortSignal | None = None,
        *,
        options: MessageOptions | None = None,
    ) -> None:
        """Write one JSON-RPC message (see the module docstring)."""

    def send_before(
        self,
        message: dict[str, Any],
        deadline: float,
        signal: AbortSignal | None = None,
        *,
        options: MessageOptions | None = None,
    ) -> None:
        """:meth:`send`, ending by ``deadline`` (see the module docstring)."""
        if options is None:
            self.send(message, signal)  # (a ``send`` replaced on the instance may not take it)
        else:
            self.send(message, signal, options=options)

    @abstractmethod
    def close(self) -> None:
        """Close the connection, stop the peer and join the transport's threads."""

    def release_after_fork(self) -> None:  # noqa: B027 (optional: most have nothing to do)
        """In a forked child: let go of this process's copies of the descriptors, touching
        nothing the parent uses (see the module docstring)."""

    def set_protocol_version(self, version: str) -> None:
        """Record the negotiated protocol version."""
        self.protocol_version = version

    # -- listeners ----------------------------------------------------------------------

    def on_message(self, callback: MessageListener) -> Callable[[], None]:
        """Call ``callback(message)`` for each incoming message; returns a remover."""
        return self._add("_message_listeners", callback)

    def on_error(self, callback: ErrorListener) -> Callable[[], None]:
        """Call ``callback(error)`` for each non-fatal error; returns a remover."""
        return self._add("_error_listeners", callback)

    def on_close(self, callback: CloseListener) -> Callable[[], None]:
        """Call ``callback(cause)`` once when the connection ends; returns a remover."""
        return self._add("_close_listeners", callback)

    @property
    def closed(self) -> bool:
        """True once ``on_close`` has fired."""
        return self._close_fired

    def _add(self, attr: str, callback: Any) -> Callable[[], None]:
        with self._listener_lock:
            setattr(self, attr, (*getattr(self, attr), callback))

        def remove() -> None:
            with self._listener_lock:
                current = getattr(self, attr)
                if callback in current:
                    items = list(current)
                    items.remove(callback)
                    setattr(self, attr, tuple(items))

        return remove

    # -- for subclasses -----------------------------------------------------------------

    def _deliver(self, message: Any) -> None:
        """Hand one decoded message to the listeners."""
        for listener in self._message_listeners:
            try:
                listener(message)
            except Exception:
                logger.exception("%s transport: message listener failed", self.kind)

    def _report(self, error: BaseException) -> None:
        """Hand a non-fatal error to the listeners (logged when nobody listens)."""
        listeners = self._error_listeners
        if not listeners:
            logger.warning("%s transport: %s", self.kind, error)
        for listener in listeners:
            try:
                listener(error)
            except Exception:
                logger.exception("%s transport: error listener failed", self.kind)

    def _fire_close(self, cause: BaseException | None) -> None:
        """Fire ``on_close`` the first time this is called; later calls do nothing."""
        with self._listener_lock:
            if self._close_fired:
                return
            self._close_fired = True
            listeners = self._close_listeners
        for listener in listeners:
            try:
                listener(cause)
            except Exception:
                logger.exception("%s transport: close listener failed", self.kind)


def _takes_options(method: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True  # nothing to go by: trust it
    return any(p.name == "options" or p.kind is p.VAR_KEYWORD for p in parameters)


def _dropping_options(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (a ``send`` written before per-message options), called without them: a
    transport subclassed from an older version keeps working."""

    @wraps(method)
    def call(*args: Any, options: MessageOptions | None = None, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    return call
