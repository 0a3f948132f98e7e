"""Streamable HTTP: one endpoint, a POST per message (and, before 2026, a GET stream).

Eras
    In the handshake era (2025-03-26 .. 2025-11-25) the transport keeps the ``Mcp-Session-Id``
    the ``initialize`` response gave, sends it and ``MCP-Protocol-Version`` on every later
    request, opens the GET stream with the message whose options say ``opens_session`` and
    DELETEs the session on close. A message whose options carry a ``version`` (the stateless
    era, 2026-07-28) stands alone: its POST carries the headers of
    :func:`mcp_sync.protocol.headers.standard_headers` instead, and no session id; there is no
    GET stream, no resumption of a broken response stream and no DELETE. ``Mcp-Method`` /
    ``Mcp-Name`` go on every POST of both eras: a dual-era client's ``initialize`` is a POST
    too (the conformance suite checks it there), and servers of the handshake era ignore them
    (the official Python SDK routes on ``MCP-Protocol-Version``). A POST also carries the
    message's ``options.headers`` (the client's ``Mcp-Param-*`` headers), in both eras.
    A message sent without options (the older contract) gets the era from the negotiated
    version or its ``params._meta``, its extra headers from ``header_provider(message)``, and
    opens the GET stream if it is ``notifications/initialized``.

Threads
    ``send()`` never does network I/O on the caller's thread. A request is POSTed, and its
    response (JSON or an SSE stream) read, by a worker from a small pool of daemon threads
    (``mcp-sync-http-worker-N``; idle ones exit after a while), so a long tool call never holds up
    another. Notifications and responses go through one ordered lane on the same pool (one at a
    time, in ``send()`` order; see :class:`~mcp_sync.transports._http.workers.Lane`) and expect
    202. The server-push GET stream has its own thread, ``mcp-sync-http-reader``. It is opened
    (its response headers in) before ``notifications/initialized`` is POSTed: a server without
    an event store sends what follows that notification (``list_changed`` bursts, ``roots/list``)
    at once and drops it when no stream is open.

Releasing a blocked reader
    Every HTTP exchange can be cut short from another thread (see
    :mod:`mcp_sync.transports._http.exchange`). When the session aborts a request's ``signal``
    before the answer came, its exchange is shut down at once; after the answer, the reader is
    left ``_LINGER`` seconds to see the stream end so the connection goes back to the pool.
    ``close()`` shuts every exchange down and joins every thread.

Retries
    A POST is sent again only when it provably never reached the server (see "Retries" in
    :mod:`mcp_sync.transports._http.client`). The GET stream, and the resumption of a POST's
    SSE stream (GET with ``Last-Event-ID``), reconnect after network errors and HTTP 408, 429
    and 5xx, with the delay from ``Retry-After``, else the stream's ``retry`` field, else
    exponential backoff (:class:`ReconnectOptions`); errors of auth, session and protocol are
    reported, not retried. A stream that delivered events resets the budget, and so does a GET
    stream that stayed open longer than the reconnect delay (a proxy ending an idle stream is
    no failure). An event id that cannot be sent back as ``Last-Event-ID`` (not Latin-1) is
    reported and the GET stream reconnects without one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import requests

from ..abort import AbortSignal
from ..auth import AuthProvider
from ..backoff import Backoff
from ..errors import ConnectionClosed, HttpError, McpError, SessionExpired, TransportError
from ..protocol import jsonrpc, meta
from ..protocol.headers import PROTOCOL_VERSION_HEADER, standard_headers
from ..protocol.versions import era_of
from ._http.base import ACK_TIMEOUT, HttpTransportBase
from ._http.client import SAFE_TO_RESEND, HttpClient, describe_connection_error
from ._http.exchange import Cancelled, Exchange
from ._http.responses import (
    ERROR_BODY_LIMIT,
    JSON_TYPE,
    MIB,
    SSE_TYPE,
    TooLarge,
    body_reader,
    content_type,
    error_for_request,
    jsonrpc_error_in,
    parse_retry_after,
    read_limited,
    same_id,
)
from ._sse import EventTooLarge, SseStream
from .base import MessageOptions

__all__ = ["ReconnectOptions", "StreamableHttpTransport", "fallback_failed", "fallback_to_sse"]

logger = logging.getLogger("mcp_sync.transport.http")

_LINGER = 1.0
_RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))


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


class _Retry(Exception):
    """A stream could not be opened for a reason worth retrying."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


