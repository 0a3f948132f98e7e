"""HTTP plumbing shared by the Streamable HTTP and legacy HTTP+SSE transports.

What is here: a ``requests`` client with settings resolved once and bearer auth
(:class:`HttpClient`), the cancellable :class:`Exchange` and the tracking adapter that lets
another thread end one, a small elastic worker pool (:class:`Workers`), an in-order lane on it
(:class:`Lane`), and helpers for bodies, content types and errors. Nothing here knows MCP
beyond JSON-RPC error bodies.

Releasing a blocked reader
    ``Response.close()`` from another thread does not wake a thread blocked in ``recv``, so every
    HTTP exchange has an :class:`Exchange` that can shut the connection's socket down
    (``SHUT_RDWR``), which does. The client's own ``requests.Session`` mounts an adapter whose
    urllib3 connections register themselves with the exchange of the thread using them, so even
    a request still waiting for response headers can be released; with an injected session the
    socket is found through the response once its headers are in. The exchange keeps the socket
    itself, not only the connection: ``http.client`` drops the connection's reference to it when
    the response will close the connection (``Connection: close``, HTTP/1.0), and the body is
    then read from that socket alone.

Retries (never a call twice)
    A POST is not idempotent (RFC 9110 section 9.2.2): a tool call may charge a card. When a
    reused keep-alive connection fails (reset, broken pipe, closed before any answer), the
    request is sent again, once, on a fresh connection only if it provably never reached the
    server (the failure came before the request was completely written), or if its semantics
    are safe whatever the method (:data:`SAFE_TO_RESEND`: a GET, a DELETE, an MCP request that
    only reads, like ``tools/list``). Anything else fails. To make that rare, a pooled
    connection is not reused once it was idle for as long as the server said it keeps one
    (``Keep-Alive: timeout=N``, less a second), and urllib3 replaces one the server already
    closed; a server closing an idle connection at the moment it is reused is what is left.

Ordered lane
    Notifications and responses go out one at a time in ``send()`` order, each once the previous
    one was answered, or, if that answer is late, :data:`LANE_STALL` seconds after it was
    written: a server that never acknowledges one must not hold up the others. Every lane POST
    is bounded: a request's by its abort signal (the session aborts it on timeout), any other
    by :data:`ACK_TIMEOUT`.

Environment proxy and TLS settings are resolved once when the client is made and passed
explicitly, and an owned session has ``trust_env`` off, so no request reads the environment
again. urllib3 sets ``TCP_NODELAY``, so the header and body writes of a POST do not wait on Nagle.
"""

from __future__ import annotations

import email.utils
import functools
import http.client
import logging
import re
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .._causes import causes_of
from ..auth import AuthProvider, UnauthorizedContext, parse_www_authenticate
from ..errors import ConnectionClosed, McpError, TransportError
from ..protocol import jsonrpc
from .base import Transport

__all__ = [
    "ACK_TIMEOUT",
    "ERROR_BODY_LIMIT",
    "JOIN_TIMEOUT",
    "JSON_TYPE",
    "LANE_STALL",
    "MIB",
    "SAFE_TO_RESEND",
    "SSE_TYPE",
    "Cancelled",
    "Exchange",
    "HttpClient",
    "HttpTransportBase",
    "Lane",
    "TooLarge",
    "Workers",
    "body_reader",
    "content_type",
    "describe_connection_error",
    "error_for_request",
    "jsonrpc_error_in",
    "parse_retry_after",
    "read_limited",
    "same_id",
]

logger = logging.getLogger("mcp_sync.transport.http")

MIB = 1024 * 1024
ERROR_BODY_LIMIT = 8 * 1024
_READ_SIZE = 64 * 1024
JOIN_TIMEOUT = 5.0
#: Seconds a server has to acknowledge (HTTP 202) a notification or a response POST.
ACK_TIMEOUT = 30.0
#: Seconds an unanswered lane POST holds up the messages behind it.
LANE_STALL = 1.0
#: MCP requests that only read: sending one twice changes nothing on the server.
SAFE_TO_RESEND = frozenset({
    "server/discover", "ping", "tools/list", "prompts/list", "prompts/get", "resources/list",
    "resources/templates/list", "resources/read", "completion/complete", "skills/list",
    "tasks/get", "tasks/list", "tasks/result",
})
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


# -- cutting an HTTP exchange short ------------------------------------------------------------

