"""``mcp_sync.connect()``: one line from a command or a URL to a connected client."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .client import Client
from .errors import McpError
from .transports.base import Transport

if TYPE_CHECKING:
    import os

    from .auth import AuthProvider
    from .config import Config

__all__ = ["connect", "transport_for"]


#: A Python MCP server object: mcp's ``MCPServer`` or ``Server``, fastmcp's ``FastMCP``
#: (typed loosely: mcp_sync does not import them unless given one).
ServerObject = Any
#: What ``connect()`` accepts: a command, a URL, a transport, a function making transports, or
#: a server object to serve in this process.
Target = str | Sequence[str] | Transport | Callable[[], Transport] | ServerObject


def transport_for(
    target: Target,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthProvider | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Transport:
    """The transport ``connect()`` would use for ``target`` (HTTP: Streamable HTTP)."""
    if isinstance(target, Transport):
        return target
    if callable(target):
        return target()
    if not isinstance(target, (str, Sequence)):  # a server object, served in this process
        try:
            from .integrations.inprocess import InProcessTransport
        except ImportError as exc:  # without `mcp` installed it cannot be a server object
            raise TypeError(
                f"cannot connect to a {type(target).__qualname__}: give a command, a URL, a"
                " Transport, or an MCP server object (which needs the `mcp` package)"
            ) from exc
        return InProcessTransport(target)
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        from .transports.http import StreamableHttpTransport

        return StreamableHttpTransport(target, headers=headers, auth=auth)
    argv = shlex.split(target) if isinstance(target, str) else list(target)
    if not argv:
        raise ValueError("connect() needs a command to run or a URL")
    from .transports.stdio import StdioTransport

    return StdioTransport(argv[0], argv[1:], env=env, cwd=cwd)


def connect(
    target: Target,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthProvider | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float | None = None,
    config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    **client_options: Any,
) -> Client:
    """Connect a new :class:`Client` to ``target`` and return it, ready to call.

    ``target`` is a command (``["npx", "-y", "server"]`` or ``"uvx server --flag"``, spawned
    over stdio with ``env`` merged over this process's environment and ``cwd``), a URL
    (Streamable HTTP, falling back to the 2024-11-05 HTTP+SSE transport when the server answers
    the ``initialize`` POST with 400, 404 or 405), a :class:`Transport`, a function returning
    a new transport, or a Python MCP server object (the official SDK's ``MCPServer``, or
    ``FastMCP`` in mcp 1.x, fastmcp's ``FastMCP``), served in this process by
    :mod:`mcp_sync.integrations.inprocess`. ``headers`` and ``auth`` apply to HTTP. Other
    keyword arguments go to :class:`Client`::

        with mcp_sync.connect(["mcp-server-time"], request_timeout=10) as client:
            print(client.list_tools())

    With ``recovery=True`` (or a :class:`~mcp_sync.Backoff`), a lost connection is made again
    from the same command or URL on the next call (see :class:`Client`).

    With ``config`` (a path to an ``mcpServers`` JSON file, its parsed dict, or a
    :class:`mcp_sync.config.Config`), ``target`` is the name of a server in it::

        client = mcp_sync.connect("time", config="mcp.json")
    """
    if config is not None:
        if not isinstance(target, str):
            raise TypeError("with config=, the target is a server name (a string)")
        from .config import resolve

        return resolve(config)[target].connect(auth=auth, timeout=timeout, **client_options)
    def make() -> Transport:
        return transport_for(target, headers=headers, auth=auth, env=env, cwd=cwd)

    client = Client(**client_options)
    try:
        return client.connect(target if isinstance(target, Transport) else make, timeout=timeout)
    except Exception as exc:
        if not (isinstance(target, str) and target.startswith(("http://", "https://"))):
            raise
        from .transports.http import fallback_to_sse

        if not fallback_to_sse(exc):
            raise
        primary = exc
    from .transports.http import fallback_failed
    from .transports.sse_legacy import SseTransport

    def make_legacy() -> Transport:
        return SseTransport(str(target), headers=headers, auth=auth)

    try:
        return Client(**client_options).connect(make_legacy, timeout=timeout)
    except McpError as fallback:  # both failed: the first attempt's status goes first
        raise fallback_failed(primary, fallback) from fallback
