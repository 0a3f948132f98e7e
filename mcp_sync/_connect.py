"""``mcp_sync.connect()``: one line from a command or a URL to a connected client."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._targets import ServerConfig, Target, open_client, transport_for
from .config import Config, resolve

if TYPE_CHECKING:
    import os

    from .auth import AuthProvider
    from .client import Client

__all__ = ["ServerConfig", "Target", "connect", "transport_for"]


def connect(
    target: Target,
    *,
    headers: Mapping[str, str] | None = None,
    auth: AuthProvider | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    on_stderr: Callable[[str], None] | None = None,
    timeout: float | None = None,
    config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    **client_options: Any,
) -> Client:
    """Connect a new :class:`Client` to ``target`` and return it, ready to call.

    ``target`` is a command (``["npx", "-y", "server"]`` or ``"uvx server --flag"``, spawned
    over stdio with ``env`` merged over this process's environment and ``cwd``; ``on_stderr(text)``
    gets its stderr as it comes, whose tail errors also show), a URL
    (Streamable HTTP, falling back to the 2024-11-05 HTTP+SSE transport when the server answers
    the ``initialize`` POST with 400, 404 or 405), a :class:`Transport`, a function returning
    a new transport, an entry of a config (:class:`~mcp_sync.config.ServerConfig`), or a
    Python MCP server object (the official SDK's ``MCPServer``, or
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
        target = resolve(config)[target]
    return open_client(
        target, headers=headers, auth=auth, env=env, cwd=cwd, on_stderr=on_stderr, timeout=timeout,
        client_options=client_options,
    )