_local = threading.local()
_KEEP_ALIVE_TIMEOUT = re.compile(r"\btimeout\s*=\s*(\d+)", re.IGNORECASE)


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


class Cancelled(Exception):
    """The exchange was cancelled (signal aborted, or the transport closing)."""


class Exchange:
    """One HTTP exchange (request, response, maybe a long body) that another thread may end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self.answered = False
        #: Set on cancel: waits between reconnects use it to stop early.
        self.wake = threading.Event()
        self.reused: bool | None = None
        #: The request was completely written (so it may have reached the server).
        self.written = False
        self.body_prefix: bytes | None = None
        #: Called (once per attempt) when the request was completely written.
        self.on_written: Callable[[], None] | None = None
        self._conn: Any = None
        self._sock: Any = None
        self._response: requests.Response | None = None

    def begin(self) -> None:
        with self._lock:
            self._conn = None
            self._sock = None
            self._response = None
            self.reused = None
            self.written = False
            self.body_prefix = None

    def attach_conn(self, conn: Any, reused: bool | None) -> None:
        with self._lock:
            self._conn = conn
            self._sock = getattr(conn, "sock", None) or self._sock
            if reused is not None:
                self.reused = reused
            cancelled = self.cancelled
        if cancelled:
            _shutdown_socket(getattr(conn, "sock", None))

    def mark_written(self, sock: Any) -> None:
        with self._lock:
            self.written = True
            self._sock = sock or self._sock
            cancelled = self.cancelled
        if cancelled:
            _shutdown_socket(sock)
        if self.on_written is not None:
            self.on_written()

    def attach_response(self, response: requests.Response) -> None:
        with self._lock:
            self._response = response
            if self._conn is None:  # an injected session's adapter: find it through the response
                self._conn = getattr(response.raw, "_connection", None)
            if self._sock is None:
                self._sock = _response_socket(response)
            sock, cancelled = self._sock, self.cancelled
        if cancelled:
            _shutdown_socket(sock)

    def socket(self) -> Any:
        """The socket this exchange reads from (None before it has one)."""
        return self._sock

    def note_keep_alive(self, header: str) -> None:
        """Remember on the connection how long the server keeps it idle (``timeout=N``)."""
        conn = self._conn
        match = _KEEP_ALIVE_TIMEOUT.search(header)
        if conn is not None and match is not None:
            conn._mcp_sync_keep_alive = max(int(match.group(1)) - 1.0, 0.0)

    def on_abort(self, _reason: object) -> None:
        """The request's signal fired: stop reading unless the answer is already in."""
        if not self.answered:
            self.cancel()

    def cancel(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.cancelled = True
            conn, sock, response = self._conn, self._sock, self._response
        self.wake.set()
        if response is not None and getattr(response.raw, "_connection", conn) is None:
            return  # the body was read to its end: the connection is back in the pool
        # (the connection's own socket if it still has one; else the one the body is read from,
        # which http.client took from a connection that will close)
        _shutdown_socket(getattr(conn, "sock", None) or sock)

    def release(self) -> None:
        with self._lock:
            self._conn = None
            self._sock = None
            self._response = None


def _response_socket(response: requests.Response) -> Any:
    """The socket a response's body is read from (found through an injected adapter's
    connection, or through ``http.client``'s file object when the connection let go of it)."""
    conn = getattr(response.raw, "_connection", None)
    sock = getattr(conn, "sock", None)
    if sock is not None:
        return sock
    fp = getattr(getattr(response.raw, "_fp", None), "fp", None)  # a BufferedReader
    return getattr(getattr(fp, "raw", None), "_sock", None)  # of a socket.SocketIO


def _track(conn: Any, reused: bool | None) -> None:
    exchange: Exchange | None = getattr(_local, "exchange", None)
    if exchange is not None:
        if exchange.cancelled:
            raise ConnectionAbortedError("request cancelled")
        exchange.attach_conn(conn, reused)


def _drop_if_stale(conn: Any) -> None:
    """Close a pooled connection idle for longer than the server said it keeps one (its
    ``Keep-Alive: timeout=N``, less a second): the server may be closing it right now, and a
    request written into that race cannot be sent again (see "Retries")."""
    limit = getattr(conn, "_mcp_sync_keep_alive", None)
    if (
        limit is not None
        and conn.sock is not None
        and time.monotonic() - conn._mcp_sync_sent_at > limit
    ):
        conn.close()


def _track_request(conn: Any) -> None:
    _drop_if_stale(conn)
    sock = conn.sock
    reused = sock is not None and getattr(conn, "_mcp_sync_sock", None) is sock
    _track(conn, reused)


def _track_sent(conn: Any) -> None:
    conn._mcp_sync_sock = conn.sock
    conn._mcp_sync_sent_at = time.monotonic()  # (idle since, at the latest)
    exchange: Exchange | None = getattr(_local, "exchange", None)
    if exchange is not None:
        exchange.mark_written(conn.sock)


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


class Workers:
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


class Lane:
    """Starts items one at a time, in order, on a worker (for messages that must not overtake).

    ``handle(item, advance)`` sends one item and calls ``advance()`` once it is on the wire.
    The next item starts when this one is done, or, if it was written but is still unanswered
    after ``stall`` seconds, without it (on another worker): a stuck item holds up the others
    only that long. The handler still owes each item a deadline.
    """

    def __init__(
        self,
        workers: Workers,
        handle: Callable[[Any, Callable[[], None]], None],
        stall: float = LANE_STALL,
    ) -> None:
        self._workers = workers
        self._handle = handle
        self._stall = stall
        self._items: deque[Any] = deque()
        self._lock = threading.Lock()
        self._running = False
        #: Set when the latest item started is done (a new drain waits for it, up to ``stall``).
        self._latest_done: threading.Event | None = None

    def put(self, item: Any) -> None:
        with self._lock:
            self._items.append(item)
            if self._running:
                return
            self._running = True
            after = self._latest_done
        try:
            self._workers.submit(lambda: self._drain(after))
        except BaseException:
            with self._lock:
                self._running = False
                self._items.clear()
            raise

    def _drain(self, after: threading.Event | None) -> None:
        if after is not None:
            after.wait(self._stall)
        while True:
            with self._lock:
                if not self._items:
                    self._running = False
                    return
                item = self._items.popleft()
                done = self._latest_done = threading.Event()
            handed_over = False

            def advance(done: threading.Event = done) -> None:
                # On the wire: the lane goes on without this thread (after ``stall``, unless
                # this item is done by then); this thread waits for the answer.
                nonlocal handed_over
                with self._lock:
                    if handed_over:
                        return
                    handed_over = True
                    if not self._items:
                        self._running = False  # the next put() starts a drain
                        return
                try:
                    self._workers.submit(functools.partial(self._drain, done))
                except ConnectionClosed:
                    with self._lock:
                        self._running = False
                        self._items.clear()

            try:
                self._handle(item, advance)
            except Exception:
                logger.exception("HTTP transport: sending a message failed")
            finally:
                done.set()
            with self._lock:
                if handed_over:
                    return
                handed_over = True


# -- the HTTP client --------------- ---------------------------------------


class HttpClient:
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
        if auth is not None:
            auth.bind(url)  # a provider bound to another server refuses before any request
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
        #: The auth headers of the latest request (reused by ``last_token`` requests).
        self._last_auth: dict[str, str] = {}
        self._auth_generation = 0
        self._auth_refusals = 0

    def open(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        exchange: Exchange,
        *,
        read_timeout: float | None = None,
        connect_timeout: float | None = None,
        auth_retry: bool = True,
        last_token: bool = False,
        safe: bool = False,
    ) -> requests.Response:
        """Send one request on this thread and return the response with its body unread.

        ``last_token``: send the auth headers the latest request carried instead of asking the
        auth provider (which might start a refresh), e.g. for the DELETE at close. ``safe``:
        the request may be sent twice (see "Retries" above); GET and DELETE always may.
        Raises ``requests`` exceptions for network failures, :class:`Cancelled` if the exchange
        was cancelled, and whatever ``AuthProvider.on_unauthorized`` raises.
        """
        reset_retried = False
        # one retry per kind of challenge: a 401, then a 403 step-up, and a DPoP nonce
        challenges_left = {"401", "403", "nonce"} if auth_retry and self.auth else set()
        redirects = 0
        while True:
            if exchange.cancelled:
                raise Cancelled
            generation, refusals = self._auth_generation, self._auth_refusals
            if last_token or self.auth is None:
                auth_headers = self._last_auth
            else:
                auth_headers = self._last_auth = self.auth.authorization(method, url)
            token = auth_headers.get("Authorization", "").partition(" ")[2] or None
            sent = {**headers, **auth_headers}
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
                    allow_redirects=False,
                    **self._send_kwargs,
                )
            except requests.RequestException as exc:
                if exchange.cancelled:
                    raise Cancelled from exc
                if (
                    not reset_retried
                    # (see "Retries" above: never a call twice)
                    and (not exchange.written or safe or method in ("GET", "DELETE"))
                    and exchange.reused is not False
                    and _is_reset(exc)
                ):
                    logger.debug("%s %s: reused connection reset; sending it again on a fresh "
                                 "one", method, url)
                    reset_retried = True
                    continue
                raise
            finally:
                _local.exchange = None
            exchange.attach_response(response)
            if exchange.cancelled:
                response.close()
                raise Cancelled
            keep_alive = response.headers.get("Keep-Alive")
            if keep_alive is not None:
                exchange.note_keep_alive(keep_alive)
            target = _same_origin_redirect(response, url)
            if target is not None and redirects < _MAX_REDIRECTS:
                # Followed by hand: requests would resend our own headers (API keys, session
                # ids) to another origin and turn a 301/302/303 POST into a GET. Any other
                # redirect is returned, and fails as an HTTP error naming its status.
                redirects += 1
                response.close()
                url = target
                continue
            challenge = _auth_challenge(response)
            if challenge in challenges_left:
                challenges_left.discard(challenge)
                body_prefix = read_limited(response, ERROR_BODY_LIMIT)
                response.close()
                ctx = UnauthorizedContext(
                    status=response.status_code,
                    headers=response.headers,
                    www_authenticate=response.headers.get("WWW-Authenticate"),
                    url=self.url,
                    session=self.session,
                    token=token,
                    body=body_prefix.decode("utf-8", "replace"),
                    method=method,
                    cancelled=exchange.wake,
                )
                if self._on_unauthorized(ctx, generation, refusals):
                    continue
                exchange.body_prefix = body_prefix
            return response

    def _on_unauthorized(self, ctx: UnauthorizedContext, generation: int, refusals: int) -> bool:
        assert self.auth is not None
        with self._auth_lock:  # concurrent rejections: one provider call, the others wait
            if self._auth_generation != generation:
                return True  # someone got a new token since this request was sent
            if self._auth_refusals != refusals:
                # refused while this request was in flight: share that answer. A request sent
                # later asks again, so a failure during an outage is not permanent.
                return False
            try:
                retry = self.auth.on_unauthorized(ctx)
            except BaseException:
                if not ctx.cancelled.is_set():  # an abort is that request's, not a refusal
                    self._auth_refusals += 1
                raise
            if retry:
                self._auth_generation += 1
            else:
                self._auth_refusals += 1
            return retry

    def close(self) -> None:
        if self.owns_session:
            # urllib3 2's PoolManager.clear() leaves the pools' sockets to the garbage collector,
            # and an exception whose traceback reaches a pool (a failed connect()) keeps them
            # open for as long as the caller keeps the exception: close them now.
            for adapter in set(self.session.adapters.values()):
                managers = [getattr(adapter, "poolmanager", None)]
                managers += list(getattr(adapter, "proxy_manager", {}).values())
                for manager in managers:
                    pools: Any = getattr(manager, "pools", None)
                    for key in list(pools.keys()) if pools is not None else ():
                        pool = pools.get(key)
                        if pool is not None:
                            pool.close()
            self.session.close()


