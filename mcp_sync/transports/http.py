"""Streamable HTTP (2025-03-26 .. 2025-11-25): one endpoint, a POST per message, a GET stream.

Threads
    ``send()`` never does network I/O on the caller's thread. A request is POSTed, and its
    response (JSON or an SSE stream) read, by a worker from a small pool of daemon threads
    (``mcp-sync-http-worker-N``; idle ones exit after a while), so a long tool call never holds up
    another. Notifications and responses go through one ordered lane on the same pool (one at a
    time, in ``send()`` order) and expect 202. The server-push GET stream, opened after
    ``notifications/initialized`` was POSTed, has its own thread, ``mcp-sync-http-reader``.

Releasing a blocked reader
    ``Response.close()`` from another thread does not wake a thread blocked in ``recv``, so every
    HTTP exchange has an :class:`_Exchange` that can shut the connection's socket down
    (``SHUT_RDWR``), which does. The transport's own ``requests.Session`` mounts an adapter whose
    urllib3 connections register themselves with the exchange of the thread using them, so even
    a request still waiting for response headers can be released; with an injected session the
    socket is found through the response once its headers are in. When the session aborts a
    request's ``signal`` before the answer came, its exchange is shut down at once; after the
    answer, the reader is left ``_LINGER`` seconds to see the stream end so the connection goes
    back to the pool. ``close()`` shuts every exchange down and joins every thread.

Retries
    A POST that fails with a connection reset (or the server closing an idle keep-alive
    connection) on a reused connection is sent once more on a fresh one. The GET stream, and the
    resumption of a POST's SSE stream (GET with ``Last-Event-ID``), reconnect after network errors
    and HTTP 408, 429 and 5xx, with the delay from ``Retry-After``, else the stream's ``retry``
    field, else exponential backoff (:class:`ReconnectOptions`); errors of auth, session and
    protocol are reported, not retried. A stream that delivered events resets the budget.

Environment proxy and TLS settings are resolved once in ``start()`` and passed explicitly, and
the transport's own session has ``trust_env`` off, so no request reads the environment again.
urllib3 sets ``TCP_NODELAY``, so the header and body writes of a POST do not wait on Nagle.
"""

from __future__ import annotations

import email.utils
import http.client
import logging
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from ..abort import AbortSignal
from ..auth import AuthProvider, UnauthorizedContext, parse_www_authenticate
from ..errors import ConnectionClosed, HttpError, McpError, SessionExpired, TransportError
from ..protocol import jsonrpc
from ._sse import EventTooLarge, SseStream
from .base import Transport

__all__ = ["ReconnectOptions", "StreamableHttpTransport", "fallback_to_sse"]

logger = logging.getLogger("mcp_sync.transport.http")

MIB = 1024 * 1024
_ERROR_BODY_LIMIT = 8 * 1024
_READ_SIZE = 64 * 1024
_LINGER = 1.0
_JOIN_TIMEOUT = 5.0
_RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
_JSON = "application/json"
_SSE = "text/event-stream"


@dataclass(frozen=True)
class ReconnectOptions:
    """How SSE streams reconnect: exponential backoff from ``initial_delay`` (seconds), doubled
    per failed attempt, capped at ``max_delay``, giving up after ``max_retries`` failures in a
    row. A server's ``Retry-After`` or SSE ``retry`` replaces the computed delay (still capped)."""

    initial_delay: float = 1.0
    max_delay: float = 30.0
    max_retries: int = 5

    def __post_init__(self) -> None:
        if self.initial_delay < 0 or self.max_delay < 0 or self.max_retries < 0:
            raise ValueError("ReconnectOptions values must not be negative")

    def delay(
        self,
        attempt: int,
        *,
        retry_after: float | None = None,
        server_retry: float | None = None,
    ) -> float:
        """Seconds to wait before reconnect number ``attempt`` (1 after the first failure)."""
        if retry_after is not None:
            wait = retry_after
        elif server_retry is not None:
            wait = server_retry
        else:
            wait = self.initial_delay * (2 ** max(attempt - 1, 0))
        return min(max(wait, 0.0), self.max_delay)


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
    return _jsonrpc_error(error.body, None) is None


# -- cutting an HTTP exchange short ------------------------------------------------------------

_local = threading.local()


def _shutdown_socket(sock: Any) -> None:
    if sock is None:
        return
    try:
        if isinstance(sock, socket.socket):
            # The plain socket's shutdown: on an SSLSocket this leaves the TLS object alone.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        else:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, AttributeError):
        pass


