"""Turning what a Streamable HTTP server sends into messages and errors (:class:`Delivery`).

The answer to a request's POST is a JSON body or an event stream of JSON-RPC messages for the
transport's listeners (the stream ends with the request's answer, or breaks and is resumed by
the caller); an error status carries either a JSON-RPC error for the request (delivered as its
answer) or an HTTP error (raised, tagged with the request). An id-less JSON-RPC error in the
answer to a POST answers that POST's request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import requests

from ...errors import HttpError, McpError, SessionExpired, TransportError
from ...protocol import jsonrpc
from .._sse import EventTooLarge, SseStream
from .exchange import Exchange
from .responses import (
    ERROR_BODY_LIMIT,
    JSON_TYPE,
    SSE_TYPE,
    TooLarge,
    body_reader,
    content_type,
    jsonrpc_error_in,
    read_limited,
    same_id,
)

__all__ = ["LINGER", "Delivery", "Outcome", "Resume"]

#: Seconds a stream that already answered its request is read on, for the server to end it.
LINGER = 1.0

#: How reading a stream ended: its request was answered, it ended (or failed) before that, or
#: an event was over the size limit.
Outcome = Literal["answered", "ended", "too_large"]
#: ``resume(last_event_id, server_retry, reason)``: go on with a request's broken stream.
Resume = Callable[[str, "float | None", str], None]


class Delivery:
    """Delivers the messages of one server (at ``url``) to ``deliver``; ``report`` gets the
    problems that fail no request."""

    def __init__(
        self,
        url: str,
        max_message_bytes: int,
        deliver: Callable[[Any], None],
        report: Callable[[BaseException], None],
    ) -> None:
        self.url = url
        self.max_message_bytes = max_message_bytes
        self._deliver = deliver
        self._report = report

    def answer(
        self,
        response: requests.Response,
        method: str,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        sent_session: bool,
        resume: Resume | None,
        linger: Callable[[requests.Response, SseStream], None] | None = None,
    ) -> None:
        """Deliver the answer to the POST of request ``request_id`` or raise why there is none.
        A broken event stream goes on with ``resume`` (None: it cannot be resumed); a stream
        that answered is read to its end by ``linger`` (default :meth:`linger`)."""
        status = response.status_code
        if not 200 <= status < 300:
            self.fail_status(response, request_id, exchange, sent_session)
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
                raise self.too_large(request_id) from None
            except Exception as exc:
                raise TransportError(
                    f"reading the response to {method} failed: {exc}", request_id=request_id
                ) from exc
            exchange.release()
            try:
                payload = jsonrpc.decode(body)
            except McpError as exc:
                raise TransportError(str(exc), request_id=request_id) from None
            if not self.payload(payload, request_id, exchange):
                raise TransportError(
                    f"the JSON response to {method} does not answer it", request_id=request_id
                )
        elif ctype == SSE_TYPE:
            self._answer_stream(response, request_id, exchange, resume, linger or self.linger)
        else:
            raise TransportError(
                f"unexpected Content-Type {ctype!r} in the response to {method}",
                request_id=request_id,
            )

    def _answer_stream(
        self,
        response: requests.Response,
        request_id: jsonrpc.RequestId,
        exchange: Exchange,
        resume: Resume | None,
        linger: Callable[[requests.Response, SseStream], None],
    ) -> None:
        stream = SseStream(body_reader(response), self.max_message_bytes)
        outcome, reason = self.stream(stream, request_id, exchange)
        if outcome == "answered":
            linger(response, stream)
            return
        if exchange.cancelled:
            return
        if outcome == "too_large":
            raise self.too_large(request_id)
        response.close()
        if stream.last_event_id is None or resume is None:
            # (2026-07-28 has no resumption: the request is lost; the client may re-issue it)
            raise TransportError(f"response stream failed: {reason}", request_id=request_id)
        resume(stream.last_event_id, stream.retry, reason)

    def payload(
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

    def stream(
        self, stream: SseStream, request_id: jsonrpc.RequestId | None, exchange: Exchange
    ) -> tuple[Outcome, str]:
        """Deliver a stream's messages until it ends or (with ``request_id``) answers; the
        outcome and, unless answered, why the stream ended."""
        try:
            for item in stream:
                if isinstance(item, EventTooLarge):
                    if request_id is not None:
                        return "too_large", ""
                    self._report(self.too_large(None))
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
                if self.payload(payload, request_id, exchange):
                    return "answered", ""
        except McpError:
            raise
        except Exception as exc:
            return "ended", f"reading it failed ({exc!r})"
        return "ended", "the server ended it before the response"

    def linger(self, response: requests.Response, stream: SseStream) -> None:
        """After the answer, give the server a moment (:data:`LINGER`) to end the stream: the
        connection is then reused. Anything still arriving is delivered."""
        conn = getattr(response.raw, "_connection", None)
        if conn is None:
            return  # the body already ended and the connection went back to the pool
        sock = getattr(conn, "sock", None)
        if sock is None:
            return  # the response closes the connection: nothing to keep
        try:
            sock.settimeout(LINGER)
            for item in stream:
                if not isinstance(item, EventTooLarge) and item.event == "message" and item.data:
                    self._deliver(jsonrpc.decode(item.data))
        except Exception:
            pass

    def ends_now(self, response: requests.Response) -> bool:
        """True if the rest of a chunked stream, to its last chunk, is already received (so
        :meth:`linger` takes no wait); False when in doubt."""
        raw = response.raw
        if getattr(raw, "_connection", None) is None:
            return True  # the body already ended
        reader = getattr(getattr(raw, "_fp", None), "fp", None)  # http.client's BufferedReader
        sock = getattr(getattr(raw, "_connection", None), "sock", None)
        if reader is None or sock is None:
            return False
        timeout = sock.gettimeout()
        try:
            sock.settimeout(0.0)  # a peek at what is buffered, never a wait
            buffered: bytes = reader.peek(1)
        except (OSError, ValueError):
            return False
        finally:
            sock.settimeout(timeout)
        return b"\r\n0\r\n" in buffered or buffered.startswith(b"0\r\n")

    def fail_status(
        self,
        response: requests.Response,
        request_id: jsonrpc.RequestId | None,
        exchange: Exchange,
        sent_session: bool,
        *,
        deliver: bool = True,
    ) -> None:
        """Raise the error for a non-2xx response, or (``deliver``) deliver its JSON-RPC error
        body as the answer to ``request_id``."""
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
        # An auth refusal is HTTP's answer whatever its body says: it keeps its status (an
        # HttpError, which the CLI and an `except HttpError` know), not the body's RpcError.
        if deliver and error is not None and request_id is not None and status not in (401, 403):
            self.payload(error, request_id, exchange)
            return
        raise HttpError(
            status,
            text,
            message=f"HTTP {status} {response.reason or ''} from {self.url}".rstrip(),
            request_id=request_id,
            headers=dict(response.headers),
        )

    def report(self, error: BaseException) -> None:
        """Report a problem that fails no request."""
        self._report(error)

    def too_large(self, request_id: jsonrpc.RequestId | None) -> TransportError:
        """The error for a message over ``max_message_bytes``."""
        return TransportError(
            f"a message from {self.url} is larger than max_message_bytes "
            f"({self.max_message_bytes} bytes)",
            request_id=request_id,
        )