_MAX_REDIRECTS = 5


def _same_origin_redirect(response: requests.Response, url: str) -> str | None:
    """The target of a 307/308 redirect to the same origin (scheme, host, port), else None."""
    if response.status_code not in (307, 308):
        return None
    location = response.headers.get("Location")
    if not location:
        return None
    target = urljoin(url, location)
    old, new = urlsplit(url), urlsplit(target)
    if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port):
        return None
    return target


def _auth_challenge(response: requests.Response) -> str | None:
    """"401", "403" (insufficient_scope), "nonce" (a DPoP ``use_dpop_nonce``) or None."""
    if response.status_code not in (401, 403):
        return None
    error = parse_www_authenticate(response.headers.get("WWW-Authenticate")).get("error")
    if error == "use_dpop_nonce":
        return "nonce"
    if response.status_code == 401:
        return "401"
    return "403" if error == "insufficient_scope" else None


def _is_reset(exc: BaseException) -> bool:
    reset = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)
    return any(isinstance(c, reset) for c in causes_of(exc))


def describe_connection_error(exc: BaseException, url: str, connect_timeout: float) -> str:
    """A one-line explanation of a failed HTTP exchange, naming the URL (never a token)."""
    causes = list(causes_of(exc))
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


def content_type(response: requests.Response) -> str:
    return response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()


