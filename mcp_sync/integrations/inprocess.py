"""A Python MCP server object served in this process, for ``mcp_sync.connect(server)``.

``connect()`` hands this module an official SDK server (``mcp.server.mcpserver.MCPServer`` in
``mcp`` 2.x, ``mcp.server.fastmcp.FastMCP`` in 1.x, or a low-level ``mcp.server.lowlevel.Server``)
or a fastmcp ``FastMCP``::

    from mcp.server.mcpserver import MCPServer

    server = MCPServer("demo")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    with mcp_sync.connect(server) as client:         # no subprocess, no asyncio in sight
        client.call_tool("add", {"a": 1, "b": 2})

The server is async; it runs on its own event loop on one thread
(``mcp-sync-inprocess-server``), the only place asyncio runs in mcp_sync. Messages go through
mcp_sync's in-memory transport pair, so they are JSON round-tripped copies, as over a pipe: the
client side is an ordinary mcp_sync transport, and the server side feeds the server's own
message streams. ``close()`` ends the server's input (the server shuts down as on EOF, its
lifespan exits), cancels what is left after a grace period, and joins the thread.

The server classes keep their low-level server private (``_lowlevel_server``, 1.x's and
fastmcp's ``_mcp_server``, fastmcp's ``_lifespan_manager``): this module reads them exactly as
the SDK's and fastmcp's own in-memory transports do, and nowhere else in mcp_sync does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types
from mcp.server.lowlevel import Server
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

from ..abort import AbortSignal
from ..errors import ConnectionClosed, ServerStartError
from ..transports.base import MessageOptions, Transport
from ..transports.memory import in_memory_transport_pair

__all__ = ["InProcessTransport", "is_server_object"]

logger = logging.getLogger("mcp_sync.inprocess")

#: Seconds the server gets to finish after its input ends (as the SDK's in-memory transport).
SHUTDOWN_GRACE = 2.0
#: Seconds ``start()`` waits for the server's lifespan to be entered.
START_TIMEOUT = 30.0

_STOP = object()

# A union in mcp 2.x, a RootModel in 1.x: either way what the server's streams carry.
_JSONRPC_MESSAGE: TypeAdapter[Any] = TypeAdapter(mcp.types.JSONRPCMessage)

# Server classes by where they live, so that mcp_sync imports none of them: an object of
# one means its module is already imported, and each exists in only some versions of mcp.
_MCPSERVER = ("mcp.server.mcpserver", "MCPServer")  # mcp 2.x
_SDK1_FASTMCP = ("mcp.server.fastmcp", "FastMCP")  # mcp 1.x
_FASTMCP = ("fastmcp.server.server", "FastMCP")  # the fastmcp package


def is_server_object(target: Any) -> bool:
    """True for an object this module can serve: an SDK ``MCPServer`` (mcp 2.x), ``FastMCP``
    (mcp 1.x) or ``Server``, or a fastmcp ``FastMCP``."""
    return isinstance(target, Server) or any(
        _is_instance(target, where) for where in (_MCPSERVER, _SDK1_FASTMCP, _FASTMCP)
    )


def _is_instance(target: Any, where: tuple[str, str]) -> bool:
    import sys

    module_name, class_name = where
    cls = getattr(sys.modules.get(module_name), class_name, None)
    return isinstance(cls, type) and isinstance(target, cls)


class InProcessTransport(Transport):
    """A transport to a Python MCP server object served on a background event loop.

    :func:`mcp_sync.connect` makes one when given a server object; make one yourself to pass
    to :meth:`Client.connect <mcp_sync.Client.connect>`. ``raise_exceptions=True`` lets an
    exception in a server handler end the connection (the SDK's testing switch) instead of
    becoming an error result.
    """

    kind = "inprocess"

    def __init__(self, server: Any, *, raise_exceptions: bool = False) -> None:
        super().__init__()
        if not is_server_object(server):
            raise TypeError(
                f"not an MCP server object: {type(server).__qualname__} (expected mcp's"
                " MCPServer, FastMCP (1.x) or Server, or fastmcp's FastMCP)"
            )
        self.server = server
        self.raise_exceptions = raise_exceptions
        name = getattr(server, "name", None)
        self.name = name if isinstance(name, str) else type(server).__name__
        self._client_end, self._server_end = in_memory_transport_pair()
        self._client_end.on_message(self._deliver)
        self._client_end.on_error(self._report)
        self._client_end.on_close(self._on_end_closed)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[Any] | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._stop_lock = threading.Lock()
        self._stopping = False
        self._closing = False

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("transport already started")
        self._thread = threading.Thread(
            target=self._run, name=f"mcp-sync-{self.kind}-server", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT) or self._failure is not None:
            cause = self._failure or TimeoutError(f"not ready within {START_TIMEOUT}s")
            error = ServerStartError(
                f"in-process server {self.name!r} did not start: {cause}", command=self.name
            )
            raise error from cause
        self._server_end.on_message(self._to_server)
        self._server_end.on_close(lambda _cause: self._stop_server())
        try:
            self._server_end.start()
            self._client_end.start()
        except RuntimeError as exc:  # the server ended meanwhile and closed the pair
            self._thread.join(SHUTDOWN_GRACE + 5.0)  # its failure is set when it has ended
            cause = self._failure or exc
            raise ServerStartError(
                f"in-process server {self.name!r} stopped while starting: "
                f"{type(cause).__name__}: {cause}",
                command=self.name,
            ) from cause

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        try:
            self._client_end.send(message, signal=signal)
        except ConnectionClosed as exc:
            if self._failure is None:
                raise
            raise self._stopped_error() from exc

    def close(self) -> None:
        self._closing = True
        self._client_end.close()  # closes both ends; pending requests fail at once
        self._stop_server()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(SHUTDOWN_GRACE + 5.0)
            if thread.is_alive():
                logger.warning("in-process server %r did not stop; its thread is left", self.name)
        self._fire_close(None)

    def _on_end_closed(self, cause: BaseException | None) -> None:
        if not self._closing:  # the server went away on its own
            self._fire_close(self._stopped_error(cause))

    def _stopped_error(self, cause: BaseException | None = None) -> ConnectionClosed:
        failure = self._failure or cause
        # ConnectionClosed appends its cause's text; the type goes before it
        kind = f" ({type(failure).__name__})" if failure is not None else ""
        return ConnectionClosed(f"in-process server {self.name!r} stopped{kind}", cause=failure)

    # -- the server thread --------------------------------------------------------------

    def _to_server(self, message: Any) -> None:
        """On the server end's reader thread: hand one message to the event loop."""
        loop, inbox = self._loop, self._inbox
        if loop is not None and inbox is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(inbox.put_nowait, message)

    def _stop_server(self) -> None:
        with self._stop_lock:
            if self._stopping:
                return
            self._stopping = True
        self._to_server(_STOP)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to start() or as the close cause
            self._failure = _sole_error(exc)
            logger.debug("in-process server %r failed", self.name, exc_info=True)
        finally:
            _join_worker_threads(self._loop)
            self._ready.set()
            if not self._closing:  # the server ended on its own: the connection is over
                self._client_end.close()

    async def _serve(self) -> None:
        lowlevel, lifespan = _lowlevel_and_lifespan(self.server)
        self._loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._inbox = inbox
        async with (
            lifespan,
            create_client_server_memory_streams() as (client_streams, server_streams),
            anyio.create_task_group() as tasks,
        ):
            from_server, to_server = client_streams
            server_done = anyio.Event()

            async def run_server() -> None:
                try:
                    await lowlevel.run(
                        *server_streams,
                        lowlevel.create_initialization_options(),
                        raise_exceptions=self.raise_exceptions,
                    )
                finally:
                    server_done.set()
                    self._to_server(_STOP)

            async def forward_replies() -> None:
                async for item in from_server:
                    if isinstance(item, SessionMessage):
                        wire = item.message.model_dump(
                            by_alias=True, mode="json", exclude_unset=True
                        )
                        with contextlib.suppress(ConnectionClosed):
                            self._server_end.send(wire)

            tasks.start_soon(run_server)
            tasks.start_soon(forward_replies)
            self._ready.set()
            while (message := await inbox.get()) is not _STOP:
                try:
                    parsed = _JSONRPC_MESSAGE.validate_python(message)
                except Exception as exc:  # the server reports it, as for a bad line on stdio
                    await to_server.send(exc)
                    continue
                await to_server.send(SessionMessage(parsed))
            await to_server.aclose()  # EOF: the server winds down as a stdio server would
            with anyio.move_on_after(SHUTDOWN_GRACE):
                await server_done.wait()
            tasks.cancel_scope.cancel()


def _sole_error(error: BaseException) -> BaseException:
    """The one error inside (nested) single-error exception groups from the task groups."""
    inner = getattr(error, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        error = inner[0]
        inner = getattr(error, "exceptions", None)
    return error


def _join_worker_threads(loop: asyncio.AbstractEventLoop | None) -> None:
    """Wait for the worker threads anyio started for this loop (servers run sync tools on
    them): they stop once the loop's main task is done, but nobody joins them, and after
    ``close()`` no thread of the connection may be left. anyio's ``WorkerThread`` records its
    loop as ``.loop``."""
    deadline = time.monotonic() + SHUTDOWN_GRACE
    for thread in threading.enumerate():
        if loop is not None and getattr(thread, "loop", None) is loop and thread.is_alive():
            thread.join(max(0.0, deadline - time.monotonic()))


def _lowlevel_and_lifespan(
    server: Any,
) -> tuple[Server[Any], contextlib.AbstractAsyncContextManager[Any]]:
    # The SDK's servers enter their lifespan in the low-level server's run().
    if _is_instance(server, _MCPSERVER):
        return server._lowlevel_server, contextlib.nullcontext()
    if _is_instance(server, _SDK1_FASTMCP):
        return server._mcp_server, contextlib.nullcontext()
    if isinstance(server, Server):
        return server, contextlib.nullcontext()
    # fastmcp: the low-level server, and a lifespan its own transports enter around run()
    return server._mcp_server, _entered(server._lifespan_manager())


@contextlib.asynccontextmanager
async def _entered(manager: Any) -> AsyncIterator[None]:
    async with manager:
        yield
