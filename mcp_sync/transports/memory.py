"""An in-process transport pair for tests: what one side sends, the other receives."""

from __future__ import annotations

import json
import math
import queue
import threading
from typing import Any

from ..abort import AbortSignal
from ..errors import ConnectionClosed
from .base import MessageOptions, Transport

__all__ = ["InMemoryTransport", "in_memory_transport_pair"]

_STOP = object()


class InMemoryTransport(Transport):
    """One end of an in-memory pair made by :func:`in_memory_transport_pair`.

    Messages are delivered as copies (a JSON round trip, so nothing unserializable slips
    through), in order, on this end's own reader thread. Closing either end closes both.
    """

    kind = "memory"

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.peer: InMemoryTransport | None = None
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._send_lock = threading.Lock()
        # start() and a close from the other end (an in-process server that ends while the
        # client starts) race: under this lock the reader is either started or never made.
        self._state_lock = threading.Lock()
        self._closing = False

    def start(self) -> None:
        with self._state_lock:
            if self._closing:
                raise RuntimeError(
                    f"in-memory transport {self.name!r} is closed: a transport starts once"
                )
            if self._thread is not None:
                raise RuntimeError("transport already started")
            thread = threading.Thread(
                target=self._read, name=f"mcp-sync-{self.kind}-reader", daemon=True
            )
            thread.start()
            self._thread = thread

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        self.send_raw(message, signal)

    def send_raw(self, value: Any, signal: AbortSignal | None = None) -> None:
        """Send any JSON value, valid JSON-RPC or not (to script a misbehaving peer)."""
        # Fail as a real transport would, or tests pass here that fail in production.
        peer = self.peer
        if self._closing or peer is None or peer._closing:
            raise ConnectionClosed(f"in-memory transport {self.name!r} is closed")
        if self._thread is None:
            raise ConnectionClosed(f"in-memory transport {self.name!r} is not started")
        if peer._thread is None:
            raise ConnectionClosed(
                f"in-memory peer {peer.name!r} is not started: nothing would read this message"
            )
        data = json.dumps(value)
        with self._send_lock:
            if signal is not None and signal.aborted:
                return
            peer._inbox.put(data)

    def emit_error(self, error: BaseException) -> None:
        """Report ``error`` to this end's ``on_error`` listeners, as a real transport would."""
        self._report(error)

    def close(self) -> None:
        self._shutdown(None)
        if self.peer is not None:
            self.peer._shutdown(ConnectionClosed("in-memory peer closed the connection"))

    def _shutdown(self, cause: BaseException | None) -> None:
        with self._state_lock:
            if self._closing:
                return
            self._closing = True
            thread = self._thread
        self._inbox.put(_STOP)
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._fire_close(cause)

    def _read(self) -> None:
        while True:
            item = self._inbox.get()
            if item is _STOP:
                return
            self._deliver(json.loads(item))


def in_memory_transport_pair() -> tuple[InMemoryTransport, InMemoryTransport]:
    """Two connected transports: give the first to a ``Client``, drive the second yourself."""
    client_side = InMemoryTransport("client")
    server_side = InMemoryTransport("server")
    client_side.peer = server_side
    server_side.peer = client_side
    return client_side, server_side
