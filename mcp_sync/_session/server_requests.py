"""Answering the server: its requests, and every message the reader thread owes it.

The server's requests (sampling, roots, elicitation, ...) run in their registered handlers on
the dispatcher thread, each with an abort signal that the server's ``notifications/cancelled``
fires; ``ping`` and methods without a handler are answered at once.

Bounds, so that a hostile or broken server cannot wedge the client or grow it without limit:
the reader thread never writes (a peer that stops reading would stop it reading). What it owes
(answers to ``ping`` and unknown methods, refusals, and the session's ``notifications/cancelled``)
goes through a writer thread with ``WRITE_BACKLOG`` places; a server that does not read loses
the excess, reported once. At most ``INBOUND_BACKLOG`` server requests wait for or run in their
handlers; the excess is refused with an error at once. In the 2026 era the server's requests
come inside an ``input_required`` result instead: one result may carry at most
``MAX_INPUT_REQUESTS`` (the stateless era refuses a bigger one whole, before any handler runs).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from ..abort import AbortController, AbortSignal
from ..errors import McpError, ProtocolError, RpcError
from ..protocol import jsonrpc
from ..protocol.jsonrpc import Request, RequestId
from ..transports.base import MessageOptions, Transport
from . import dispatch as _dispatch

__all__ = [
    "INBOUND_BACKLOG",
    "MAX_INPUT_REQUESTS",
    "WRITE_BACKLOG",
    "RequestHandler",
    "ServerRequests",
]

logger = logging.getLogger("mcp_sync")

#: ``handler(params, signal) -> result``; raise :class:`RpcError` to answer with an error.
RequestHandler = Callable[[dict[str, Any], AbortSignal], Any]

#: How many answers (to pings, unknown methods) and cancellations may wait to be written.
WRITE_BACKLOG = 1024

#: How many server requests (sampling, roots, ...) may wait for or run in their handlers;
#: the excess is answered with an error at once.
INBOUND_BACKLOG = 1024

#: How many requests (sampling, elicitation, roots) one 2026 ``input_required`` result may
#: carry. Their handlers run one after another on the calling thread; a real server asks for
#: a few at a time, and a flood of them would hold the caller however short its timeout.
MAX_INPUT_REQUESTS = 64


class ServerRequests:
    """The server's requests to one session, their handlers, and the session's writer thread.

    ``options`` gives the :class:`MessageOptions` every answer is sent with, ``closed`` says
    whether the session has ended (answers then have nowhere to go), and ``report`` delivers
    a non-fatal error to the session's error listeners.
    """

    def __init__(
        self,
        transport: Transport,
        dispatcher: _dispatch.Dispatcher,
        *,
        options: Callable[[], MessageOptions | None],
        closed: Callable[[], bool],
        report: Callable[[BaseException], None],
    ) -> None:
        self._transport = transport
        self._dispatcher = dispatcher
        self._options = options
        self._closed = closed
        self._report = report
        self._handlers: dict[str, RequestHandler] = {}
        self._running: dict[RequestId, AbortController] = {}
        self._writer = _dispatch.Dispatcher("mcp-sync-writer", max_backlog=WRITE_BACKLOG)
        self._dropped_writes = 0
        self._queued_any = False
        self._overflowing = False  # refusing server requests beyond INBOUND_BACKLOG

    # -- handlers -----------------------------------------------------------------------

    def handler(self, method: str) -> RequestHandler | None:
        """The handler registered for server requests of ``method``, if any."""
        return self._handlers.get(method)

    def set_handler(self, method: str, handler: RequestHandler | None) -> None:
        """Answer server requests for ``method`` with ``handler`` (None removes it)."""
        if handler is None:
            self._handlers.pop(method, None)
        else:
            self._handlers[method] = handler

    # -- requests -----------------------------------------------------------------------

    def on_request(self, request: Request) -> None:
        """Answer ``request`` (called on the reader thread: never writes, never blocks)."""
        if request.method == "ping":
            self.write_later(jsonrpc.result_response(request.id, {}))
            return
        handler = self._handlers.get(request.method)
        if handler is None:
            self.write_later(
                jsonrpc.error_response(
                    request.id, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {request.method}"
                )
            )
            return
        if len(self._running) >= INBOUND_BACKLOG:
            self._refuse(request)
            return
        self._overflowing = False
        control = AbortController()
        self._running[request.id] = control

        def run() -> None:
            try:
                if control.signal.aborted:
                    return
                result = handler(request.params or {}, control.signal)
            except RpcError as exc:
                if not control.signal.aborted:
                    self._respond_error(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:
                logger.exception("handler for %s raised", request.method)
                if not control.signal.aborted:
                    self._respond_error(
                        request.id, jsonrpc.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
                    )
            else:
                if not control.signal.aborted:
                    self._respond(request.id, result)
            finally:
                self._running.pop(request.id, None)

        self._dispatcher.submit(run)

    def on_cancelled(self, params: dict[str, Any]) -> None:
        """The server's ``notifications/cancelled``: abort the handler of that request."""
        request_id = params.get("requestId")
        control = self._running.pop(request_id, None) if jsonrpc.is_request_id(request_id) else None
        if control is not None:
            control.abort(params.get("reason") or "cancelled by the server")

    def abort_all(self, reason: str) -> None:
        """Abort every handler still running (the connection closed): none will answer."""
        for control in list(self._running.values()):
            control.abort(reason)
        self._running.clear()

    def _refuse(self, request: Request) -> None:
        """Answer a server request beyond the backlog with an error (reported once a burst)."""
        message = (
            f"client backlog full: {INBOUND_BACKLOG} server requests are already waiting for "
            f"their handlers; {request.method} refused, retry later"
        )
        self.write_later(jsonrpc.error_response(request.id, jsonrpc.INTERNAL_ERROR, message))
        if not self._overflowing:
            self._overflowing = True
            self._report(ProtocolError(f"the server floods us with requests: {message}"))

    def _respond(self, request_id: RequestId, result: Any) -> None:
        # A result is always an object: a handler that returned None answers {}.
        self._send_quietly(jsonrpc.result_response(request_id, {} if result is None else result))

    def _respond_error(
        self, request_id: RequestId, code: int, message: str, data: Any = None
    ) -> None:
        self._send_quietly(jsonrpc.error_response(request_id, code, message, data))

    # -- writing ------------------------------------------------------------------------

    def write_later(self, message: dict[str, Any]) -> None:
        """Send ``message`` on the writer thread; drop it (reported once) when the backlog of
        such messages is full: the peer is not reading what we write."""
        self._queued_any = True
        if self._writer.submit(lambda: self._send_quietly(message)) or self._closed():
            return
        self._dropped_writes += 1
        if self._dropped_writes == 1:
            self._report(
                ProtocolError(
                    f"the server is not reading: more than {WRITE_BACKLOG} answers and "
                    "cancellations wait to be written; further ones are dropped"
                )
            )

    def _send_quietly(self, message: dict[str, Any]) -> None:
        try:
            self._transport.send(message, options=self._options())
        except McpError as exc:
            # After close, answers to the server's last requests have nowhere to go.
            log = logger.debug if self._closed() or self._transport.closed else logger.warning
            log("could not answer the server: %s", exc)

    def flush(self, timeout: float) -> None:
        """Wait up to ``timeout`` for what is queued to be written (before a close)."""
        if not self._queued_any:
            return  # (no writer thread to start for nothing)
        written = threading.Event()
        if self._writer.submit(written.set):
            written.wait(timeout)

    def stop(self) -> None:
        """End the writer thread (after the transport closed, so that a write stuck on it has
        been released)."""
        self._writer.stop()