def body_reader(response: requests.Response) -> Callable[[], bytes]:
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


class TooLarge(Exception):
    pass


def read_limited(response: requests.Response, limit: int, *, strict: bool = False) -> bytes:
    """At most ``limit`` bytes of the body (raise :class:`TooLarge` if ``strict`` and longer)."""
    length = response.headers.get("Content-Length", "")
    if strict and length.isdigit() and int(length) > limit:
        raise TooLarge
    read = body_reader(response)
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
            raise TooLarge
        del data[limit:]
    return bytes(data)


def parse_retry_after(response: requests.Response) -> float | None:
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


def same_id(a: object, b: object) -> bool:
    return jsonrpc.is_request_id(a) and type(a) is type(b) and a == b


def jsonrpc_error_in(text: str, request_id: jsonrpc.RequestId | None) -> dict[str, Any] | None:
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
    if msg_id is None or (request_id is not None and same_id(msg_id, request_id)):
        return value
    return None


def error_for_request(exc: Exception, request_id: jsonrpc.RequestId, what: str) -> Exception:
    """``exc`` tagged with the request it fails (an auth provider's own error keeps its type)."""
    if isinstance(exc, McpError):
        if getattr(exc, "request_id", None) is None:
            exc.request_id = request_id  # type: ignore[attr-defined]
        return exc
    error = TransportError(f"{what}: {exc}", request_id=request_id)
    error.__cause__ = exc
    return error


