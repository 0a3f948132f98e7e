"""An HTTP exchange that another thread can cut short, and the socket tracking behind it.

``Response.close()`` from another thread does not wake a thread blocked in ``recv``, so every
HTTP exchange has an :class:`Exchange` that can shut the connection's socket down
(``SHUT_RDWR``), which does. The client's own ``requests.Session`` mounts
:class:`TrackingAdapter`, whose urllib3 connections register themselves with the exchange of
the thread using them (:func:`use_exchange`), so even a request still waiting for response
headers can be released; with an injected session the socket is found through the response
once its headers are in. The exchange keeps the socket itself, not only the connection:
``http.client`` drops the connection's reference to it when the response will close the
connection (``Connection: close``, HTTP/1.0), and the body is then read from that socket alone.

The tracking connections also remember when they were last used and how long their peer keeps
them idle (``Keep-Alive: timeout=N``; a forwarding proxy that does not say it keeps them: not
at all), so that a connection the peer may be closing right now is not reused (see "Retries"
in :mod:`mcp_sync.transports._http.client`).
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = ["Cancelled", "Exchange", "TrackingAdapter", "use_exchange"]

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

    def note_keep_alive(self, headers: Mapping[str, str]) -> None:
        """Remember on the connection how long its peer keeps it idle: what the server said
        (``Keep-Alive: timeout=N``, less a second), or not at all for a forwarding proxy (a
        plain ``http://`` request through a proxy) that did not say it keeps connections
        (tinyproxy closes each after its answer, unannounced)."""
        conn = self._conn
        if conn is None:
            return
        match = _KEEP_ALIVE_TIMEOUT.search(headers.get("Keep-Alive", ""))
        if match is not None:
            conn._mcp_sync_keep_alive = max(int(match.group(1)) - 1.0, 0.0)
        elif getattr(conn, "proxy_is_forwarding", False) and not any(
            "keep-alive" in headers.get(name, "").lower()
            for name in ("Connection", "Proxy-Connection")
        ):
            conn._mcp_sync_keep_alive = 0.0

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


def use_exchange(exchange: Exchange | None) -> None:
    """Make ``exchange`` the one the tracking connections used by this thread report to."""
    _local.exchange = exchange


def _track(conn: Any, reused: bool | None) -> None:
    exchange: Exchange | None = getattr(_local, "exchange", None)
    if exchange is not None:
        if exchange.cancelled:
            raise ConnectionAbortedError("request cancelled")
        exchange.attach_conn(conn, reused)


def _drop_if_stale(conn: Any) -> None:
    """Close a pooled connection idle for as long as its peer keeps one (see
    :meth:`Exchange.note_keep_alive`): the peer may be closing it right now, and a request
    written into that race cannot be sent again (see "Retries" in :mod:`.client`)."""
    limit = getattr(conn, "_mcp_sync_keep_alive", None)
    if (
        limit is not None
        and conn.sock is not None
        and time.monotonic() - conn._mcp_sync_sent_at >= limit
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


#: A body up to this size goes out in one write with the request head.
_COALESCE_LIMIT = 64 * 1024


class _OneWrite:
    """Tracks a connection's requests, and writes a request's head and its (small) body with
    one ``send``.

    urllib3 writes the head, then the body: two segments, and on a local server two wake-ups
    of the server for one request (``http.client`` joins them when it is given the body).
    The head is held back until the body's write, then both go out together.
    """

    _mcp_sync_hold = False
    _mcp_sync_head: bytes | None = None

    def send(self, data: Any) -> None:
        head = self._mcp_sync_head
        if head is not None:
            self._mcp_sync_head = None
            data = head + data
        elif self._mcp_sync_hold and isinstance(data, bytes):
            self._mcp_sync_hold = False  # (the first write of a request is its head)
            self._mcp_sync_head = data
            return
        super().send(data)  # type: ignore[misc]

    def request(self, method: str, url: str, body: Any = None, *args: Any, **kwargs: Any) -> None:
        _track_request(self)
        self._mcp_sync_hold = isinstance(body, bytes) and 0 < len(body) <= _COALESCE_LIMIT
        try:
            super().request(method, url, body, *args, **kwargs)  # type: ignore[misc]
        finally:
            head, self._mcp_sync_head, self._mcp_sync_hold = self._mcp_sync_head, None, False
        if head is not None:  # (never: urllib3 writes a bytes body after the head)
            super().send(head)  # type: ignore[misc]
        _track_sent(self)


class _TrackedHTTPConnection(_OneWrite, HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _track(self, None)


class _TrackedHTTPSConnection(_OneWrite, HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _track(self, None)


class _TrackedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _TrackedHTTPConnection


class _TrackedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _TrackedHTTPSConnection


_TRACKED_POOLS = {"http": _TrackedHTTPPool, "https": _TrackedHTTPSPool}


class TrackingAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections tell the current thread's exchange who they are."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_TRACKED_POOLS)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_TRACKED_POOLS)
        return manager
