"""Helpers for testing code that uses a :class:`~mcp_sync.Client`, with no server process.

:class:`MockServer` is a scripted MCP server on an in-memory transport pair: it answers
``initialize`` and ``ping`` itself and every other method from handlers you register::

    server = MockServer(capabilities={"tools": {}})

    @server.handle("tools/call")
    def call(params, ctx):
        return {"content": [{"type": "text", "text": params["arguments"]["q"].upper()}]}

    client = server.connect(Client())
    assert client.call_tool("shout", {"q": "hi"}).text == "HI"
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._rules.numbers import number
from .errors import RpcError
from .protocol import jsonrpc, versions
from .transports.memory import in_memory_transport_pair

if TYPE_CHECKING:
    from .client import Client

__all__ = ["NO_REPLY", "MockServer", "RequestContext", "in_memory_transport_pair"]

#: Return this from a handler to leave the request unanswered (to test timeouts).
NO_REPLY: Any = object()


@dataclass
class RequestContext:
    """Passed to a :class:`MockServer` handler with the request's params."""

    server: MockServer
    request_id: jsonrpc.RequestId
    method: str
    params: dict[str, Any]

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` for this request (needs the client's token)."""
        token = (self.params.get("_meta") or {}).get("progressToken")
        if token is None:
            raise AssertionError(f"{self.method} carried no progress token")
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.server.notify("notifications/progress", params)

    def reply(self, result: Any) -> None:
        """Answer later, for a handler that returned :data:`NO_REPLY`."""
        self.server.transport.send(jsonrpc.result_response(self.request_id, result))


Handler = Callable[[dict[str, Any], RequestContext], Any]


class MockServer:
    """A scripted MCP server over an in-memory transport (see the module docstring).

    ``received`` lists every message the client sent, in order. ``eras`` says which protocol
    eras it speaks: ``"handshake"`` answers ``initialize``, ``"stateless"`` answers
    ``server/discover`` (2026-07-28); a handshake-only server answers the client's discover probe
    with -32601, as real ones do. Handlers run on the server's
    reader thread unless registered with ``threaded=True`` (needed for a handler that itself
    sends requests to the client and waits for the answer).
    """

    def __init__(
        self,
        *,
        name: str = "mock-server",
        version: str = "1.0.0",
        capabilities: dict[str, Any] | None = None,
        protocol_version: str | None = None,
        instructions: str | None = None,
        eras: tuple[str, ...] = ("handshake",),
    ) -> None:
        self.client_transport, self.transport = in_memory_transport_pair()
        self.server_info = {"name": name, "version": version}
        self.capabilities = capabilities if capabilities is not None else {"tools": {}}
        self.protocol_version = protocol_version
        self.instructions = instructions
        self.received: list[dict[str, Any]] = []
        self._handlers: dict[str, tuple[Handler, bool]] = {}
        self._ids = itertools.count(1)
        self._pending: dict[jsonrpc.RequestId, Future[Any]] = {}
        self._received_cond = threading.Condition()
        self._started = False
        self.eras = eras
        if "handshake" in eras:
            self.handle("initialize", self._initialize)
            self.handle("ping", lambda _params, _ctx: {})
        if "stateless" in eras:
            self.handle("server/discover", self._discover)

    # -- scripting ----------------------------------------------------------------------

    def handle(self, method: str, handler: Handler | None = None, *, threaded: bool = False) -> Any:
        """Register ``handler(params, ctx) -> result`` for ``method``; usable as a decorator.

        Raise :class:`~mcp_sync.errors.RpcError` to answer with an error; return
        :data:`NO_REPLY` to leave the request unanswered.
        """
        if handler is None:
            return lambda fn: self.handle(method, fn, threaded=threaded)
        self._handlers[method] = (handler, threaded)
        return handler

    def connect(self, client: Client, **kwargs: Any) -> Client:
        """Start the server and connect ``client`` to it; returns the client."""
        self.start()
        return client.connect(self.client_transport, **kwargs)

    def start(self) -> None:
        if not self._started:
            self._started = True
            self.transport.on_message(self._on_message)
            self.transport.start()

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 5.0
    ) -> Any:
        """Send a request to the client and wait for its result (raises RpcError on error)."""
        number(timeout, "MockServer.request: timeout")
        request_id = next(self._ids)
        future: Future[Any] = Future()
        self._pending[request_id] = future
        self.transport.send(jsonrpc.request(request_id, method, params))
        return future.result(timeout)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification to the client."""
        self.transport.send(jsonrpc.notification(method, params))

    def send_raw(self, message: Any) -> None:
        """Send any JSON value, valid JSON-RPC or not."""
        self.transport.send_raw(message)

    def wait_for(
        self, predicate: str | Callable[[dict[str, Any]], bool], timeout: float = 5.0
    ) -> dict[str, Any]:
        """Wait until the client has sent a message matching ``predicate`` (a method name or a
        function of the message) and return the first such message."""
        match = (
            (lambda m: m.get("method") == predicate) if isinstance(predicate, str) else predicate
        )
        deadline = time.monotonic() + number(timeout, "MockServer.wait_for: timeout")
        with self._received_cond:
            while True:
                for message in self.received:
                    if match(message):
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no message matching {predicate!r} within {timeout} s")
                self._received_cond.wait(remaining)

    def methods(self) -> list[str]:
        """The methods of the requests and notifications received so far."""
        return [m["method"] for m in list(self.received) if "method" in m]

    # -- internals ----------------------------------------------------------------------

    def _initialize(self, params: dict[str, Any], _ctx: RequestContext) -> dict[str, Any]:
        offered = params.get("protocolVersion")
        version = self.protocol_version or offered or versions.LATEST_HANDSHAKE
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _discover(self, params: dict[str, Any], _ctx: RequestContext) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": [self.protocol_version or versions.STATELESS_VERSIONS[0]],
            "capabilities": self.capabilities,
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": self.server_info},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _on_message(self, message: Any) -> None:
        with self._received_cond:
            self.received.append(message)
            self._received_cond.notify_all()
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:
            entry = self._handlers.get(message["method"])
            if entry is None:
                self.transport.send(
                    jsonrpc.error_response(
                        message["id"],
                        jsonrpc.METHOD_NOT_FOUND,
                        f"Method not found: {message['method']}",
                    )
                )
                return
            handler, threaded = entry
            if threaded:
                threading.Thread(
                    target=self._run,
                    args=(handler, message),
                    name="mock-server-handler",
                    daemon=True,
                ).start()
            else:
                self._run(handler, message)
        elif "method" in message:
            entry = self._handlers.get(message["method"])
            if entry is not None:
                ctx = RequestContext(self, "", message["method"], message.get("params") or {})
                entry[0](message.get("params") or {}, ctx)
        elif "id" in message:
            future = self._pending.pop(message["id"], None)
            if future is None:
                return
            if "error" in message:
                future.set_exception(RpcError.from_error(message["error"]))
            else:
                future.set_result(message.get("result"))

    def _run(self, handler: Handler, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        ctx = RequestContext(self, message["id"], message["method"], params)
        try:
            result = handler(params, ctx)
        except RpcError as exc:
            reply = jsonrpc.error_response(message["id"], exc.code, exc.message, exc.data)
        except Exception as exc:
            reply = jsonrpc.error_response(message["id"], jsonrpc.INTERNAL_ERROR, str(exc))
        else:
            if result is NO_REPLY:
                return
            reply = jsonrpc.result_response(message["id"], result)
        with contextlib.suppress(Exception):  # the client may have gone away
            self.transport.send(reply)
