"""What both HTTP transports are made of (:class:`HttpTransportBase`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests

from ..._rules.numbers import number, whole
from ...auth import AuthProvider
from ...errors import ConnectionClosed
from ...protocol.headers import checked_headers
from ...redaction import hold_fields, hold_url, redact
from ..base import Transport
from .client import HttpClient
from .exchange import Exchange
from .options import HttpOptions
from .tls import check_options
from .workers import LANE_STALL, Lane, Workers

__all__ = ["ACK_TIMEOUT", "JOIN_TIMEOUT", "HttpTransportBase"]

JOIN_TIMEOUT = 5.0
#: Seconds a server has to acknowledge (HTTP 202) a notification or a response POST.
ACK_TIMEOUT = 30.0


class HttpTransportBase(Transport):
    """What the Streamable HTTP and HTTP+SSE transports share: the URL and settings (its
    secrets and those of ``headers`` held from the start, ``headers`` checked by
    :func:`~mcp_sync.protocol.headers.checked_headers`), the HTTP client, the worker pool with
    its in-order lane for outgoing messages, and the live exchanges that ``close()`` cancels."""

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
        options: HttpOptions,
    ) -> None:
        super().__init__()
        if urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = checked_headers(headers or {})
        hold_url(self, url)
        hold_fields(self, self.headers)
        name = type(self).__name__
        self.max_message_bytes = whole(max_message_bytes, f"{name}: max_message_bytes", minimum=1)
        self.connect_timeout = number(connect_timeout, f"{name}: connect_timeout", positive=True)
        check_options(options)  # refused where they are given, not at start
        self._session = session
        self._auth = auth
        self._options = options
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
        return redact(f"<{type(self).__name__} {self.url}>")

    def _open_client(self) -> None:
        """Make the HTTP client (once: a transport starts once)."""
        if self._http is not None:
            raise RuntimeError("transport already started")
        self._http = HttpClient(
            self.url,
            session=self._session,
            auth=self._auth,
            connect_timeout=self.connect_timeout,
            options=self._options,
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

    def _flush(self) -> None:
        """At ``close()``: let the notifications and responses already sent go out first
        (each waits for its acknowledgement up to the lane's stall, all of them together at
        most ``LANE_STALL`` seconds); not from the transport's own threads."""
        if not self._closing and not self._is_own_thread():
            self._lane.wait_passed(time.monotonic() + LANE_STALL)

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
