"""The transport contract: the cut between the session core and I/O.

A transport moves whole JSON-RPC messages and knows nothing of their meaning beyond what
framing needs; the session core (:mod:`mcp_sync._session.session`) owns ids, correlation, timeouts,
cancellation and initialization. The client starts the transport it is given and closes it
(on ``close()``, on a failed ``connect()``, when recovery replaces it); the session only sends
and listens, and never closes it.

``start()``
    Open the connection and start the reader thread (``mcp-sync-<kind>-reader``, daemonic).
    Called once; raise a :class:`~mcp_sync.errors.McpError` naming what failed.

``send(message, *, deadline=math.inf, signal=None, options=None)``
    Write one message (a JSON-serializable dict), or hand it off to the transport's own
    threads, by ``deadline`` (a :func:`time.monotonic` time; ``math.inf``: no limit), else
    raise :class:`~mcp_sync.errors.WriteTimeout`; if part of it was written, set ``partial``
    and close with that reason. A transport may also read a request's answer here, on the
    caller's thread, within ``deadline`` (Streamable HTTP does for a JSON answer), giving up
    when ``signal`` aborts or it is closed. Do not start if ``signal`` is already aborted; the
    session aborts a request's ``signal`` once it settles (HTTP then closes its stream).
    Serialize concurrent senders: messages reach the peer in ``send()`` order. Raise
    :class:`~mcp_sync.errors.ConnectionClosed` after close,
    :class:`~mcp_sync.errors.TransportError` when this one message cannot be sent.

``close()``
    Idempotent, from any thread (a listener's included). Let what was handed off go out
    within a short bound, release every reader, stop the peer (a child process is gone when it
    returns), join the transport's threads, and fire ``on_close(None)``.

``unread_by_peer()``
    Optional: how many bytes sent the peer has not read yet, where the transport can tell
    (stdio: the pipe's count), else 0 (the default). A peer that has read nothing is still
    starting: the era probe's window starts once it has read the probe.

``release_after_fork()``
    In a ``fork()`` child, instead of ``close()``: close this process's copies of the
    descriptors and nothing more (send nothing, signal no process, shut no socket down, join
    no thread, take no lock: all of it is the parent's). The default does nothing.

Listeners (called on the transport's threads: be quick; each ``on_*`` returns a remover):
``on_message`` gets each decoded JSON value (an object or a batch array) in order;
``on_error`` problems that do not end the connection (one with ``request_id`` fails that
request); ``on_close`` the cause, once (None after ``close()``).

:class:`MessageOptions`, what one message needs beyond its bytes (a transport uses what
applies to it; stdio, pipes and the in-memory pair ignore all of it; ``None``: nothing
special): ``version``, the protocol version it is sent at (every message once the version is
known; HTTP's ``MCP-Protocol-Version``); ``standalone``, it stands alone (stateless era): no
session id, no stream resumption; ``headers``, extra headers that never override the
protocol's; ``opens_session`` (``notifications/initialized``: HTTP opens its GET stream);
``begins_session`` (``initialize``: no session id yet); ``streams_progress`` (a request that
asked for progress: its answer may be long coming); ``safe_to_resend`` (it only reads);
``interactive_auth`` (False: a 401 may refresh a token but open no browser).

Class attributes the session reads: ``cancels_by_closing_stream`` (a stateless-era request is
cancelled by aborting its ``signal``, with no ``notifications/cancelled``: Streamable HTTP);
``answers_every_request`` (every request gets an answer, so the era probe waits the whole
connect timeout for ``server/discover``'s).

Example, a transport over a socket-like ``conn`` with ``readline``/``write``::

    class SocketLineTransport(Transport):
        kind = "line"

        def start(self):
            threading.Thread(target=self._read, name="mcp-sync-line-reader", daemon=True).start()

        def _read(self):
            for line in conn:
                self._deliver(json.loads(line))
            self._fire_close(None)

        def send(self, message, *, deadline=math.inf, signal=None, options=None):
            if signal is None or not signal.aborted:
                conn.write(jsonrpc.encode(message) + b"\\n")  # (a blocking write: no deadline)

        def close(self):
            conn.close()
            self._fire_close(None)
"""

from __future__ import annotations

import logging
import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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

    The session fills ``safe_to_resend`` and ``begins_session`` from the method's row in
    :mod:`mcp_sync.protocol.methods`, so that no transport reads a method name.
    """

    version: str | None = None
    standalone: bool = False
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

    def __init__(self) -> None:
        self._message_listeners: tuple[MessageListener, ...] = ()
        self._error_listeners: tuple[ErrorListener, ...] = ()
        self._close_listeners: tuple[CloseListener, ...] = ()
        self._listener_lock = threading.Lock()
        self._close_fired = False

    # -- the contract -------------------------------------------------------------------

    @abstractmethod
    def start(self) -> None:
        """Open the connection and start reading."""

    @abstractmethod
    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        """Write one JSON-RPC message by ``deadline`` (see the module docstring)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection, stop the peer and join the transport's threads."""

    def unread_by_peer(self) -> int:
        """Bytes sent that the peer has not read yet; 0 when it cannot be told (see the
        module docstring)."""
        return 0

    def release_after_fork(self) -> None:  # noqa: B027 (optional: most have nothing to do)
        """In a forked child: let go of this process's copies of the descriptors, touching
        nothing the parent uses (see the module docstring)."""

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
