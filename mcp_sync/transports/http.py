"""Streamable HTTP: one endpoint, a POST per message (and, before 2026, a GET stream).

Eras
    In the handshake era (2025-03-26 .. 2025-11-25) the transport keeps the ``Mcp-Session-Id``
    the ``initialize`` response gave, sends it and ``MCP-Protocol-Version`` (the message's
    ``options.version``) on every later request, opens the GET stream with the message whose
    options say ``opens_session`` and DELETEs the session on close; the GET stream, the
    resumption of a response stream and the DELETE go at the version of the session's last
    message. A message whose options say ``standalone`` (the stateless era, 2026-07-28)
    stands alone: its POST carries the headers of
    :func:`mcp_sync.protocol.headers.standard_headers` instead, and no session id; there is no
    GET stream, no resumption of a broken response stream and no DELETE. ``Mcp-Method`` /
    ``Mcp-Name`` go on every POST of both eras: a dual-era client's ``initialize`` is a POST
    too (the conformance suite checks it there), and servers of the handshake era ignore them
    (the official Python SDK routes on ``MCP-Protocol-Version``). A POST also carries the
    message's ``options.headers`` (the client's ``Mcp-Param-*`` headers), in both eras. A
    message sent without options belongs to the session. The transport reads nothing else of a
    message to decide these: not its ``params._meta``, not its method name.

Threads
    A request sent with a deadline (as the session sends every call that has a timeout) and no
    progress token is POSTed on the caller's thread, which would only wait for its answer
    anyway: a JSON answer is read there too, with no hand-off to another thread and
    back (the socket's read timeout is the time left, so the caller is back by the deadline;
    its abort signal or ``close()`` cut the exchange short from another thread). An SSE answer
    is read by a worker from a small pool of daemon threads (``mcp-sync-http-worker-N``; idle
    ones exit after a while), and so is the whole exchange of a request without a deadline
    (``subscriptions/listen``) or with a progress token (progress moves the deadline).
    Notifications and responses go through one ordered lane on the same pool (one at a
    time, in ``send()`` order; see :class:`~mcp_sync.transports._http.workers.Lane`) and expect
    202; a request sent after them waits for them the same way, so it never overtakes
    ``notifications/initialized``. The server-push GET stream has its own thread,
    ``mcp-sync-http-reader``. It is opened (its response headers in) before
    ``notifications/initialized`` is POSTed: a server without an event store sends what follows
    that notification (``list_changed`` bursts, ``roots/list``) at once and drops it when no
    stream is open.

Releasing a blocked reader
    Every HTTP exchange can be cut short from another thread (see
    :mod:`mcp_sync.transports._http.exchange`). When the session aborts a request's ``signal``
    before the answer came, its exchange is shut down at once; after the answer, the reader is
    left :data:`~mcp_sync.transports._http.delivery.LINGER` seconds to see the stream end so
    the connection goes back to the pool.
    ``close()`` first lets the notifications and responses already sent go out (up to
    :data:`~mcp_sync.transports._http.workers.LANE_STALL` seconds in all), then shuts every
    exchange down and joins every thread.

Session renewal
    Requests wait for a renewal to settle (:mod:`~mcp_sync.transports._http.renewal`).

Retries
    A POST is sent again only when it provably never reached the server (see "Retries" in
    :mod:`mcp_sync.transports._http.client`). The GET stream, and the resumption of a POST's
    SSE stream (GET with ``Last-Event-ID``), reconnect after network errors and HTTP 408, 429
    and 5xx, by one loop and one policy (:mod:`mcp_sync.transports._http.streams`,
    :class:`ReconnectOptions`): the delay from ``Retry-After``, else the stream's ``retry``
    field, else exponential backoff; errors of auth, session and protocol are reported, not
    retried. A stream's end is a failure, but a stream that delivered events or stayed open
    longer than the reconnect delay (a proxy ending an idle stream is no outage) starts a new
    budget. An event id that cannot be sent back as ``Last-Event-ID`` (not Latin-1) fails the
    resumption of a request's stream; the GET stream reports it and reconnects without one.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
from typing_extensions import Unpack

from ..abort import AbortSignal
from ..auth import AuthProvider
from ..backoff import Backoff
from ..errors import (
    ConnectionClosed,
    HttpError,
    McpError,
    NetworkError,
    SessionExpired,
    TransportError,
)
from ..protocol import jsonrpc
from ._http.base import ACK_TIMEOUT, HttpTransportBase
from ._http.client import HttpClient
from ._http.delivery import Delivery
from ._http.errors import is_timeout, retold
from ._http.exchange import Cancelled, Exchange
from ._http.fork import close_socket_copies
from ._http.headers import SESSION_HEADER, post_headers, session_headers
from ._http.options import HttpOptions
from ._http.renewal import SessionRenewal, refused_without_session
from ._http.responses import (
    ERROR_BODY_LIMIT,
    JSON_TYPE,
    MIB,
    SSE_TYPE,
    error_for_request,
    jsonrpc_error_in,
    read_limited,
)
from ._http.session_streams import SessionStreams
from ._sse import SseStream
from .base import MessageOptions

__all__ = ["ReconnectOptions", "StreamableHttpTransport", "fallback_failed", "fallback_to_sse"]

logger = logging.getLogger("mcp_sync.transport.http")


@dataclass(frozen=True)
class ReconnectOptions(Backoff):
    """How SSE streams reconnect: a :class:`~mcp_sync.Backoff` (the one retry policy, shared
    with the client's ``recovery=``) with a stream's defaults: 1 s doubled per failed attempt,
    capped at ``max_delay``, giving up after ``max_retries`` failures in a row, no jitter. A
    server's ``Retry-After`` or SSE ``retry`` replaces the computed delay (still capped)."""

    initial_delay: float = 1.0
    jitter: float = 0.0


def fallback_to_sse(error: BaseException) -> bool:
    """True if this failure of ``initialize`` over Streamable HTTP means "try HTTP+SSE".

    That is HTTP 400, 404 or 405 without a JSON-RPC error body: an old server that has no
    Streamable HTTP endpoint at that URL. (A JSON-RPC error body is delivered as the request's
    error, so it arrives as an ``RpcError``, never here.)
    """
    if not isinstance(error, HttpError) or isinstance(error, SessionExpired):
        return False
    if error.status not in (400, 404, 405):
        return False
    return jsonrpc_error_in(error.body, None) is None


def fallback_failed(primary: BaseException, fallback: BaseException) -> McpError:
    """The error for a URL where neither transport worked: what the Streamable HTTP attempt got
    (``primary``, the error :func:`fallback_to_sse` accepted) first, then what the HTTP+SSE
    fallback got. Typed as ``primary`` (an :class:`~mcp_sync.errors.HttpError` with its status
    and whole body)."""
    if not isinstance(primary, HttpError):
        return fallback if isinstance(fallback, McpError) else TransportError(str(fallback))
    error = HttpError(
        primary.status,
        message=f"{primary}; the HTTP+SSE fallback failed too: {fallback}",
        request_id=primary.request_id,
        headers=primary.headers,
    )
    error.body = primary.body
    return error


# -- the transport -------------------------------------------------------------------------------


class StreamableHttpTransport(HttpTransportBase):
    """The Streamable HTTP transport (protocol 2025-03-26 .. 2026-07-28), on ``requests``.

    ``session``: a ``requests.Session`` to use (its adapters, certificates, cookies); by default
    the transport makes a keep-alive one. With an injected session a request that is still
    waiting for response headers cannot be cut short (see the module docstring).
    ``headers``: sent with every request; one that cannot be (a framing or hop-by-hop header,
    one the protocol sets, a value with a line break or a control character) raises
    :class:`~mcp_sync.errors.InvalidHeaderValue`, a ``ValueError``, naming it.
    ``auth``: an :class:`~mcp_sync.auth.AuthProvider`. ``open_get_stream``: open the server-push
    GET stream after initialization. ``max_message_bytes``: largest JSON body or SSE event taken.
    ``connect_timeout``: seconds for a TCP+TLS connection. ``verify``, ``cert``, ``proxy``: TLS.
    """

    kind = "http"
    cancels_by_closing_stream = True
    #: Every request gets an answer: a Streamable HTTP server of any era answers a POST (a
    #: handshake-era one rejects a ``server/discover`` before ``initialize`` at once), so the
    #: era probe waits for that answer, however slow, instead of a short window.
    answers_every_request = True

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        auth: AuthProvider | None = None,
        open_get_stream: bool = True,
        max_message_bytes: int = 16 * MIB,
        reconnect: ReconnectOptions | None = None,
        connect_timeout: float = 10.0,
        **options: Unpack[HttpOptions],
    ) -> None:
        super().__init__(
            url,
            headers=headers,
            session=session,
            auth=auth,
            max_message_bytes=max_message_bytes,
            connect_timeout=connect_timeout,
            post=self._post_message,
            options=options,
        )
        self.open_get_stream = open_get_stream
        self.reconnect = reconnect if reconnect is not None else ReconnectOptions()
        self.session_id: str | None = None
        #: The version of the session's last message: what its GET and DELETE are sent at.
        self._session_version: str | None = None
        self._had_session = False  # a session id was given: a request without one is refused
        self._renewal = SessionRenewal()
        self._delivery = Delivery(url, max_message_bytes, self._deliver, self._report)
        self._streams = SessionStreams(
            self._delivery,
            self.reconnect,
            self._get,
            self._new_exchange,
            self._forget,
        )

    # -- the contract ---------------------------------------------------------------------

    def start(self) -> None:
        """Prepare the session. Nothing is sent until the first message (``initialize``)."""
        self._open_client()

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        if self._closing:
            raise ConnectionClosed(f"HTTP transport to {self.url} is closed")
        if self._http is None:
            raise TransportError("call start() before send()")
        if signal is not None and signal.aborted:
            return
        if options is not None and options.version and not options.standalone:
            self._session_version = options.version  # (for the GET and DELETE of the session)
        method = message.get("method")
        request_id = message.get("id")
        if isinstance(method, str) and jsonrpc.is_request_id(request_id):
            renewal = self._renewal
            if renewal.until and not (options and (options.begins_session or options.standalone)):
                renewal.wait(deadline, signal, lambda: self._closing)  # see "Session renewal"
            # Not before the notifications and responses sent ahead of it (their own lane).
            self._lane.wait_passed(deadline)
            exchange = self._new_exchange()
            remove = signal.on_abort(exchange.on_abort) if signal is not None else None
            if deadline != math.inf and not (options is not None and options.streams_progress):
                # (see "Threads" above: the caller waits for this answer anyway)
                self._run_request(message, options, method, request_id, exchange, remove, deadline)
                return
            try:
                self._workers.submit(
                    lambda: self._run_request(
                        message, options, method, request_id, exchange, remove
                    )
                )
            except BaseException:
                self._forget(exchange)
                raise
            return
        waiter = None
        if self._wants_get_stream(options):
            waiter = threading.Event()
        self._lane.put((message, options, signal, waiter))
        if options is not None and options.opens_session:
            self._renewal.end()  # what is sent from now on goes after it, in the lane
        if waiter is not None:
            # Return once the GET stream is answered, so that a server request sent right after
            # initialization has a stream to arrive on.
            deadline = time.monotonic() + 2 * self.connect_timeout + 1.0
            while not waiter.wait(0.05):
                if self._closing or time.monotonic() > deadline:
                    break

    def close(self) -> None:
        self._flush()
        exchanges = self._begin_closing()
        if exchanges is None:
            self._wait_closed()
            return
        for exchange in exchanges:
            exchange.cancel()  # before the DELETE: no reader waits behind it
        self._delete_session()
        self._release(exchanges)
        self._closed_event.set()
        self._fire_close(None)

    def release_after_fork(self) -> None:
        """In a forked child: the session is the parent's. No ``DELETE`` and no socket shut
        down (either would end the parent's session or connection): only the child's copies
        of the sockets are closed (see :func:`._http.fork.close_socket_copies`)."""
        self._closing = True
        http, self._http = self._http, None
        self._closed_event.set()  # a later close() in the child returns at once
        close_socket_copies(http, list(self._exchanges))

    # -- eras -----------------------------------------------------------------------------

    def _wants_get_stream(self, options: MessageOptions | None) -> bool:
        return (
            self.open_get_stream
            and options is not None
            and options.opens_session
            and not options.standalone
        )

    def _post_headers(
        self, message: dict[str, Any], options: MessageOptions | None
    ) -> dict[str, str]:
        """All headers of the POST of ``message`` (see :func:`._http.headers.post_headers`)."""
        return post_headers(
            message,
            options,
            static=self.headers,
            session_id=self.session_id,
            negotiated=self._session_version,
        )

    # -- helpers --------------------------------------------------------------------------

    def _headers(self, accept: str) -> dict[str, str]:
        """Headers of a GET or DELETE (handshake era only)."""
        return session_headers(
            accept,
            static=self.headers,
            session_id=self.session_id,
            negotiated=self._session_version,
        )

    def _client(self) -> HttpClient:
        assert self._http is not None
        return self._http

    # -- requests -------------------------------------------------------------------------

    def _run_request(
        self,
        message: dict[str, Any],
        options: MessageOptions | None,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        remove_abort: Callable[[], None] | None,
        deadline: float | None = None,
    ) -> None:
        """Make one request and deliver its answer. With a ``deadline`` this runs on the
        caller's thread, which gets it back by then at the latest; an SSE answer is then read
        on a worker."""
        rest: Callable[[], None] | None = None
        try:
            rest = self._request(message, options, method, request_id, exchange, deadline)
        except Cancelled:
            pass
        except Exception as exc:
            self._request_failed(exc, method, request_id, exchange, deadline, waited=False)
        finally:
            if options is not None and options.begins_session:  # (see "Session renewal")
                self._renewal.answered(self.session_id)
            if rest is None:
                if remove_abort is not None:
                    remove_abort()
                self._forget(exchange)
        if rest is not None:
            self._workers.submit(
                lambda: self._run_rest(rest, method, request_id, exchange, remove_abort, deadline)
            )

    def _run_rest(
        self,
        rest: Callable[[], None],
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        remove_abort: Callable[[], None] | None,
        deadline: float | None,
    ) -> None:
        """On a worker: read the SSE answer of a request made on the caller's thread."""
        try:
            rest()
        except Cancelled:
            pass
        except Exception as exc:
            self._request_failed(exc, method, request_id, exchange, deadline)
        finally:
            if remove_abort is not None:
                remove_abort()
            self._forget(exchange)

    def _request_failed(
        self,
        exc: Exception,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        deadline: float | None,
        waited: bool = True,
    ) -> None:
        # A timeout is the session's to report, as is a failure past the deadline once it gave
        # up (``waited``). On the caller's thread it has not: it makes such a failure (a
        # sign-in the request's 401 started) the cause of the timeout.
        past = deadline is not None and time.monotonic() >= deadline
        late = (past and waited) or (not past and deadline is not None and is_timeout(exc))
        if not exchange.cancelled and not late:
            self._report(error_for_request(exc, request_id, f"{method} failed"))

    def _request(
        self,
        message: dict[str, Any],
        options: MessageOptions | None,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        deadline: float | None,
    ) -> Callable[[], None] | None:
        """POST a request and deliver its answer; with a ``deadline`` (on the caller's
        thread), return what is left to do for an SSE answer instead of reading it."""
        stateless = options is not None and options.standalone
        fresh = not stateless and options is not None and options.begins_session
        if fresh:
            self.session_id = None  # (re-)initializing: a new session
            self._renewal.begin(deadline)
        headers = self._post_headers(message, options)
        sent_session = SESSION_HEADER in headers
        if deadline is not None and deadline <= time.monotonic():
            return None  # (the session times the request out)
        try:
            response = self._client().open(
                "POST",
                self.url,
                headers,
                jsonrpc.encode(message),
                exchange,
                safe=options is not None and options.safe_to_resend,
                deadline=deadline,
                interactive=options is None or options.interactive_auth,
            )
        except NetworkError as exc:
            exc.request_id = request_id
            raise
        to_close: requests.Response | None = response
        try:
            if fresh or not (stateless or self._had_session):
                # (the first id is taken unasked too: a transport driven without options)
                self._take_session_id(response)
                self._renewal.answered(self.session_id)
            elif not (stateless or sent_session) and self._had_session:
                refused_without_session(response.status_code, self.url, request_id)
            resume = None
            if not stateless:
                resume = functools.partial(self._streams.resume, request_id, exchange)
            if deadline is None:
                self._delivery.answer(response, method, request_id, exchange, sent_session, resume)
                return None
            # On the caller's thread: what could wait past the answer (a stream the server
            # has not ended yet, a broken stream's resumption) is left to a worker.
            later: list[Callable[[], None]] = []

            def linger(response: requests.Response, stream: SseStream) -> None:
                if self._delivery.ends_now(response):
                    self._delivery.linger(response, stream)
                else:
                    later.append(lambda: self._delivery.linger(response, stream))

            def resume_later(last_event_id: str, retry: float | None, reason: str) -> None:
                if resume is not None:
                    later.append(lambda: resume(last_event_id, retry, reason))

            self._delivery.answer(
                response,
                method,
                request_id,
                exchange,
                sent_session,
                resume_later if resume is not None else None,
                linger,
            )
            if later:

                def rest() -> None:
                    with response:
                        later[0]()

                to_close = None  # (``rest`` closes it)
                return rest
        finally:
            if to_close is not None:
                to_close.close()
        return None

    def _take_session_id(self, response: requests.Response) -> None:
        value = response.headers.get("Mcp-Session-Id")
        if value is None:
            return
        if value and all(0x21 <= ord(ch) <= 0x7E for ch in value):
            self.session_id = value
            self._had_session = True
        else:
            logger.warning("ignoring an Mcp-Session-Id that is not visible ASCII")

    def _get(self, exchange: Exchange, last_event_id: str | None) -> tuple[requests.Response, bool]:
        """GET the session's stream (from ``last_event_id``); and whether it named the session."""
        headers = self._headers(SSE_TYPE)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        response = self._client().open("GET", self.url, headers, None, exchange)
        return response, SESSION_HEADER in headers

    # -- notifications and responses ------------------------------------------------------

    def _post_message(
        self,
        item: tuple[dict[str, Any], MessageOptions | None, AbortSignal | None, Any],
        advance: Callable[[], None],
    ) -> None:
        message, options, signal, waiter = item
        try:
            if self._wants_get_stream(options) and not self._closing:
                # Open the GET stream first: a server that has no event store sends what
                # follows the initialized notification (list_changed bursts, roots/list) on
                # that stream at once, and drops it if no stream is open yet.
                self._start_get_stream()
            if not self._closing and not (signal is not None and signal.aborted):
                self._post_one(message, options, signal, advance)
        finally:
            if waiter is not None:
                waiter.set()

    def _post_one(
        self,
        message: dict[str, Any],
        options: MessageOptions | None,
        signal: AbortSignal | None,
        advance: Callable[[], None],
    ) -> None:
        try:
            exchange = self._new_exchange()
        except ConnectionClosed:
            return
        exchange.on_written = advance
        remove_abort = signal.on_abort(exchange.on_abort) if signal is not None else None
        what = message.get("method") or "a response"
        try:
            headers = self._post_headers(message, options)
            sent_session = SESSION_HEADER in headers
            response = self._client().open(
                "POST",
                self.url,
                headers,
                jsonrpc.encode(message),
                exchange,
                read_timeout=ACK_TIMEOUT,
                interactive=options is None or options.interactive_auth,
            )
            with response:
                if 200 <= response.status_code < 300:
                    read_limited(response, ERROR_BODY_LIMIT)
                    return
                self._delivery.fail_status(response, None, exchange, sent_session)
        except Cancelled:
            pass
        except NetworkError as exc:
            if not exchange.cancelled:
                self._report(retold(exc, f"sending {what}: {exc}"))
        except McpError as exc:
            self._report(exc)
        except Exception as exc:  # an auth provider's failure, or a bug
            if not exchange.cancelled:
                error = TransportError(f"sending {what}: {exc}")
                error.__cause__ = exc
                self._report(error)
        finally:
            if remove_abort is not None:
                remove_abort()
            self._forget(exchange)

    # -- the GET stream -------------------------------------------------------------------

    def _start_get_stream(self) -> None:
        with self._state_lock:
            if self._closing or (self._reader is not None and self._reader.is_alive()):
                return  # (a new one is started after a re-initialization if the old one ended)
            self._streams.push_answered.clear()
            self._reader = threading.Thread(
                target=self._streams.run_push_stream,
                name=f"mcp-sync-{self.kind}-reader",
                daemon=True,
            )
            reader = self._reader
        reader.start()
        self._streams.push_answered.wait(self.connect_timeout)

    # -- closing --------------------------------------------------------------------------

    def _delete_session(self) -> None:
        session_id = self.session_id
        if not session_id or self._http is None:
            return  # (a stateless-era transport never had a session)
        exchange = Exchange()
        try:
            response = self._http.open(
                "DELETE",
                self.url,
                self._headers(JSON_TYPE),
                None,
                exchange,
                read_timeout=1.0,
                connect_timeout=1.0,
                auth_retry=False,
                last_token=True,  # never a token refresh at shutdown
            )
            response.close()
        except Exception as exc:
            logger.debug("DELETE of the session failed: %s", exc)