# -- what both HTTP transports are made of --------------------------------------------


class HttpTransportBase(Transport):
    """What the Streamable HTTP and HTTP+SSE transports share: the URL and settings, the HTTP
    client, the worker pool with its in-order lane for outgoing messages, and the live
    exchanges that ``close()`` cancels."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None,
        session: requests.Session | None,
        auth: AuthProvider | None,
        max_message_bytes: int,
        connect_timeout: float,
        post: Callable[[Any, Callable[[], None]], None],
    ) -> None:
        super().__init__()
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.max_message_bytes = max_message_bytes
        self.connect_timeout = connect_timeout
        self._session = session
        self._auth = auth
        self._http: HttpClient | None = None
        self._workers = Workers(f"mcp-sync-{self.kind}-worker")
        #: Outgoing messages, POSTed one at a time in ``send()`` order by ``post``.
        self._lane = Lane(self._workers, post)
        self._state_lock = threading.Lock()
        self._exchanges: set[Exchange] = set()
        self._closing = False
        self._closed_event = threading.Event()
        self._reader: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"

    def _open_client(self) -> None:
        """Make the HTTP client (once: a transport starts once)."""
        if self._http is not None:
            raise RuntimeError("transport already started")
        self._http = HttpClient(
            self.url, session=self._session, auth=self._auth, connect_timeout=self.connect_timeout
        )

    def _is_own_thread(self) -> bool:
        return threading.current_thread().name.startswith(f"mcp-sync-{self.kind}-")

    def _new_exchange(self) -> Exchange:
        exchange = Exchange()
        with self._state_lock:
            if self._closing:
                raise ConnectionClosed(f"{self.kind.upper()} transport to {self.url} is closed")
            self._exchanges.add(exchange)
        return exchange

    def _forget(self, exchange: Exchange) -> None:
        exchange.release()
        with self._state_lock:
            self._exchanges.discard(exchange)

    def _begin_closing(self) -> list[Exchange] | None:
        """Mark the transport closing; the live exchanges, or None if it already was."""
        with self._state_lock:
            if self._closing:
                return None
            self._closing = True
            return list(self._exchanges)

    def _wait_closed(self) -> None:
        """For a second ``close()``: wait for the first one (unless called from our threads)."""
        if not self._is_own_thread():
            self._closed_event.wait(JOIN_TIMEOUT)

    def _release(self, exchanges: list[Exchange]) -> None:
        """Cancel the exchanges, stop the workers, join the reader, close the HTTP client."""
        for exchange in exchanges:
            exchange.cancel()
        self._workers.shutdown(JOIN_TIMEOUT)
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(JOIN_TIMEOUT)
        if self._http is not None:
            self._http.close()
