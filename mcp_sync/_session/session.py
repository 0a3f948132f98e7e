"""The session core: ids, pending requests, deadlines, progress, cancellation, inbound routing.

A blocking call travels like this::

    caller thread                      reader thread (transport)        dispatcher thread
    -------------                      -------------------------        -----------------
    request(): new id, pending entry
    transport.send(message,
        deadline=..., signal=...)
    wait on the Future, until the      response arrives: parse,
    (movable) deadline                 resolve the Future
    <- result / raise                  progress: move the deadline,     on_progress callback
                                       queue the callback
                                       server request / notification -> handler / listeners

The caller waits on its Future with a timeout equal to the time left; when it wakes it
re-reads the deadline, which progress notifications may have pushed back. So a renewed timeout
costs nothing while nothing happens, and Ctrl-C reaches the caller promptly (lock waits with a
timeout are interruptible). The write has the same deadline: a server that stops reading cannot
hold a call past its timeout. Each request's record and its deadlines are :mod:`._pending`'s.

The reader thread routes what arrives: answers settle pending requests here, notifications
go to listeners, and the server's own requests go to :mod:`._server_requests`, which runs
their handlers and owns the bounded writer thread for everything the reader thread owes the
server (the session's ``notifications/cancelled`` included).
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from .._rules.deadline import Deadline
from ..abort import AbortSignal
from ..errors import (
    Aborted,
    ConnectionClosed,
    ProtocolError,
    RequestTimeout,
    RpcError,
    WriteTimeout,
)
from ..protocol import jsonrpc
from ..protocol.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Response,
)
from ..transports.base import MessageOptions, Transport
from . import dispatch as _dispatch
from .extra_headers import current as current_extra_headers
from .outgoing import Outgoing, message_options
from .pending import PendingRequest
from .server_requests import RequestHandler, ServerRequests

__all__ = ["CLOSED_BY_CLOSE", "CLOSED_HINT", "PendingRequest", "RequestHandler", "Session"]

logger = logging.getLogger("mcp_sync")

NotificationListener = Callable[[Notification], None]

#: How to go on after the server went away from a client without ``recovery=``. (With it,
#: the next call reconnects; after close() or a failed first connect(), recovery= does not
#: help: each error gives only the advice that is true.)
CLOSED_HINT = (
    "the client is closed for good: create a new Client to connect again"
    " (or connect with recovery=True, which reconnects on the next call)"
)
#: How to go on after ``close()``: recovery or not, a closed client stays closed.
CLOSED_BY_CLOSE = "the client was closed: create a new Client to connect again"

#: Callbacks (notification and progress listeners, ``on_error``) waiting for the dispatcher
#: thread. A server that floods faster than they run gets the excess dropped, reported once
#: until they catch up, instead of memory that grows without end.
CALLBACK_BACKLOG = 10_000

_INTERRUPT_SLICE = 0.05
#: How long a call waits for its own progress callbacks to run (a callback may block).
_DRAIN_TIMEOUT = 5.0


class Session:
    """Correlates requests and responses over one transport. Owned by a ``Client``."""

    def __init__(self, transport: Transport, dispatcher: _dispatch.Dispatcher) -> None:
        self.transport = transport
        self.dispatcher = dispatcher
        #: False in eras/transports where cancelling means closing the request's stream.
        self.cancel_on_wire = True
        #: The version and era every message of this session is sent at (a handshake request
        #: gives its own): once negotiated, the version (in the stateless era: standalone).
        #: What else a message tells its transport is added by :func:`.outgoing.message_options`.
        self.message_options: MessageOptions | None = None
        #: Called on the reader thread for each notification, before any listener: for the
        #: client's own bookkeeping only (quick, never user code).
        self.inline_listener: NotificationListener | None = None
        #: Called on the transport's thread when it closes on its own, before pending
        #: requests fail: the owner's state must already say "closed" when a caller wakes.
        self.before_close: Callable[[BaseException | None], None] | None = None
        #: ``hint(cause)``: the advice that ends the error of a call the session's end failed
        #: (the owner knows which is true: recovery heals a lost server, not a close()).
        self.closed_hint: Callable[[BaseException | None], str | None] = lambda _: CLOSED_HINT
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, PendingRequest] = {}
        self._listeners: dict[str | None, tuple[NotificationListener, ...]] = {}
        self._error_listeners: tuple[Callable[[BaseException], None], ...] = ()
        self._lock = threading.Lock()
        self._callbacks_waiting = 0  # guarded by _lock
        self._flooded = False  # guarded by _lock: callbacks were dropped since it last emptied
        # A session does not outlive a fork (the client refuses calls after one), so the
        # main thread it waits on never changes.
        self._main_ident = threading.main_thread().ident
        self._close_cause: BaseException | None = None
        #: True once the session has ended (set by :meth:`fail_all` alone). An attribute, not
        #: a property: every request reads it (a property is a frame, 0.6k instructions).
        self.closed = False
        self._server_requests = ServerRequests(
            transport,
            dispatcher,
            options=lambda: message_options(self.message_options, attended=False),
            closed=lambda: self.closed,
            report=self._report,
        )
        self._removers = [
            transport.on_message(self._on_message),
            transport.on_error(self._on_transport_error),
            transport.on_close(self._on_transport_close),
        ]

    # -- outgoing -----------------------------------------------------------------------

    def request(self, outgoing: Outgoing) -> Any:
        """Send a request and block until its result, by its call's deadline; raise on
        error, timeout or abort."""
        signal = outgoing.signal
        if signal is not None:
            signal.throw_if_aborted()
        pending = self.begin(outgoing)
        try:
            return self._wait(pending, not outgoing.row.begins_session)
        finally:
            if pending.remove_abort is not None:
                pending.remove_abort()

    def begin(
        self,
        outgoing: Outgoing,
        before_send: Callable[[PendingRequest], object] | None = None,
    ) -> PendingRequest:
        """Send a request without waiting: its ``future`` settles when it is answered.

        For long-lived requests (``subscriptions/listen``: a deadline of none), and for a
        request waited for with :meth:`result`; end one with :meth:`cancel`.
        Its ``signal`` aborts the request; it is listened to before the request is sent, as a
        transport may make the whole exchange inside ``send`` (HTTP does). For the same reason
        ``before_send(pending)`` is where a caller files the request by its id to route what
        the server sends about it: that can come before ``send`` returns.
        """
        if self.closed:
            raise self._closed_unsent()
        request_id = next(self._ids)
        method, params, on_progress = outgoing.method, outgoing.params, outgoing.on_progress
        pending = PendingRequest(request_id, method, outgoing.deadline, on_progress)
        at = outgoing.at
        options = message_options(
            self.message_options if at is None else at,
            outgoing.row,
            outgoing.headers,
            outgoing.extra_headers,
            on_progress is not None,
        )
        if on_progress is not None:
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = request_id
            params["_meta"] = meta
        self._pending[request_id] = pending
        signal = outgoing.signal
        if signal is not None:
            pending.remove_abort = self._settle_on_abort(pending, signal)
        if before_send is not None:
            before_send(pending)
        try:
            self.transport.send(
                jsonrpc.request(request_id, method, params),
                deadline=pending.deadline.at,
                signal=pending.send_signal,
                options=options,
            )
        except WriteTimeout as exc:
            # Nothing (or a broken part) reached the server: there is nothing to cancel.
            error = pending.timed_out(str(exc))
            self._settle(pending, error=error)
            if pending.remove_abort is not None:
                pending.remove_abort()
            raise error from exc
        except BaseException as exc:
            if pending.remove_abort is not None:
                pending.remove_abort()
            if isinstance(exc, KeyboardInterrupt):
                # (Ctrl-C inside send: the request may be on its way, as in _wait)
                interrupted = Aborted("KeyboardInterrupt")
                self._settle_locally(pending, interrupted, "Interrupted by the user")
                self._send_cancel(pending, not outgoing.row.begins_session)
                raise
            if isinstance(exc, ConnectionClosed):
                exc.sent = False  # the write failed: the server cannot have read it
            self._settle(pending, error=exc)
            raise
        return pending

    def result(
        self, pending: PendingRequest, deadline: Deadline, window: float | None = None
    ) -> Any:
        """Wait for the answer to a request started with :meth:`begin`, by the call's
        ``deadline``, or for ``window`` seconds if that ends sooner. On timeout raise
        :class:`RequestTimeout` and leave the request pending: its answer may still come."""
        wait = deadline.left() if window is None else deadline.within(window)
        done, _ = futures.wait([pending.future], None if wait == math.inf else wait)
        if done:
            return pending.future.result()
        if deadline.passed():
            raise deadline.expired(pending.method)
        raise RequestTimeout(pending.method, wait)

    def forget(self, pending: PendingRequest) -> None:
        """Stop waiting for a request's answer, sending nothing."""
        self._settle(pending, error=Aborted("no longer needed"))

    def cancel(self, pending: PendingRequest, reason: str) -> None:
        """Give up on a request started with :meth:`begin` and cancel it on the wire."""
        self._settle_locally(pending, Aborted(reason), reason)
        self._send_cancel(pending, True)

    def notify(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        opens_session: bool = False,
    ) -> None:
        """Send a notification; raise :class:`WriteTimeout` if the server has not taken it
        within ``timeout`` seconds (None: no limit). ``opens_session``: it completes the
        handshake (``notifications/initialized``)."""
        if self.closed:
            raise self._closed_unsent()
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        options = message_options(
            self.message_options,
            extra=current_extra_headers(),
            attended=False,
            opens_session=opens_session,
        )
        message = jsonrpc.notification(method, params)
        self.transport.send(message, deadline=deadline, options=options)

    def _wait(self, pending: PendingRequest, cancellable: bool) -> Any:
        future = pending.future
        # Only the main thread gets KeyboardInterrupt, and a signal does not always interrupt
        # its wait: there it waits in short slices so Ctrl-C is seen promptly.
        longest = _INTERRUPT_SLICE if threading.get_ident() == self._main_ident else math.inf
        error: BaseException | None
        try:
            while True:
                remaining = pending.deadline.at - time.monotonic()
                if remaining <= 0:
                    self._settle_locally(pending, pending.timed_out(), "Request timed out")
                    remaining = 0
                elif remaining > longest:
                    remaining = longest
                try:
                    result = future.result(None if remaining == math.inf else remaining)
                    error = None
                    break
                except FutureTimeout as exc:
                    if not future.done():
                        continue  # the wait ran out, not the request: re-read the deadline
                    result, error = None, exc  # the request's own error is a TimeoutError
                    break
                except Exception as exc:
                    result, error = None, exc
                    break
        except KeyboardInterrupt:
            self._settle_locally(pending, Aborted("KeyboardInterrupt"), "Interrupted by the user")
            self._send_cancel(pending, cancellable)
            raise
        if pending.cancel_reason is not None:
            self._send_cancel(pending, cancellable)
        if pending.on_progress is not None:
            self._drain_progress()
        if error is not None:
            raise error
        return result

    def _drain_progress(self) -> None:
        """Let the progress callbacks queued before the answer run before the call returns,
        so a caller never sees progress after its result."""
        if self.dispatcher.on_dispatcher_thread():
            return  # a handler's own call: its callbacks queue behind it
        drained = threading.Event()
        if self.dispatcher.submit(drained.set):
            drained.wait(_DRAIN_TIMEOUT)

    def _send_cancel(self, pending: PendingRequest, cancellable: bool) -> None:
        reason = pending.cancel_reason
        if reason is None or not cancellable or not self.cancel_on_wire or self.closed:
            return
        # Through the writer: a caller whose time is up must not wait behind a stuck write.
        self._server_requests.write_later(
            jsonrpc.notification(
                "notifications/cancelled", {"requestId": pending.id, "reason": reason}
            )
        )

    def _settle_on_abort(self, pending: PendingRequest, signal: AbortSignal) -> Callable[[], None]:
        # Not a lambda in begin(): a closure there makes its locals cells, for every request.
        return signal.on_abort(
            lambda reason: self._settle_locally(pending, Aborted(reason), reason)
        )

    def _settle_locally(
        self, pending: PendingRequest, error: BaseException, reason: object
    ) -> None:
        """Give up on a request from our side (timeout, abort, Ctrl-C)."""
        if self._settle(pending, error=error):
            pending.cancel_reason = str(reason)

    def _settle(
        self, pending: PendingRequest, result: Any = None, error: BaseException | None = None
    ) -> bool:
        # dict.pop is atomic: whoever pops the entry settles the request, exactly once.
        if self._pending.pop(pending.id, None) is None:
            return False
        # Release the transport's hold on the request (an HTTP stream) before waking the
        # caller, so the reader thread gives up the GIL sooner.
        pending.send_signal._abort("settled")
        if error is not None:
            pending.future.set_exception(error)
        else:
            pending.future.set_result(result)
        return True

    # -- incoming -----------------------------------------------------------------------

    def _on_message(self, raw: Any) -> None:
        if isinstance(raw, list):
            for item in jsonrpc.parse_batch(raw):
                if isinstance(item, InvalidMessage):
                    self._on_invalid(item)
                else:
                    self._handle(item)
            return
        try:
            message = jsonrpc.parse(raw)
        except InvalidMessage as exc:
            self._on_invalid(exc)
            return
        self._handle(message)

    def _handle(self, message: jsonrpc.Message) -> None:
        if isinstance(message, Response):
            pending = self._pending.get(message.id)
            if pending is None:
                if not self._confused(message.id):
                    logger.debug("response for unknown or settled request id %r", message.id)
            else:
                self._settle(pending, result=message.result)
        elif isinstance(message, ErrorResponse):
            error = RpcError.from_error(
                {"code": message.code, "message": message.message, "data": message.data}
            )
            pending = self._pending.get(message.id) if message.id is not None else None
            if pending is not None:
                self._settle(pending, error=error)
            elif message.id is None:
                self._report(ProtocolError(f"error response without a request id: {error}"))
            elif not self._confused(message.id):
                logger.debug("error for unknown or settled request id %r: %s", message.id, error)
        elif isinstance(message, Request):
            self._server_requests.on_request(message)
        else:
            self._on_notification(message)

    def _confused(self, request_id: RequestId) -> bool:
        """An answer whose id is a string of digits where we sent the number ("3" for 3):
        fail that request at once and report it, instead of leaving it to its timeout."""
        if not isinstance(request_id, str) or not request_id.isascii():
            return False
        if not request_id.isdigit() or len(request_id) > 20:
            return False
        pending = self._pending.get(int(request_id))
        if pending is None:
            return False
        error = ProtocolError(
            f"the server answered request {pending.id} ({pending.method}) with the id "
            f"{request_id!r}: a string where the request's id was a number (type confusion); "
            "the answer cannot be trusted to be for that request"
        )
        self._settle(pending, error=error)
        self._report(error)
        return True

    def _on_invalid(self, error: InvalidMessage) -> None:
        pending = self._pending.get(error.id) if error.id is not None else None
        if pending is not None and "method" not in error.raw:
            self._settle(pending, error=error)
        else:
            self._report(error)

    def _on_notification(self, notification: Notification) -> None:
        params = notification.params or {}
        if notification.method == "notifications/cancelled":
            self._server_requests.on_cancelled(params)
            return
        if notification.method == "notifications/progress":
            token = params.get("progressToken")
            pending = self._pending.get(token) if jsonrpc.is_request_id(token) else None
            if pending is not None and pending.on_progress is not None:
                pending.renew()
                callback = pending.on_progress
                self._callback_later(functools.partial(callback, params))
                return
        if self.inline_listener is not None:
            self.inline_listener(notification)
        listeners = self._listeners.get(notification.method, ()) + self._listeners.get(None, ())
        if listeners:
            self._callback_later(functools.partial(_call_each, listeners, notification))

    def _callback_later(self, job: Callable[[], None]) -> None:
        """Run a user callback on the dispatcher thread, unless :data:`CALLBACK_BACKLOG` of
        them are waiting already: then drop it (the first drop of a flood is reported)."""
        with self._lock:
            full = self._callbacks_waiting >= CALLBACK_BACKLOG
            first_drop = full and not self._flooded
            if full:
                self._flooded = True
            else:
                self._callbacks_waiting += 1
        if full:
            if first_drop:
                self._report(
                    ProtocolError(
                        f"the server floods us with notifications: {CALLBACK_BACKLOG} callbacks "
                        "are already waiting to run; further ones are dropped until they catch up"
                    ),
                    bounded=False,
                )
            return

        def run() -> None:
            with self._lock:
                self._callbacks_waiting -= 1
                if self._callbacks_waiting == 0:
                    self._flooded = False
            job()

        if not self.dispatcher.submit(run):  # stopped: it will never run
            with self._lock:
                self._callbacks_waiting -= 1

    # -- registration -------------------------------------------------------------------

    def handler(self, method: str) -> RequestHandler | None:
        """The handler registered for server requests of ``method``, if any."""
        return self._server_requests.handler(method)

    def set_handler(self, method: str, handler: RequestHandler | None) -> None:
        """Answer server requests for ``method`` with ``handler`` (None removes it)."""
        self._server_requests.set_handler(method, handler)

    def add_listener(
        self, method: str | None, listener: NotificationListener
    ) -> Callable[[], None]:
        """Deliver notifications for ``method`` (every one for None); returns a remover."""
        with self._lock:
            self._listeners[method] = (*self._listeners.get(method, ()), listener)

        def remove() -> None:
            with self._lock:
                current = list(self._listeners.get(method, ()))
                if listener in current:
                    current.remove(listener)
                    self._listeners[method] = tuple(current)

        return remove

    def add_error_listener(self, listener: Callable[[BaseException], None]) -> Callable[[], None]:
        """Deliver non-fatal errors (bad messages, transport reports); returns a remover."""
        with self._lock:
            self._error_listeners = (*self._error_listeners, listener)

        def remove() -> None:
            with self._lock:
                self._error_listeners = tuple(x for x in self._error_listeners if x is not listener)

        return remove

    # -- errors and closing -------------------------------------------------------------

    def _on_transport_error(self, error: BaseException) -> None:
        if isinstance(error, InvalidMessage):  # a response too broken to parse (not UTF-8)
            request_id = error.id
        else:
            request_id = getattr(error, "request_id", None)
        pending = self._pending.get(request_id) if request_id is not None else None
        if pending is None:
            self._report(error)
            return
        if pending.deadline.passed():
            # What the request waited on when its time ran out (a sign-in, a read): the call
            # timed out, and that is its cause.
            self._settle_locally(pending, pending.timed_out(cause=error), "Request timed out")
        else:
            self._settle(pending, error=error)
        if isinstance(error, ProtocolError):
            self._report(error)  # the server is broken: say so even though a call failed

    def _report(self, error: BaseException, *, bounded: bool = True) -> None:
        listeners = self._error_listeners
        if not listeners:
            logger.warning("mcp_sync: %s", error)
            return
        job = functools.partial(_call_each, listeners, error)
        if bounded:
            self._callback_later(job)
        else:
            self.dispatcher.submit(job)

    def _on_transport_close(self, cause: BaseException | None) -> None:
        hook = self.before_close
        if hook is not None and not self.closed:
            try:
                hook(cause)
            except Exception:
                logger.exception("mcp_sync: close hook failed")
        self.fail_all(cause)

    def fail_all(self, cause: BaseException | None) -> None:
        """Mark the session closed and fail every pending request with ``ConnectionClosed``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._close_cause = cause
        for pending in list(self._pending.values()):
            self._settle(pending, error=self.closed_error())
        self._server_requests.abort_all("connection closed")

    @property
    def close_cause(self) -> BaseException | None:
        """Why the session ended (None: closed by its owner, or still open)."""
        return self._close_cause

    def closed_error(self) -> ConnectionClosed:
        """A fresh ``ConnectionClosed`` describing why the session ended and how to go on."""
        cause = self._close_cause
        if isinstance(cause, ConnectionClosed):
            error = copy.copy(cause)
        else:
            error = ConnectionClosed("connection closed", cause=cause)
        # before the stderr tail, which ends the message when there is one
        text = error.args[0] if error.args else "connection closed"
        hint = self.closed_hint(cause)
        if hint:
            head, tail_marker, tail = str(text).partition("\n--- server stderr")
            error.args = (f"{head} ({hint}){tail_marker}{tail}", *error.args[1:])
        return error

    def _closed_unsent(self) -> ConnectionClosed:
        """The error of a message not sent because the session has ended."""
        error = self.closed_error()
        error.sent = False
        return error

    def flush_writes(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the cancellations and answers queued for the writer
        thread to be written: ``close()`` calls it before closing the transport."""
        self._server_requests.flush(timeout)

    def detach(self) -> None:
        """Stop listening to the transport and end the writer thread (after the transport
        closed, so that a write stuck on it has been released)."""
        for remove in self._removers:
            remove()
        self._server_requests.stop()


def _call_each(listeners: tuple[Callable[[Any], None], ...], value: Any) -> None:
    """Call every listener with ``value``, in order; one that raises is logged, not the end."""
    for listener in listeners:
        try:
            listener(value)
        except Exception:
            logger.exception("mcp_sync: a callback raised")