_Outcome = Literal["answered", "ended", "too_large"]


# -- the transport -------------------------------------------------------------------------------


class StreamableHttpTransport(HttpTransportBase):
    """The Streamable HTTP transport (protocol 2025-03-26 .. 2026-07-28), on ``requests``.

    ``session``: a ``requests.Session`` to use (its adapters, certificates, cookies); by default
    the transport makes a keep-alive one. With an injected session a request that is still
    waiting for response headers cannot be cut short (see the module docstring).
    ``auth``: an :class:`~mcp_sync.auth.AuthProvider` for bearer tokens.
    ``open_get_stream``: open the server-push GET stream after initialization.
    ``max_message_bytes``: largest JSON body or SSE event accepted.
    ``connect_timeout``: seconds to wait for a TCP (and TLS) connection.
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
    ) -> None:
        super().__init__(
            url,
            headers=headers,
            session=session,
            auth=auth,
            max_message_bytes=max_message_bytes,
            connect_timeout=connect_timeout,
            post=self._post_message,
        )
        self.open_get_stream = open_get_stream
        self.reconnect = reconnect if reconnect is not None else ReconnectOptions()
        self.session_id: str | None = None
        self._closing_event = threading.Event()
        self._get_answered = threading.Event()

    # -- the contract ---------------------------------------------------------------------

    def start(self) -> None:
        """Prepare the session. Nothing is sent until the first message (``initialize``)."""
        self._open_client()

    def send(
        self,
        message: dict[str, Any],
        signal: AbortSignal | None = None,
        *,
        options: MessageOptions | None = None,
    ) -> None:
        if self._closing:
            raise ConnectionClosed(f"HTTP transport to {self.url} is closed")
        if self._http is None:
            raise TransportError("call start() before send()")
        if signal is not None and signal.aborted:
            return
        method = message.get("method")
        request_id = message.get("id")
        if isinstance(method, str) and jsonrpc.is_request_id(request_id):
            exchange = self._new_exchange()
            remove = signal.on_abort(exchange.on_abort) if signal is not None else None
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
        if self._wants_get_stream(message, options):
            waiter = threading.Event()
        self._lane.put((message, options, signal, waiter))
        if waiter is not None:
            # Return once the GET stream is answered, so that a server request sent right after
            # initialization has a stream to arrive on.
            deadline = time.monotonic() + 2 * self.connect_timeout + 1.0
            while not waiter.wait(0.05):
                if self._closing or time.monotonic() > deadline:
                    break

    def close(self) -> None:
        exchanges = self._begin_closing()
        if exchanges is None:
            self._wait_closed()
            return
        self._closing_event.set()
        for exchange in exchanges:
            exchange.cancel()  # before the DELETE: no reader waits behind it
        self._delete_session()
        self._release(exchanges)
        self._closed_event.set()
        self._fire_close(None)

    # -- eras -----------------------------------------------------------------------------

    def _stateless_version(
        self, message: dict[str, Any] | None, options: MessageOptions | None = None
    ) -> str | None:
        """The stateless-era version ``message`` is sent with, or None in the handshake era."""
        if options is not None:
            return options.version
        # Without options (a caller of the older contract): the era the messages name.
        version = self.protocol_version
        if version is not None and era_of(version) == "stateless":
            return version
        params = message.get("params") if message is not None else None
        meta_map = params.get("_meta") if isinstance(params, dict) else None
        stated = meta_map.get(meta.PROTOCOL_VERSION) if isinstance(meta_map, dict) else None
        if isinstance(stated, str) and era_of(stated) == "stateless":
            return stated
        return None

    def _wants_get_stream(self, message: dict[str, Any], options: MessageOptions | None) -> bool:
        if not self.open_get_stream:
            return False
        if options is not None:
            return options.opens_session and options.version is None
        return (
            message.get("method") == "notifications/initialized"
            and self._stateless_version(message) is None
        )

    def _post_headers(
        self, message: dict[str, Any], stateless: str | None, options: MessageOptions | None
    ) -> dict[str, str]:
        """All headers of the POST of ``message``.

        Precedence, case-insensitively: the transport's ``headers``, then the message's own
        (``options.headers``; without options, the header provider's), then the protocol's
        own (``Accept``, ``Content-Type``, session, version, ``Mcp-Method`` / ``Mcp-Name``),
        which nothing overrides.
        """
        protocol = {"Accept": f"{JSON_TYPE}, {SSE_TYPE}", "Content-Type": JSON_TYPE}
        standard = standard_headers(message, stateless or "")
        if stateless is None:
            # Mcp-Method / Mcp-Name go on every POST; the version header keeps its old rules
            del standard[PROTOCOL_VERSION_HEADER]
            if message.get("method") != "initialize":
                if self.session_id:
                    protocol["Mcp-Session-Id"] = self.session_id
                if self.protocol_version:
                    protocol[PROTOCOL_VERSION_HEADER] = self.protocol_version
        protocol.update(standard)
        headers = dict(self.headers)
        if options is not None:
            _merge(headers, options.headers)
        elif self.header_provider is not None:
            _merge(headers, self.header_provider(message))
        return _merge(headers, protocol)

    # -- helpers --------------------------------------------------------------------------

    def _headers(self, accept: str) -> dict[str, str]:
        """Headers of a GET or DELETE (handshake era only)."""
        protocol = {"Accept": accept}
        if self.session_id:
            protocol["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            protocol["MCP-Protocol-Version"] = self.protocol_version
        return _merge(dict(self.headers), protocol)

    def _client(self) -> HttpClient:
        assert self._http is not None
        return self._http

    def _describe(self, exc: BaseException) -> str:
        return describe_connection_error(exc, self.url, self.connect_timeout)

    # -- requests -------------------------------------------------------------------------

    def _run_request(
        self,
        message: dict[str, Any],
        options: MessageOptions | None,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        remove_abort: Callable[[], None] | None,
    ) -> None:
        try:
            self._request(message, options, method, request_id, exchange)
        except Cancelled:
            pass
        except Exception as exc:
            if not exchange.cancelled:
                self._report(error_for_request(exc, request_id, f"{method} failed"))
        finally:
            if remove_abort is not None:
                remove_abort()
            self._forget(exchange)

    def _request(
        self,
        message: dict[str, Any],
        options: MessageOptions | None,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
    ) -> None:
        stateless = self._stateless_version(message, options)
        fresh = stateless is None and method == "initialize"
        if fresh:
            self.session_id = None  # (re-)initializing: a new session
        headers = self._post_headers(message, stateless, options)
        sent_session = "Mcp-Session-Id" in headers
        try:
            response = self._client().open(
                "POST",
                self.url,
                headers,
                jsonrpc.encode(message),
                exchange,
                safe=method in SAFE_TO_RESEND,
            )
        except requests.RequestException as exc:
            raise TransportError(self._describe(exc), request_id=request_id) from exc
        try:
            if fresh:
                self._take_session_id(response)
            self._handle_response(
                response, method, request_id, exchange, sent_session, resumable=stateless is None
            )
        finally:
            response.close()

    def _take_session_id(self, response: requests.Response) -> None:
        value = response.headers.get("Mcp-Session-Id")
        if value is None:
            return
        if value and all(0x21 <= ord(ch) <= 0x7E for ch in value):
            self.session_id = value
        else:
            logger.warning("ignoring an Mcp-Session-Id that is not visible ASCII")

    def _handle_response(
        self,
        response: requests.Response,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        sent_session: bool,
        *,
        resumable: bool,
    ) -> None:
        status = response.status_code
        if not 200 <= status < 300:
            self._fail_status(response, request_id, exchange, sent_session)
            return
        ctype = content_type(response)
        if status in (202, 204) or not ctype:
            raise TransportError(
                f"the server answered the {method} request with HTTP {status} and no response",
                request_id=request_id,
            )
        if ctype == JSON_TYPE:
            try:
                body = read_limited(response, self.max_message_bytes, strict=True)
            except TooLarge:
                raise self._too_large(request_id) from None
            except Exception as exc:
                raise TransportError(
                    f"reading the response to {method} failed: {exc}", request_id=request_id
                ) from exc
            exchange.release()
            try:
                payload = jsonrpc.decode(body)
            except McpError as exc:
                raise TransportError(str(exc), request_id=request_id) from None
            if not self._deliver_payload(payload, request_id, exchange):
                raise TransportError(
                    f"the JSON response to {method} does not answer it", request_id=request_id
                )
        elif ctype == SSE_TYPE:
            self._read_response_stream(response, request_id, exchange, resumable)
        else:
            raise TransportError(
                f"unexpected Content-Type {ctype!r} in the response to {method}",
                request_id=request_id,
            )

    def _fail_status(
        self,
        response: requests.Response,
        request_id: jsonrpc.RequestId | None,
        exchange: Exchange,
        sent_session: bool,
        *,
        deliver: bool = True,
    ) -> None:
        """Raise the error for a non-2xx response, or deliver its JSON-RPC error body."""
        status = response.status_code
        body = exchange.body_prefix
        if body is None:
            body = read_limited(response, ERROR_BODY_LIMIT)
        text = body.decode("utf-8", "replace")
        if status == 404 and sent_session:
            raise SessionExpired(
                f"the server at {self.url} no longer knows the session (HTTP 404)",
                request_id=request_id,
            )
        error = jsonrpc_error_in(text, request_id)
        if deliver and error is not None and request_id is not None:
            self._deliver_payload(error, request_id, exchange)
            return
        raise HttpError(
            status,
            text,
            message=f"HTTP {status} {response.reason or ''} from {self.url}".rstrip(),
            request_id=request_id,
            headers=dict(response.headers),
        )

    def _too_large(self, request_id: jsonrpc.RequestId | None) -> TransportError:
        return TransportError(
            f"a message from {self.url} is larger than max_message_bytes "
            f"({self.max_message_bytes} bytes)",
            request_id=request_id,
        )

    def _deliver_payload(
        self, payload: Any, request_id: jsonrpc.RequestId | None, exchange: Exchange
    ) -> bool:
        """Deliver one decoded body; True if it answers ``request_id``."""
        answered = False
        items = payload if isinstance(payload, list) else [payload]
        for index, item in enumerate(items):
            if not isinstance(item, dict) or not ("result" in item or "error" in item):
                continue
            msg_id = item.get("id")
            if msg_id is None and "error" in item and request_id is not None:
                item = {**item, "id": request_id}  # an id-less error answers this POST
                if isinstance(payload, list):
                    payload[index] = item
                else:
                    payload = item
                msg_id = request_id
            if request_id is not None and same_id(msg_id, request_id):
                answered = True
        if answered:
            exchange.answered = True
        self._deliver(payload)
        return answered

    def _pump(
        self, stream: SseStream, request_id: jsonrpc.RequestId | None, exchange: Exchange
    ) -> tuple[_Outcome, str]:
        """Deliver a stream's messages until it ends or (with ``request_id``) answers."""
        try:
            for item in stream:
                if isinstance(item, EventTooLarge):
                    if request_id is not None:
                        return "too_large", ""
                    self._report(self._too_large(None))
                    continue
                if item.event != "message" or not item.data:
                    continue  # priming events and other event types
                try:
                    payload = jsonrpc.decode(item.data)
                except McpError as exc:
                    if request_id is not None:
                        raise TransportError(str(exc), request_id=request_id) from None
                    self._report(exc)
                    continue
                if self._deliver_payload(payload, request_id, exchange):
                    return "answered", ""
        except McpError:
            raise
        except Exception as exc:
            return "ended", f"reading it failed ({exc!r})"
        return "ended", "the server ended it before the response"

    def _read_response_stream(
        self,
        response: requests.Response,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        resumable: bool,
    ) -> None:
        stream = SseStream(body_reader(response), self.max_message_bytes)
        outcome, reason = self._pump(stream, request_id, exchange)
        if outcome == "answered":
            self._linger(response, stream, exchange)
            return
        if exchange.cancelled:
            return
        if outcome == "too_large":
            raise self._too_large(request_id)
        response.close()
        if stream.last_event_id is None or not resumable:
            # (2026-07-28 has no resumption: the request is lost; the client may re-issue it)
            raise TransportError(f"response stream failed: {reason}", request_id=request_id)
        if not _sendable_as_header(stream.last_event_id):
            raise TransportError(
                f"response stream failed: {reason}; its last event id "
                f"({stream.last_event_id!r}) cannot be sent back as Last-Event-ID to resume it",
                request_id=request_id,
            )
        self._resume(request_id, exchange, stream.last_event_id, stream.retry, reason)

    def _linger(self, response: requests.Response, stream: SseStream, exchange: Exchange) -> None:
        """After the answer, give the server a moment to end the stream: the connection is then
        reused. Anything still arriving is delivered."""
        conn = getattr(response.raw, "_connection", None)
        if conn is None:
            return  # the body already ended and the connection went back to the pool
        sock = getattr(conn, "sock", None)
        if sock is None:
            return  # the response closes the connection: nothing to keep
        try:
            sock.settimeout(_LINGER)
            for item in stream:
                if not isinstance(item, EventTooLarge) and item.event == "message" and item.data:
                    self._deliver(jsonrpc.decode(item.data))
        except Exception:
            pass

    def _resume(
        self,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        last_event_id: str,
        server_retry: float | None,
        reason: str,
    ) -> None:
        """Resume a POST's stream with GET + ``Last-Event-ID`` until the answer comes."""
        policy = self.reconnect
        attempts = 0
        wait = policy.delay(1, server_retry=server_retry)
        while True:
            if exchange.wake.wait(wait) or self._closing:
                return
            try:
                response = self._open_stream(exchange, last_event_id, request_id)
            except _Retry as exc:
                attempts += 1
                if attempts > policy.max_retries:
                    raise TransportError(
                        f"response stream failed: {reason}; resuming it failed "
                        f"{attempts} times, last: {exc}",
                        request_id=request_id,
                    ) from None
                wait = policy.delay(
                    attempts, retry_after=exc.retry_after, server_retry=server_retry
                )
                continue
            if response is None:
                raise TransportError(
                    f"response stream failed: {reason}; the server does not allow resuming it",
                    request_id=request_id,
                )
            with response:
                stream = SseStream(body_reader(response), self.max_message_bytes, last_event_id)
                outcome, reason = self._pump(stream, request_id, exchange)
            if outcome == "answered" or exchange.cancelled:
                return
            if outcome == "too_large":
                raise self._too_large(request_id)
            last_event_id = stream.last_event_id or last_event_id
            if not _sendable_as_header(last_event_id):
                raise TransportError(
                    f"response stream failed: {reason}; its last event id "
                    f"({last_event_id!r}) cannot be sent back as Last-Event-ID",
                    request_id=request_id,
                )
            server_retry = stream.retry if stream.retry is not None else server_retry
            attempts = 0 if stream.events_seen else attempts + 1
            if attempts > policy.max_retries:
                raise TransportError(
                    f"response stream failed: {reason} ({attempts} times)", request_id=request_id
                )
            wait = policy.delay(max(attempts, 1), server_retry=server_retry)

    def _open_stream(
        self,
        exchange: Exchange,
        last_event_id: str | None,
        request_id: jsonrpc.RequestId | None,
    ) -> requests.Response | None:
        """GET an SSE stream: the response, or None if the server has none (405)."""
        headers = self._headers(SSE_TYPE)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        sent_session = "Mcp-Session-Id" in headers
        try:
            response = self._client().open("GET", self.url, headers, None, exchange)
        except requests.RequestException as exc:
            raise _Retry(self._describe(exc)) from exc
        status = response.status_code
        if 200 <= status < 300 and content_type(response) == SSE_TYPE:
            return response
        with response:
            if status == 405:
                return None
            if status in _RETRY_STATUSES:
                raise _Retry(f"HTTP {status}", parse_retry_after(response))
            if 200 <= status < 300:
                raise TransportError(
                    f"the GET stream of {self.url} answered {content_type(response)!r}, "
                    "not an event stream",
                    request_id=request_id,
                )
            self._fail_status(response, request_id, exchange, sent_session, deliver=False)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- notifications and responses ------------------------------------------------------

    def _post_message(
        self,
        item: tuple[dict[str, Any], MessageOptions | None, AbortSignal | None, Any],
        advance: Callable[[], None],
    ) -> None:
        message, options, signal, waiter = item
        try:
            if self._wants_get_stream(message, options) and not self._closing:
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
            headers = self._post_headers(
                message, self._stateless_version(message, options), options
            )
            sent_session = "Mcp-Session-Id" in headers
            response = self._client().open(
                "POST",
                self.url,
                headers,
                jsonrpc.encode(message),
                exchange,
                read_timeout=ACK_TIMEOUT,
            )
            with response:
                if 200 <= response.status_code < 300:
                    read_limited(response, ERROR_BODY_LIMIT)
                    return
                self._fail_status(response, None, exchange, sent_session)
        except Cancelled:
            pass
        except McpError as exc:
            self._report(exc)
        except requests.RequestException as exc:
            if not exchange.cancelled:
                self._report(TransportError(f"sending {what}: {self._describe(exc)}"))
        except Exception as exc:  # a failing header provider
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
            self._get_answered.clear()
            self._reader = threading.Thread(
                target=self._run_get_stream, name=f"mcp-sync-{self.kind}-reader", daemon=True
            )
            reader = self._reader
        reader.start()
        self._get_answered.wait(self.connect_timeout)

    def _run_get_stream(self) -> None:
        try:
            self._get_loop()
        except Exception:
            logger.exception("HTTP transport: GET stream failed")
        finally:
            self._get_answered.set()

    def _get_loop(self) -> None:
        policy = self.reconnect
        attempts = 0
        last_event_id: str | None = None
        server_retry: float | None = None
        while not self._closing:
            retry_after = None
            if last_event_id is not None and not _sendable_as_header(last_event_id):
                self._report(
                    TransportError(
                        f"the GET stream of {self.url} gave an event id that cannot be sent "
                        f"back as Last-Event-ID ({last_event_id!r}); reconnecting without it"
                    )
                )
                last_event_id = None
            try:
                exchange = self._new_exchange()
            except ConnectionClosed:
                return
            try:
                try:
                    response = self._open_stream(exchange, last_event_id, None)
                except _Retry as exc:
                    failure = str(exc)
                    retry_after = exc.retry_after
                else:
                    self._get_answered.set()
                    if response is None:
                        logger.debug("%s has no GET stream (HTTP 405)", self.url)
                        return
                    opened = time.monotonic()
                    with response:
                        stream = SseStream(
                            body_reader(response), self.max_message_bytes, last_event_id
                        )
                        _, failure = self._pump(stream, None, exchange)
                    last_event_id = stream.last_event_id
                    if stream.retry is not None:
                        server_retry = stream.retry
                    # A stream that delivered events, or lived longer than the wait before the
                    # next attempt (proxies end idle streams), worked: a new budget.
                    lived = time.monotonic() - opened
                    if stream.events_seen or lived > policy.delay(
                        attempts + 1, server_retry=server_retry
                    ):
                        attempts = 0
            except (Cancelled, ConnectionClosed):
                return
            except McpError as exc:
                if not self._closing:
                    self._report(exc)
                return
            except Exception as exc:  # an auth provider's failure, or a bug: report, go on
                if self._closing:
                    return
                failure = f"opening it failed ({exc!r})"
                error = TransportError(f"the GET stream of {self.url}: {failure}")
                error.__cause__ = exc
                self._report(error)
            finally:
                self._get_answered.set()
                self._forget(exchange)
            if self._closing:
                return
            attempts += 1
            if attempts > policy.max_retries:
                self._report(
                    TransportError(
                        f"the GET stream of {self.url} failed {attempts} times in a row; "
                        f"giving up (last: {failure})"
                    )
                )
                return
            wait = policy.delay(attempts, retry_after=retry_after, server_retry=server_retry)
            logger.debug("GET stream: %s; reconnecting in %.2f s", failure, wait)
            if self._closing_event.wait(wait):
                return

    # -- closing --------------------------------------------------------------------------

    def _delete_session(self) -> None:
        session_id = self.session_id
        if not session_id or self._http is None or self._stateless_version(None) is not None:
            return
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


def _sendable_as_header(value: str) -> bool:
    """True if ``value`` can go out as an HTTP header value as it is (Latin-1, no control
    characters, no surrounding whitespace): an SSE id may be any text, a header may not."""
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return value == value.strip() and all(ch >= " " and ch != "\x7f" for ch in value)


def _merge(headers: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``headers`` updated with ``extra``, a name in any letter case replacing the old one."""
    for name, value in extra.items():
        lower = name.lower()
        for old in [key for key in headers if key.lower() == lower]:
            del headers[old]
        headers[name] = value
    return headers
