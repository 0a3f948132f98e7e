"""A scripted fake HTTP server for faults that real MCP servers cannot be made to show.

It is not an MCP server: each test passes a ``handler(req)`` that decides, request by request,
what goes on the wire (JSON, an SSE stream written event by event, a status with no body,
headers and then silence, a dropped connection...). Built on the stdlib
``ThreadingHTTPServer`` on 127.0.0.1 with a free port, speaking HTTP/1.1 with keep-alive and
chunked SSE bodies, like uvicorn.

    def handler(req):
        if req.method == "POST":
            req.reply_json({"jsonrpc": "2.0", "id": req.json["id"], "result": {}})
        else:
            req.reply(405)

    with FaultServer(handler) as server:
        transport = StreamableHttpTransport(server.url)
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_sync.protocol import jsonrpc
from mcp_sync.transports import MessageOptions

__all__ = [
    "INIT",
    "INITIALIZED",
    "OPENS_SESSION",
    "FaultServer",
    "Inbox",
    "Recorded",
    "Request",
    "SseWriter",
    "answer",
    "initialize_result",
    "started_transports",
]


#: ``initialize`` at 2025-11-25 (id 1), and the notification that completes the handshake.
INIT = jsonrpc.request(
    1,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
)
INITIALIZED = jsonrpc.notification("notifications/initialized")
#: What the session core sends the initialized notification with: it opens the GET stream, at
#: the negotiated version (what the transport sends on its own goes at it too).
OPENS_SESSION = MessageOptions(version="2025-11-25", opens_session=True)


def initialize_result(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "faults", "version": "0"},
    }


def discover_result(version: str) -> dict[str, Any]:
    """A ``server/discover`` answer of a server speaking only ``version`` (not to be cached)."""
    return {
        "supportedVersions": [version],
        "capabilities": {"tools": {}},
        "ttlMs": 0,
        "cacheScope": "private",
        "resultType": "complete",
    }


def answer(req: Request, session_id: str | None = "s-1") -> None:
    """What a plain Streamable HTTP server answers: JSON, ``session_id`` from ``initialize``
    on, 202 for a notification or a response, 405 for a GET or a DELETE."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "initialize":
        headers = {"Mcp-Session-Id": session_id} if session_id else {}
        req.reply_json(jsonrpc.result_response(msg["id"], initialize_result()), headers=headers)
    else:
        req.reply_json(jsonrpc.result_response(msg["id"], {"echo": msg["method"]}))


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    time: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class SseWriter:
    """Writes one SSE response body, chunk by chunk (each write is one HTTP chunk)."""

    def __init__(self, req: Request, chunked: bool) -> None:
        self._req = req
        self._chunked = chunked

    def raw(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode()
        if not data:
            return
        wfile = self._req.handler.wfile
        if self._chunked:
            wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
        else:
            wfile.write(data)
        wfile.flush()

    def event(
        self,
        data: Any = None,
        *,
        id: str | None = None,
        retry: int | None = None,
        event: str | None = None,
        eol: str = "\n",
    ) -> None:
        lines = []
        if event is not None:
            lines.append(f"event: {event}")
        if id is not None:
            lines.append(f"id: {id}")
        if retry is not None:
            lines.append(f"retry: {retry}")
        if data is not None:
            text = data if isinstance(data, str) else json.dumps(data)
            lines.extend(f"data: {line}" for line in text.split("\n"))
        self.raw(eol.join(lines) + eol + eol)

    def end(self) -> None:
        """Finish the body properly (the connection may be reused)."""
        if self._chunked:
            self._req.handler.wfile.write(b"0\r\n\r\n")
            self._req.handler.wfile.flush()
        else:
            self._req.drop()

    def drop(self) -> None:
        """Break the connection mid-body."""
        self._req.drop()


class Request:
    """One request as the handler sees it, with ways to answer it."""

    def __init__(self, server: FaultServer, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        self.server = server
        self.handler = handler
        self.method = handler.command
        self.path = handler.path
        self.headers = {k.lower(): v for k, v in handler.headers.items()}
        self.body = body
        self.answered = False

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def rpc_request(self) -> dict[str, Any] | None:
        """The JSON-RPC request this POST carries. Anything else is answered here, as a plain
        Streamable HTTP server would (405 for other HTTP methods, 202 for a notification or a
        response), and gives None."""
        if self.method != "POST":
            self.reply(405)
            return None
        msg: dict[str, Any] = self.json
        if "id" not in msg or "method" not in msg:
            self.reply(202)
            return None
        return msg

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.answered = True
        self.handler.send_response(status)
        for name, value in headers.items():
            self.handler.send_header(name, value)
        self.handler.end_headers()
        self.handler.wfile.flush()

    def reply(
        self, status: int, body: bytes | str = b"", headers: dict[str, str] | None = None
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        all_headers = {"Content-Length": str(len(data)), **(headers or {})}
        self._head(status, all_headers)
        if data:
            self.handler.wfile.write(data)
            self.handler.wfile.flush()

    def reply_json(
        self, obj: Any, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.reply(status, json.dumps(obj), {"Content-Type": "application/json", **(headers or {})})

    def open_sse(
        self,
        status: int = 200,
        headers: dict[str, str] | None = None,
        *,
        chunked: bool = True,
        http10: bool = False,
    ) -> SseWriter:
        """Answer with an event stream: chunked, or (``chunked=False``) a body that the
        connection's end ends, announced by ``Connection: close`` or by an HTTP/1.0 status
        line (``http10``)."""
        all_headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if http10:
            chunked = False
            self.handler.protocol_version = "HTTP/1.0"
            self.handler.close_connection = True
        elif chunked:
            all_headers["Transfer-Encoding"] = "chunked"
        else:
            all_headers["Connection"] = "close"
            self.handler.close_connection = True
        all_headers.update(headers or {})
        self._head(status, all_headers)
        return SseWriter(self, chunked)

    def send_headers_only(self, status: int = 200, content_type: str = "text/event-stream") -> None:
        self._head(status, {"Content-Type": content_type, "Transfer-Encoding": "chunked"})

    def hang(self, timeout: float = 30.0) -> None:
        """Say nothing more until the server stops (or ``timeout``)."""
        self.answered = True
        self.server.stopping.wait(timeout)
        self.drop()

    def drop(self) -> None:
        """Close the connection now, whatever state the response is in."""
        self.answered = True
        self.handler.close_connection = True
        with contextlib.suppress(OSError):
            self.handler.connection.shutdown(socket.SHUT_RDWR)

    def wait_disconnect(self, timeout: float) -> float | None:
        """Block until the client closes the connection; seconds waited, or None on timeout."""
        start = time.monotonic()
        conn = self.handler.connection
        conn.settimeout(timeout)
        try:
            while True:
                if not conn.recv(1024):
                    return time.monotonic() - start
        except TimeoutError:
            return None
        except OSError:
            return time.monotonic() - start


Handler = Callable[[Request], None]


class FaultServer:
    """Runs ``handler`` for each request; records what came in (``requests``)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Recorded] = []
        self.connections = 0
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # The server's own writes must not wait on Nagle, or the test would measure it.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with outer._lock:
                    outer.connections += 1
                    outer._sockets.append(self.connection)

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = Request(outer, self, body)
                with outer._lock:
                    outer.requests.append(Recorded(req.method, req.path, dict(req.headers), body))
                try:
                    outer.handler(req)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                except BaseException as exc:
                    outer.errors.append(exc)
                    self.close_connection = True
                    if not req.answered:
                        with contextlib.suppress(OSError):
                            req.reply(599, repr(exc))

            do_GET = do_POST = do_DELETE = _serve

        class _Server(ThreadingHTTPServer):
            request_queue_size = 128

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def of(self, method: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.method == method]


class Inbox:
    """Client side: collects what a transport hands to its listeners, with waits."""

    def __init__(self, transport: Any) -> None:
        self.messages: list[Any] = []
        self.errors: list[BaseException] = []
        self.closes: list[BaseException | None] = []
        self._cond = threading.Condition()
        transport.on_message(self._add("messages"))
        transport.on_error(self._add("errors"))
        transport.on_close(self._add("closes"))

    def _add(self, attr: str) -> Callable[[Any], None]:
        def add(item: Any) -> None:
            with self._cond:
                getattr(self, attr).append(item)
                self._cond.notify_all()

        return add

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        with self._cond:
            if not self._cond.wait_for(predicate, timeout):
                raise AssertionError(
                    f"timed out; messages={self.messages!r} errors={self.errors!r}"
                )
            return predicate()

    def response(self, request_id: Any, timeout: float = 5.0) -> dict[str, Any]:
        def find() -> Any:
            for item in self.messages:
                if (
                    isinstance(item, dict)
                    and item.get("id") == request_id
                    and ("result" in item or "error" in item)
                ):
                    return item
            return None

        result: dict[str, Any] = self.wait_for(find, timeout)
        return result

    def wait_for_method(self, method: str, timeout: float = 5.0) -> dict[str, Any]:
        """The first message (a request or a notification) of ``method``, once it has come;
        AssertionError naming ``method`` if none has within ``timeout`` seconds."""

        def find() -> dict[str, Any] | None:
            for item in self.messages:
                if isinstance(item, dict) and item.get("method") == method:
                    return item
            return None

        with self._cond:
            message = self._cond.wait_for(find, timeout)
            if message is None:
                raise AssertionError(
                    f"no {method!r} message within {timeout} s; "
                    f"messages={self.messages!r} errors={self.errors!r}"
                )
            return message

    def error(self, timeout: float = 5.0) -> BaseException:
        return self.wait_for(lambda: self.errors[0] if self.errors else None, timeout)  # type: ignore[no-any-return]


@contextlib.contextmanager
def started_transports(**defaults: Any) -> Iterator[Callable[..., tuple[Any, Inbox]]]:
    """Yields ``make(url, **options)``: a started ``StreamableHttpTransport`` and its
    :class:`Inbox`, ``defaults`` under ``options``. At the end every transport made is closed,
    and its threads must be gone within 2 s."""
    from mcp_sync.transports.http import StreamableHttpTransport
    from tests.helpers.support import client_threads, wait_until

    made: list[Any] = []

    def make(url: str, **options: Any) -> tuple[Any, Inbox]:
        transport = StreamableHttpTransport(url, **{**defaults, **options})
        inbox = Inbox(transport)
        transport.start()
        made.append(transport)
        return transport, inbox

    yield make
    for transport in made:
        transport.close()
    wait_until(lambda: not client_threads("mcp-sync-http"), 2, message="threads left after close()")