class _Cancelled(Exception):
    """The exchange was cancelled (signal aborted, or the transport closing)."""


class _Exchange:
    """One HTTP exchange (request, response, maybe a long body) that another thread may end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self.answered = False
        #: Set on cancel: waits between reconnects use it to stop early.
        self.wake = threading.Event()
        self.reused: bool | None = None
        self.body_prefix: bytes | None = None
        self._conn: Any = None
        self._response: requests.Response | None = None

    def begin(self) -> None:
        with self._lock:
            self._conn = None
            self._response = None
            self.reused = None
            self.body_prefix = None

    def attach_conn(self, conn: Any, reused: bool | None) -> None:
        with self._lock:
            self._conn = conn
            if reused is not None:
                self.reused = reused
            cancelled = self.cancelled
        if cancelled:
            _shutdown_socket(getattr(conn, "sock", None))

    def attach_response(self, response: requests.Response) -> None:
        with self._lock:
            self._response = response
            if self._conn is None:  # an injected session's adapter: find it through the response
                self._conn = getattr(response.raw, "_connection", None)
            conn, cancelled = self._conn, self.cancelled
        if cancelled and conn is not None:
            _shutdown_socket(getattr(conn, "sock", None))

    def socket(self) -> Any:
        conn = self._conn
        return getattr(conn, "sock", None) if conn is not None else None

    def on_abort(self, _reason: object) -> None:
        """The request's signal fired: stop reading unless the answer is already in."""
        if not self.answered:
            self.cancel()

    def cancel(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.cancelled = True
            conn, response = self._conn, self._response
        self.wake.set()
        if conn is None:
            return
        if response is not None and getattr(response.raw, "_connection", conn) is None:
            return  # the body was read to its end: the connection is back in the pool
        _shutdown_socket(getattr(conn, "sock", None))

    def release(self) -> None:
        with self._lock:
            self._conn = None
            self._response = None


def _track(conn: Any, reused: bool | None) -> None:
    exchange: _Exchange | None = getattr(_local, "exchange", None)
    if exchange is not None:
        if exchange.cancelled:
            raise ConnectionAbortedError("request cancelled")
        exchange.attach_conn(conn, reused)


def _track_request(conn: Any) -> None:
    sock = conn.sock
    reused = sock is not None and getattr(conn, "_mcp_sync_sock", None) is sock
    _track(conn, reused)


def _track_sent(conn: Any) -> None:
    conn._mcp_sync_sock = conn.sock


class _TrackedHTTPConnection(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _track(self, None)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _track_request(self)
        super().request(*args, **kwargs)
        _track_sent(self)


class _TrackedHTTPSConnection(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _track(self, None)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _track_request(self)
        super().request(*args, **kwargs)
        _track_sent(self)


class _TrackedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _TrackedHTTPConnection


class _TrackedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


_TRACKED_POOLS = {"http": _TrackedHTTPPool, "https": _TrackedHTTPSPool}


class _TrackingAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections tell the current thread's exchange who they are."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_TRACKED_POOLS)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_TRACKED_POOLS)
        return manager


# -- worker threads ------------------------------------------------------------------------------


class _Workers:
    """A small elastic thread pool: a task never waits for a busy worker; idle ones exit."""

    def __init__(self, prefix: str, idle_timeout: float = 30.0) -> None:
        self._prefix = prefix
        self._idle_timeout = idle_timeout
        self._tasks: deque[Callable[[], None] | None] = deque()
        self._cond = threading.Condition()
        self._idle = 0
        self._threads: set[threading.Thread] = set()
        self._count = 0
        self._stopped = False

    def submit(self, task: Callable[[], None]) -> None:
        with self._cond:
            if self._stopped:
                raise ConnectionClosed("the transport is closed")
            self._tasks.append(task)
            if self._idle > len(self._tasks) - 1:
                self._cond.notify()
                return
            self._count += 1
            thread = threading.Thread(
                target=self._run, name=f"{self._prefix}-{self._count}", daemon=True
            )
            self._threads.add(thread)
        thread.start()

    def _run(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                deadline = time.monotonic() + self._idle_timeout
                while not self._tasks and not self._stopped:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._idle += 1
                    self._cond.wait(left)
                    self._idle -= 1
                if not self._tasks:
                    self._threads.discard(me)
                    return
                task = self._tasks.popleft()
            if task is None:
                continue
            try:
                task()
            except Exception:
                logger.exception("HTTP transport worker failed")

    def shutdown(self, timeout: float) -> None:
        with self._cond:
            self._stopped = True
            threads = list(self._threads)
            self._cond.notify_all()
        me = threading.current_thread()
        deadline = time.monotonic() + timeout
        for thread in threads:
            if thread is not me:
                thread.join(max(deadline - time.monotonic(), 0.0))
                if thread.is_alive():
                    logger.warning("%s did not stop within %g s", thread.name, timeout)


class _Lane:
    """Handles items one at a time, in order, on a worker (for messages that must not overtake)."""

    def __init__(self, workers: _Workers, handle: Callable[[Any], None]) -> None:
        self._workers = workers
        self._handle = handle
        self._items: deque[Any] = deque()
        self._lock = threading.Lock()
        self._running = False

    def put(self, item: Any) -> None:
        with self._lock:
            self._items.append(item)
            if self._running:
                return
            self._running = True
        try:
            self._workers.submit(self._drain)
        except BaseException:
            with self._lock:
                self._running = False
                self._items.clear()
            raise

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._items:
                    self._running = False
                    return
                item = self._items.popleft()
            try:
                self._handle(item)
            except Exception:
                logger.exception("HTTP transport: sending a message failed")


# -- HTTP plumbing shared with the legacy SSE transport ---------------------------------------


class _HttpClient:
    """A ``requests`` session with settings resolved once, auth, and cancellable exchanges."""

    def __init__(
        self,
        url: str,
        *,
        session: requests.Session | None,
        auth: AuthProvider | None,
        connect_timeout: float,
    ) -> None:
        self.url = url
        self.auth = auth
        self.connect_timeout = connect_timeout
        self.owns_session = session is None
        if session is None:
            session = requests.Session()
            adapter = _TrackingAdapter(pool_connections=4, pool_maxsize=32)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
        self.session = session
        # Proxies, CA bundle and client cert from the environment, resolved once (no per-request
        # environment or netrc lookups on the hot path).
        settings = session.merge_environment_settings(url, {}, None, None, None)
        if self.owns_session:
            session.trust_env = False
        self._send_kwargs: dict[str, Any] = {
            "proxies": settings.get("proxies") or {},
            "verify": settings.get("verify", True),
            "cert": settings.get("cert"),
        }
        self._auth_lock = threading.Lock()
        self._auth_generation = 0
        self._auth_refused_generation = -1

    def open(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        exchange: _Exchange,
        *,
        read_timeout: float | None = None,
        connect_timeout: float | None = None,
        auth_retry: bool = True,
    ) -> requests.Response:
        """Send one request on this thread and return the response with its body unread.

        Raises ``requests`` exceptions for network failures, :class:`_Cancelled` if the exchange
        was cancelled, and whatever ``AuthProvider.on_unauthorized`` raises.
        """
        reset_retried = False
        auth_retried = not auth_retry or self.auth is None
        while True:
            if exchange.cancelled:
                raise _Cancelled
            generation = self._auth_generation
            token = self.auth.token() if self.auth is not None else None
            sent = dict(headers)
            if token:
                sent["Authorization"] = f"Bearer {token}"
            prepared = self.session.prepare_request(
                requests.Request(method, url, headers=sent, data=body)
            )
            exchange.begin()
            _local.exchange = exchange
            try:
                response = self.session.send(
                    prepared,
                    stream=True,
                    timeout=(connect_timeout or self.connect_timeout, read_timeout),
                    **self._send_kwargs,
                )
            except requests.RequestException as exc:
                if exchange.cancelled:
                    raise _Cancelled from exc
                if not reset_retried and exchange.reused is not False and _is_reset(exc):
                    logger.debug("%s %s: connection reset; retrying on a fresh one", method, url)
                    reset_retried = True
                    continue
                raise
            finally:
                _local.exchange = None
            exchange.attach_response(response)
            if exchange.cancelled:
                response.close()
                raise _Cancelled
            if not auth_retried and _is_auth_challenge(response):
                auth_retried = True
                body_prefix = _read_limited(response, _ERROR_BODY_LIMIT)
                response.close()
                ctx = UnauthorizedContext(
                    status=response.status_code,
                    headers=response.headers,
                    www_authenticate=response.headers.get("WWW-Authenticate"),
                    url=self.url,
                    session=self.session,
                    token=token,
                    body=body_prefix.decode("utf-8", "replace"),
                )
                if self._on_unauthorized(ctx, generation):
                    continue
                exchange.body_prefix = body_prefix
            return response

    def _on_unauthorized(self, ctx: UnauthorizedContext, generation: int) -> bool:
        assert self.auth is not None
        with self._auth_lock:  # concurrent rejections: one provider call, the others wait
            if self._auth_generation != generation:
                return True  # someone got a new token since this request was sent
            if self._auth_refused_generation == generation:
                return False
            try:
                retry = self.auth.on_unauthorized(ctx)
            except BaseException:
                self._auth_refused_generation = generation
                raise
            if retry:
                self._auth_generation += 1
            else:
                self._auth_refused_generation = generation
            return retry

    def close(self) -> None:
        if self.owns_session:
            self.session.close()


def _is_auth_challenge(response: requests.Response) -> bool:
    if response.status_code == 401:
        return True
    if response.status_code == 403:
        params = parse_www_authenticate(response.headers.get("WWW-Authenticate"))
        return params.get("error") == "insufficient_scope"
    return False


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend(a for a in item.args if isinstance(a, BaseException))
        for attr in ("reason", "__cause__", "__context__"):
            nested = getattr(item, attr, None)
            if isinstance(nested, BaseException):
                todo.append(nested)


def _is_reset(exc: BaseException) -> bool:
    reset = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)
    return any(isinstance(c, reset) for c in _causes(exc))


def describe_connection_error(exc: BaseException, url: str, connect_timeout: float) -> str:
    """A one-line explanation of a failed HTTP exchange, naming the URL (never a token)."""
    causes = list(_causes(exc))
    if any(isinstance(c, requests.ConnectTimeout) for c in causes) or any(
        type(c).__name__ == "ConnectTimeoutError" for c in causes
    ):
        return f"connecting to {url} timed out after {connect_timeout:g} s"
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return f"cannot connect to {url}: connection refused"
    if any(isinstance(c, socket.gaierror) for c in causes):
        host = urlsplit(url).hostname
        return f"cannot connect to {url}: cannot resolve host {host!r}"
    for c in causes:
        if isinstance(c, ssl.SSLError):
            return f"TLS error talking to {url}: {c}"
    if _is_reset(exc):
        return f"the connection to {url} was reset"
    return f"HTTP request to {url} failed: {exc}"


def _content_type(response: requests.Response) -> str:
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


def _reader(response: requests.Response) -> Callable[[], bytes]:
    """A function returning the body's next available bytes (b"" at the end), decoded."""
    raw = response.raw
    read1 = getattr(raw, "read1", None)
    if read1 is None:  # urllib3 1.x
        fp: Any = getattr(raw, "_fp", None)

        def read_fp() -> bytes:
            data: bytes = fp.read1(_READ_SIZE)
            return data

        return read_fp

    def read() -> bytes:
        data: bytes = read1(_READ_SIZE, decode_content=True)
        return data

    return read


class _TooLarge(Exception):
    pass


def _read_limited(response: requests.Response, limit: int, *, strict: bool = False) -> bytes:
    """At most ``limit`` bytes of the body (raise :class:`_TooLarge` if ``strict`` and longer)."""
    length = response.headers.get("Content-Length", "")
    if strict and length.isdigit() and int(length) > limit:
        raise _TooLarge
    read = _reader(response)
    data = bytearray()
    try:
        while len(data) <= limit:
            chunk = read()
            if not chunk:
                break
            data += chunk
    except Exception:
        if strict:
            raise
    if len(data) > limit:
        if strict:
            raise _TooLarge
        del data[limit:]
    return bytes(data)


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _same_id(a: object, b: object) -> bool:
    return jsonrpc.is_request_id(a) and type(a) is type(b) and a == b


def _jsonrpc_error(text: str, request_id: jsonrpc.RequestId | None) -> dict[str, Any] | None:
    """The JSON-RPC error object in an HTTP error body, if it is one for us (or id-less)."""
    if not text or "error" not in text:
        return None
    try:
        value = jsonrpc.decode(text)
    except McpError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
        return None
    if "code" not in value["error"]:
        return None
    msg_id = value.get("id")
    if msg_id is None or (request_id is not None and _same_id(msg_id, request_id)):
        return value
    return None


def _for_request(exc: Exception, request_id: jsonrpc.RequestId, what: str) -> Exception:
    """``exc`` tagged with the request it fails (an auth provider's own error keeps its type)."""
    if isinstance(exc, McpError):
        if getattr(exc, "request_id", None) is None:
            exc.request_id = request_id  # type: ignore[attr-defined]
        return exc
    error = TransportError(f"{what}: {exc}", request_id=request_id)
    error.__cause__ = exc
    return error


class _Retry(Exception):
    """A stream could not be opened for a reason worth retrying."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


_Outcome = Literal["answered", "ended", "too_large"]


# -- the transport -------------------------------------------------------------------------------


class StreamableHttpTransport(Transport):
    """The Streamable HTTP transport (protocol 2025-03-26 .. 2025-11-25), on ``requests``.

    ``session``: a ``requests.Session`` to use (its adapters, certificates, cookies); by default
    the transport makes a keep-alive one. With an injected session a request that is still
    waiting for response headers cannot be cut short (see the module docstring).
    ``auth``: an :class:`~mcp_sync.auth.AuthProvider` for bearer tokens.
    ``open_get_stream``: open the server-push GET stream after initialization.
    ``max_message_bytes``: largest JSON body or SSE event accepted.
    ``connect_timeout``: seconds to wait for a TCP (and TLS) connection.
    """

    kind = "http"

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
        super().__init__()
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.open_get_stream = open_get_stream
        self.max_message_bytes = max_message_bytes
        self.reconnect = reconnect if reconnect is not None else ReconnectOptions()
        self.connect_timeout = connect_timeout
        self.session_id: str | None = None
        self._session = session
        self._auth = auth
        self._http: _HttpClient | None = None
        self._workers = _Workers(f"mcp-sync-{self.kind}-worker")
        self._lane = _Lane(self._workers, self._post_message)
        self._state_lock = threading.Lock()
        self._exchanges: set[_Exchange] = set()
        self._closing = False
        self._closing_event = threading.Event()
        self._closed_event = threading.Event()
        self._reader: threading.Thread | None = None
        self._get_answered = threading.Event()

    def __repr__(self) -> str:
        return f"<StreamableHttpTransport {self.url}>"

    # -- the contract ---------------------------------------------------------------------

    def start(self) -> None:
        """Prepare the session. Nothing is sent until the first message (``initialize``)."""
        if self._http is not None:
            raise RuntimeError("transport already started")
        self._http = _HttpClient(
            self.url, session=self._session, auth=self._auth, connect_timeout=self.connect_timeout
        )

    def send(self, message: dict[str, Any], signal: AbortSignal | None = None) -> None:
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
                    lambda: self._run_request(message, method, request_id, exchange, remove)
                )
            except BaseException:
                self._forget(exchange)
                raise
            return
        waiter = None
        if method == "notifications/initialized" and self.open_get_stream:
            waiter = threading.Event()
        self._lane.put((message, signal, waiter))
        if waiter is not None:
            # Return once the GET stream is answered, so that a server request sent right after
            # initialization has a stream to arrive on.
            deadline = time.monotonic() + 2 * self.connect_timeout + 1.0
            while not waiter.wait(0.05):
                if self._closing or time.monotonic() > deadline:
                    break

    def close(self) -> None:
        with self._state_lock:
            first = not self._closing
            self._closing = True
            exchanges = list(self._exchanges)
        if not first:
            if not self._is_own_thread():
                self._closed_event.wait(_JOIN_TIMEOUT)
            return
        self._closing_event.set()
        for exchange in exchanges:
            exchange.cancel()
        self._delete_session()
        self._workers.shutdown(_JOIN_TIMEOUT)
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(_JOIN_TIMEOUT)
        if self._http is not None:
            self._http.close()
        self._closed_event.set()
        self._fire_close(None)

    # -- 2026-07-28 room ------------------------------------------------------------------

    def _message_headers(self, message: dict[str, Any]) -> dict[str, str]:
        """Per-message headers; the place for 2026-07-28 ``Mcp-Method`` / ``Mcp-Name``."""
        return {}

    # -- helpers --------------------------------------------------------------------------

    def _is_own_thread(self) -> bool:
        name = threading.current_thread().name
        return name.startswith(f"mcp-sync-{self.kind}-")

    def _new_exchange(self) -> _Exchange:
        exchange = _Exchange()
        with self._state_lock:
            if self._closing:
                raise ConnectionClosed(f"HTTP transport to {self.url} is closed")
            self._exchanges.add(exchange)
        return exchange

    def _forget(self, exchange: _Exchange) -> None:
        exchange.release()
        with self._state_lock:
            self._exchanges.discard(exchange)

    def _headers(self, accept: str, *, fresh: bool = False) -> dict[str, str]:
        headers = dict(self.headers)
        headers["Accept"] = accept
        if not fresh:
            if self.session_id:
                headers["Mcp-Session-Id"] = self.session_id
            if self.protocol_version:
                headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _client(self) -> _HttpClient:
        assert self._http is not None
        return self._http

    def _describe(self, exc: BaseException) -> str:
        return describe_connection_error(exc, self.url, self.connect_timeout)

    # -- requests -------------------------------------------------------------------------

    def _run_request(
        self,
        message: dict[str, Any],
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: _Exchange,
        remove_abort: Callable[[], None] | None,
    ) -> None:
        try:
            self._request(message, method, request_id, exchange)
        except _Cancelled:
            pass
        except Exception as exc:
            if not exchange.cancelled:
                self._report(_for_request(exc, request_id, f"{method} failed"))
        finally:
            if remove_abort is not None:
                remove_abort()
            self._forget(exchange)

    def _request(
        self,
        message: dict[str, Any],
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: _Exchange,
    ) -> None:
        fresh = method == "initialize"
        if fresh:
            self.session_id = None  # (re-)initializing: a new session
        headers = self._headers(f"{_JSON}, {_SSE}", fresh=fresh)
        headers["Content-Type"] = _JSON
        headers.update(self._message_headers(message))
        sent_session = "Mcp-Session-Id" in headers
        try:
            response = self._client().open(
                "POST", self.url, headers, jsonrpc.encode(message), exchange
            )
        except requests.RequestException as exc:
            raise TransportError(self._describe(exc), request_id=request_id) from exc
        try:
            if fresh:
                self._take_session_id(response)
            self._handle_response(response, method, request_id, exchange, sent_session)
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
        exchange: _Exchange,
        sent_session: bool,
    ) -> None:
        status = response.status_code
        if not 200 <= status < 300:
            self._fail_status(response, request_id, exchange, sent_session)
            return
        ctype = _content_type(response)
        if status in (202, 204) or not ctype:
            raise TransportError(
                f"the server answered the {method} request with HTTP {status} and no response",
                request_id=request_id,
            )
        if ctype == _JSON:
            try:
                body = _read_limited(response, self.max_message_bytes, strict=True)
            except _TooLarge:
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
        elif ctype == _SSE:
            self._read_response_stream(response, request_id, exchange)
        else:
            raise TransportError(
                f"unexpected Content-Type {ctype!r} in the response to {method}",
                request_id=request_id,
            )

    def _fail_status(
        self,
        response: requests.Response,
        request_id: jsonrpc.RequestId | None,
        exchange: _Exchange,
        sent_session: bool,
        *,
        deliver: bool = True,
    ) -> None:
        """Raise the error for a non-2xx response, or deliver its JSON-RPC error body."""
        status = response.status_code
        body = exchange.body_prefix
        if body is None:
            body = _read_limited(response, _ERROR_BODY_LIMIT)
        text = body.decode("utf-8", "replace")
        if status == 404 and sent_session:
            raise SessionExpired(
                f"the server at {self.url} no longer knows the session (HTTP 404)",
                request_id=request_id,
            )
        error = _jsonrpc_error(text, request_id)
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
        self, payload: Any, request_id: jsonrpc.RequestId | None, exchange: _Exchange
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
            if request_id is not None and _same_id(msg_id, request_id):
                answered = True
        if answered:
            exchange.answered = True
        self._deliver(payload)
        return answered

    def _pump(
        self, stream: SseStream, request_id: jsonrpc.RequestId | None, exchange: _Exchange
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
        self, response: requests.Response, request_id: jsonrpc.RequestId, exchange: _Exchange
    ) -> None:
        stream = SseStream(_reader(response), self.max_message_bytes)
        outcome, reason = self._pump(stream, request_id, exchange)
        if outcome == "answered":
            self._linger(response, stream, exchange)
            return
        if exchange.cancelled:
            return
        if outcome == "too_large":
            raise self._too_large(request_id)
        response.close()
        if stream.last_event_id is None:
            raise TransportError(f"response stream failed: {reason}", request_id=request_id)
        self._resume(request_id, exchange, stream.last_event_id, stream.retry, reason)

    def _linger(
        self, response: requests.Response, stream: SseStream, exchange: _Exchange
    ) -> None:
        """After the answer, give the server a moment to end the stream: the connection is then
        reused. Anything still arriving is delivered."""
        if getattr(response.raw, "_connection", None) is None:
            return  # the body already ended and the connection went back to the pool
        sock = exchange.socket()
        if sock is None:
            return
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
        exchange: _Exchange,
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
                stream = SseStream(_reader(response), self.max_message_bytes, last_event_id)
                outcome, reason = self._pump(stream, request_id, exchange)
            if outcome == "answered" or exchange.cancelled:
                return
            if outcome == "too_large":
                raise self._too_large(request_id)
            last_event_id = stream.last_event_id or last_event_id
            server_retry = stream.retry if stream.retry is not None else server_retry
            attempts = 0 if stream.events_seen else attempts + 1
            if attempts > policy.max_retries:
                raise TransportError(
                    f"response stream failed: {reason} ({attempts} times)", request_id=request_id
                )
            wait = policy.delay(max(attempts, 1), server_retry=server_retry)

    def _open_stream(
        self,
        exchange: _Exchange,
        last_event_id: str | None,
        request_id: jsonrpc.RequestId | None,
    ) -> requests.Response | None:
        """GET an SSE stream: the response, or None if the server has none (405)."""
        headers = self._headers(_SSE)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        sent_session = "Mcp-Session-Id" in headers
        try:
            response = self._client().open("GET", self.url, headers, None, exchange)
        except requests.RequestException as exc:
            raise _Retry(self._describe(exc)) from exc
        status = response.status_code
        if 200 <= status < 300 and _content_type(response) == _SSE:
            return response
        with response:
            if status == 405:
                return None
            if status in _RETRY_STATUSES:
                raise _Retry(f"HTTP {status}", _retry_after(response))
            if 200 <= status < 300:
                raise TransportError(
                    f"the GET stream of {self.url} answered {_content_type(response)!r}, "
                    "not an event stream",
                    request_id=request_id,
                )
            self._fail_status(response, request_id, exchange, sent_session, deliver=False)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- notifications and responses ------------------------------------------------------

    def _post_message(self, item: tuple[dict[str, Any], AbortSignal | None, Any]) -> None:
        message, signal, waiter = item
        try:
            if not self._closing and not (signal is not None and signal.aborted):
                self._post_one(message)
        finally:
            initialized = message.get("method") == "notifications/initialized"
            if initialized and self.open_get_stream and not self._closing:
                self._start_get_stream()
            if waiter is not None:
                waiter.set()

    def _post_one(self, message: dict[str, Any]) -> None:
        try:
            exchange = self._new_exchange()
        except ConnectionClosed:
            return
        headers = self._headers(f"{_JSON}, {_SSE}")
        headers["Content-Type"] = _JSON
        headers.update(self._message_headers(message))
        sent_session = "Mcp-Session-Id" in headers
        what = message.get("method") or "a response"
        try:
            response = self._client().open(
                "POST", self.url, headers, jsonrpc.encode(message), exchange
            )
            with response:
                if 200 <= response.status_code < 300:
                    _read_limited(response, _ERROR_BODY_LIMIT)
                    return
                self._fail_status(response, None, exchange, sent_session)
        except _Cancelled:
            pass
        except McpError as exc:
            self._report(exc)
        except requests.RequestException as exc:
            if not exchange.cancelled:
                self._report(TransportError(f"sending {what}: {self._describe(exc)}"))
        finally:
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
                    with response:
                        stream = SseStream(_reader(response), self.max_message_bytes, last_event_id)
                        _, failure = self._pump(stream, None, exchange)
                    last_event_id = stream.last_event_id
                    if stream.retry is not None:
                        server_retry = stream.retry
                    if stream.events_seen:
                        attempts = 0
            except (_Cancelled, ConnectionClosed):
                return
            except McpError as exc:
                if not self._closing:
                    self._report(exc)
                return
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
        if not session_id or self._http is None:
            return
        exchange = _Exchange()
        try:
            response = self._http.open(
                "DELETE",
                self.url,
                self._headers(_JSON),
                None,
                exchange,
                read_timeout=1.0,
                connect_timeout=1.0,
                auth_retry=False,
            )
            response.close()
        except Exception as exc:
            logger.debug("DELETE of the session failed: %s", exc)
