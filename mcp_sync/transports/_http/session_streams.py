"""The GET streams of a handshake-era Streamable HTTP session (:class:`SessionStreams`): the
server-push stream, read on the transport's reader thread, and the resumption of a request's
broken response stream (``Last-Event-ID``). Both run the one reconnecting loop of
:mod:`.streams`; they differ in what ends them and how they fail: a resumption fails its
request, the push stream reports and stops."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import requests

from ...backoff import Backoff, retry_after_seconds
from ...errors import ConnectionClosed, McpError, NetworkError, TransportError
from ...protocol import jsonrpc
from .delivery import Delivery
from .exchange import Cancelled, Exchange
from .responses import SSE_TYPE, content_type
from .streams import RETRY_STATUSES, Reopen, StreamGaveUp, follow_stream

__all__ = ["SessionStreams"]

logger = logging.getLogger("mcp_sync.transport.http")

#: ``get(exchange, last_event_id) -> (response, sent_session)``: GET the session's stream.
Get = Callable[[Exchange, str | None], tuple[requests.Response, bool]]


class SessionStreams:
    """Opens, reads and reconnects the GET streams of one session.

    ``get`` sends a GET with the session's headers; ``describe`` explains a network failure;
    ``new_exchange`` / ``forget`` register an exchange with the transport (whose ``close()``
    cancels them) and let it go. Messages go to ``delivery``.
    """

    def __init__(
        self,
        delivery: Delivery,
        policy: Backoff,
        get: Get,
        new_exchange: Callable[[], Exchange],
        forget: Callable[[Exchange], None],
    ) -> None:
        self.delivery = delivery
        self.policy = policy
        self._get = get
        self._new_exchange = new_exchange
        self._forget = forget
        #: Set once the push stream's first attempt is answered (or failed).
        self.push_answered = threading.Event()

    def open(
        self, exchange: Exchange, last_event_id: str | None, request_id: jsonrpc.RequestId | None
    ) -> requests.Response | None:
        """GET the stream: the response, or None if the server has none (405). Raises
        :class:`~.streams.Reopen` for a failure worth another attempt."""
        try:
            response, sent_session = self._get(exchange, last_event_id)
        except NetworkError as exc:
            raise Reopen(str(exc)) from exc
        status = response.status_code
        if 200 <= status < 300 and content_type(response) == SSE_TYPE:
            return response
        with response:
            if status == 405:
                return None
            if status in RETRY_STATUSES:
                raise Reopen(
                    f"HTTP {status}", retry_after_seconds(response.headers.get("Retry-After"))
                )
            if 200 <= status < 300:
                raise TransportError(
                    f"the GET stream of {self.delivery.url} answered "
                    f"{content_type(response)!r}, not an event stream",
                    request_id=request_id,
                )
            self.delivery.fail_status(response, request_id, exchange, sent_session, deliver=False)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- a request's broken response stream -----------------------------------------------

    def resume(
        self,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        last_event_id: str,
        server_retry: float | None,
        reason: str,
    ) -> None:
        """Resume a POST's stream that broke for ``reason`` with GET + ``Last-Event-ID``
        until the answer comes; raise the request's error if it cannot be."""

        def unsendable(event_id: str, _last: str) -> None:
            raise TransportError(
                f"response stream failed: {reason}; its last event id ({event_id!r}) cannot "
                "be sent back as Last-Event-ID to resume it",
                request_id=request_id,
            )

        try:
            outcome = follow_stream(
                self.policy,
                lambda event_id: self.open(exchange, event_id, request_id),
                self.delivery,
                exchange,
                request_id=request_id,
                last_event_id=last_event_id,
                server_retry=server_retry,
                broken=reason,
                unsendable_id=unsendable,
            )
        except StreamGaveUp as exc:
            raise TransportError(
                f"response stream failed: {reason}; resuming it failed "
                f"{exc.failures - 1} times in a row (last: {exc.reason})",
                request_id=request_id,
            ) from None
        if outcome == "no_stream":
            raise TransportError(
                f"response stream failed: {reason}; the server does not allow resuming it",
                request_id=request_id,
            )

    # -- the server-push stream -----------------------------------------------------------

    def run_push_stream(self) -> None:
        """Read the push stream until the transport closes, the server has none, or the policy
        gives up (reported); the body of the reader thread."""
        try:
            exchange = self._new_exchange()  # one for every attempt: close() cancels it
        except ConnectionClosed:
            self.push_answered.set()
            return
        url = self.delivery.url
        try:
            outcome = follow_stream(
                self.policy,
                lambda event_id: self._open_push(exchange, event_id),
                self.delivery,
                exchange,
                unsendable_id=self._unsendable_push_id,
            )
            if outcome == "no_stream":
                logger.debug("%s has no GET stream (HTTP 405)", url)
        except StreamGaveUp as exc:
            self.delivery.report(
                TransportError(
                    f"the GET stream of {url} failed {exc.failures} times in a row; "
                    f"giving up (last: {exc.reason})"
                )
            )
        except (Cancelled, ConnectionClosed):
            pass
        except McpError as exc:  # auth, session, protocol: reported, not retried
            if not exchange.cancelled:
                self.delivery.report(exc)
        except Exception:
            logger.exception("HTTP transport: GET stream failed")
        finally:
            self.push_answered.set()
            self._forget(exchange)

    def _open_push(self, exchange: Exchange, last_event_id: str | None) -> requests.Response | None:
        try:
            return self.open(exchange, last_event_id, None)
        except (Reopen, McpError, Cancelled):
            raise
        except Exception as exc:  # an auth provider's failure, or a bug: report, try again
            failure = f"opening it failed ({exc!r})"
            error = TransportError(f"the GET stream of {self.delivery.url}: {failure}")
            error.__cause__ = exc
            self.delivery.report(error)
            raise Reopen(failure) from exc
        finally:
            self.push_answered.set()

    def _unsendable_push_id(self, event_id: str, _reason: str) -> None:
        self.delivery.report(
            TransportError(
                f"the GET stream of {self.delivery.url} gave an event id that cannot be sent "
                f"back as Last-Event-ID ({event_id!r}); reconnecting without it"
            )
        )
