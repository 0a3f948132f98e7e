"""The legacy HTTP+SSE transport (protocol 2024-11-05; deprecated since 2025-03-26).

``start()`` GETs the SSE endpoint and waits for its ``endpoint`` event, which names the URL to
POST messages to (resolved against the SSE URL; another origin is refused). Every message from
the server arrives as a ``message`` event on that one stream, read by ``mcp-sync-sse-reader``.
Messages are POSTed in order by a worker (``send()`` does no network I/O); the server answers
each POST with 2xx; the next message is POSTed once the previous one was answered, or at most
``LANE_STALL`` seconds after it was written, so a POST the server never answers holds up
nothing for long. Such a POST is
released by its request's abort signal (the session aborts it on timeout), or, for a
notification or a response, after :data:`~mcp_sync.transports._http.base.ACK_TIMEOUT`.
The end of the stream ends the connection (``on_close`` with a
:class:`~mcp_sync.errors.ConnectionClosed`).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from typing_extensions import Unpack

from ..abort import AbortSignal
from ..auth import AuthProvider
from ..errors import ConnectionClosed, HttpError, McpError, NetworkError, TransportError
from ..protocol import jsonrpc
from ._http.base import ACK_TIMEOUT, HttpTransportBase
from ._http.exchange import Cancelled, Exchange
from ._http.headers import merge
from ._http.options import HttpOptions
from ._http.responses import (
    ERROR_BODY_LIMIT,
    MIB,
    body_reader,
    content_type,
    error_for_request,
    read_limited,
)
from ._sse import EventTooLarge, SseStream
from .base import MessageOptions

__all__ = ["SseTransport"]

logger = logging.getLogger("mcp_sync.transport.sse")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


class SseTransport(HttpTransportBase):
    """The HTTP+SSE transport of protocol 2024-11-05.

    Arguments as for :class:`~mcp_sync.transports.http.StreamableHttpTransport`;
    ``connect_timeout`` also bounds the wait for the ``endpoint`` event.
    """

    kind = "sse"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        auth: AuthProvider | None = None,
        max_message_bytes: int = 16 * MIB,
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
            post=self._post,
            options=options,
        )
        #: The URL messages are POSTed to, from the ``endpoint`` event.
        self.endpoint: str | None = None
        self._ready = threading.Event()
        self._start_error: McpError | None = None

    # -- the contract ---------------------------------------------------------------------

    def start(self) -> None:
        """GET the stream and wait for the ``endpoint`` event (at most ``connect_timeout``)."""
        self._open_client()
        stream_exchange = self._new_exchange()
        self._reader = threading.Thread(
            target=self._read,
            args=(stream_exchange,),
            name=f"mcp-sync-{self.kind}-reader",
            daemon=True,
        )
        self._reader.start()
        if not self._ready.wait(self.connect_timeout):
            self._start_error = TransportError(
                f"{self.url} sent no endpoint event within {self.connect_timeout:g} s"
            )
        error = self._start_error
        if error is not None:
            self._stop()
            raise error

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        if self._closing or self.closed:
            raise ConnectionClosed(f"SSE transport to {self.url} is closed")
        if self.endpoint is None:
            raise TransportError("call start() before send()")
        if signal is not None and signal.aborted:
            return
        self._lane.put((message, signal, options))

    def close(self) -> None:
        self._flush()
        if not self._stop():
            self._wait_closed()
            return
        self._fire_close(None)

    # -- internals ------------------------------------------------------------------------

    def _stop(self) -> bool:
        """Release and join everything; False if another call already did."""
        exchanges = self._begin_closing()
        if exchanges is None:
            return False
        self._release(exchanges)
        self._closed_event.set()
        return True

    def _fail_start(self, error: McpError) -> None:
        self._start_error = error
        self._ready.set()

    def _read(self, exchange: Exchange) -> None:
        assert self._http is not None
        cause: BaseException | None = None
        try:
            headers = dict(self.headers)
            headers["Accept"] = "text/event-stream"
            try:
                response = self._http.open("GET", self.url, headers, None, exchange)
            except NetworkError as exc:
                self._fail_start(exc)
                return
            with response:
                status = response.status_code
                if not 200 <= status < 300 or content_type(response) != "text/event-stream":
                    body = exchange.body_prefix
                    if body is None:
                        body = read_limited(response, ERROR_BODY_LIMIT)
                    self._fail_start(
                        HttpError(
                            status,
                            body.decode("utf-8", "replace"),
                            message=f"GET {self.url} answered HTTP {status} "
                            f"({content_type(response) or 'no content type'}), "
                            "not an event stream",
                            headers=dict(response.headers),
                        )
                    )
                    return
                cause = self._pump(SseStream(body_reader(response), self.max_message_bytes))
        except Cancelled:
            return
        except McpError as exc:
            self._fail_start(exc)
            return
        except Exception as exc:  # a failing auth provider, or a bug
            self._fail_start(TransportError(f"opening the SSE stream failed: {exc}"))
            return
        finally:
            self._forget(exchange)
        if self._start_error is not None:
            return
        if not self._ready.is_set():
            self._fail_start(TransportError(f"{self.url} ended the stream before its endpoint"))
            return
        if self._closing:
            return
        self._fire_close(ConnectionClosed(f"the SSE stream from {self.url} ended", cause=cause))

    def _pump(self, stream: SseStream) -> BaseException | None:
        """Read events until the stream ends; return the read error, if any."""
        try:
            for item in stream:
                if isinstance(item, EventTooLarge):
                    self._report(
                        TransportError(
                            f"an event from {self.url} is larger than max_message_bytes "
                            f"({self.max_message_bytes} bytes)"
                        )
                    )
                elif item.event == "endpoint":
                    self._take_endpoint(item.data.strip())
                    if self._start_error is not None:
                        return None
                elif item.event == "message" and item.data:
                    try:
                        self._deliver(jsonrpc.decode(item.data))
                    except McpError as exc:
                        self._report(exc)
        except Exception as exc:
            return exc
        return None

    def _take_endpoint(self, data: str) -> None:
        if self._ready.is_set():
            logger.debug("ignoring a second endpoint event")
            return
        endpoint = urljoin(self.url, data)
        if _origin(endpoint) != _origin(self.url):
            self._fail_start(
                TransportError(
                    f"the SSE server at {self.url} named an endpoint on another origin "
                    f"({endpoint}); refusing to send messages there"
                )
            )
            return
        self.endpoint = endpoint
        self._ready.set()

    def _post(
        self,
        item: tuple[dict[str, Any], AbortSignal | None, MessageOptions | None],
        advance: Callable[[], None],
    ) -> None:
        message, signal, options = item
        if self._closing or (signal is not None and signal.aborted):
            return
        assert self._http is not None and self.endpoint is not None
        request_id = message.get("id") if "method" in message else None
        if not jsonrpc.is_request_id(request_id):
            request_id = None
        try:
            exchange = self._new_exchange()
        except ConnectionClosed:
            return
        exchange.on_written = advance
        remove_abort = signal.on_abort(exchange.on_abort) if signal is not None else None
        headers = merge(dict(self.headers), options.headers) if options else dict(self.headers)
        headers = merge(headers, {"Content-Type": "application/json"})
        try:
            response = self._http.open(
                "POST",
                self.endpoint,
                headers,
                jsonrpc.encode(message),
                exchange,
                # a request's POST ends with its signal; anything else has a deadline
                read_timeout=None if request_id is not None else ACK_TIMEOUT,
                safe=request_id is not None and options is not None and options.safe_to_resend,
                # a notification or an answer opens no sign-in (MessageOptions.interactive_auth)
                interactive=options is None or options.interactive_auth,
            )
            with response:
                body = exchange.body_prefix
                if body is None:
                    body = read_limited(response, ERROR_BODY_LIMIT)
                if not 200 <= response.status_code < 300:
                    raise HttpError(
                        response.status_code,
                        body.decode("utf-8", "replace"),
                        message=f"HTTP {response.status_code} from {self.endpoint}",
                        request_id=request_id,
                        headers=dict(response.headers),
                    )
        except Cancelled:
            pass
        except NetworkError as exc:
            if not exchange.cancelled:
                exc.request_id = request_id
                self._report(exc)
        except Exception as exc:
            if not exchange.cancelled:
                if request_id is None:
                    self._report(exc)
                else:
                    self._report(error_for_request(exc, request_id, "sending a message failed"))
        finally:
            if remove_abort is not None:
                remove_abort()
            self._forget(exchange)
