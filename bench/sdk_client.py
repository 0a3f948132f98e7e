"""Drive the official SDK's async client (``mcp`` 2.x) as its users do: one event loop.

A connection is entered and left by one long-lived "holder" task (anyio's task groups want
that); the benchmark coroutines use its ``ClientSession`` from other tasks on the same loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The one event loop every SDK measurement of the run uses."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    return _loop


def run(awaitable: Awaitable[T]) -> T:
    return loop().run_until_complete(awaitable)


def stdio_context(argv: list[str]) -> contextlib.AbstractAsyncContextManager[Any]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    return stdio_client(
        StdioServerParameters(command=argv[0], args=argv[1:]), errlog=open(os.devnull, "w")
    )


def http_context(url: str) -> contextlib.AbstractAsyncContextManager[Any]:
    from mcp.client.streamable_http import streamable_http_client

    return streamable_http_client(url)


@contextlib.asynccontextmanager
async def session(transport: contextlib.AbstractAsyncContextManager[Any]) -> Any:
    """``async with transport as (read, write), ClientSession(...)``; initialized."""
    from mcp.client.session import ClientSession

    async with transport as streams, ClientSession(streams[0], streams[1]) as client:
        await client.initialize()
        yield client


class Held:
    """An SDK session kept open across many ``run()`` calls."""

    def __init__(self, transport: contextlib.AbstractAsyncContextManager[Any]) -> None:
        self._ready: asyncio.Future[Any] = loop().create_future()
        self._stop = asyncio.Event()
        self._task = loop().create_task(self._hold(transport))
        self.session = run(self._ready)

    async def _hold(self, transport: contextlib.AbstractAsyncContextManager[Any]) -> None:
        try:
            async with session(transport) as client:
                self._ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def close(self) -> None:
        self._stop.set()
        run(self._task)
