"""``mcp_sync.connect()``: one line from a command or a URL to a connected client."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from .targets import ConnectOptions, Target, open_client, split_options

if TYPE_CHECKING:
    from ..client import Client
    from ..config import Config

__all__ = ["connect", "resolve_target"]


def connect(
    target: Target,
    *,
    timeout: float | None = None,
    config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    **options: Unpack[ConnectOptions],
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
    :mod:`mcp_sync.integrations.inprocess`. The other keyword arguments are
    :class:`Client`'s options (:class:`~mcp_sync.ClientOptions`: see ``Client``) and how the
    target is reached (:class:`~mcp_sync.TransportOptions`): ``headers`` and ``auth`` for
    HTTP, ``env``, ``cwd`` and ``on_stderr`` for a command, ``sandbox`` and the HTTP settings
    below::

        with mcp_sync.connect(["mcp-server-time"], request_timeout=10) as client:
            print(client.list_tools())

    With ``recovery=True`` (or a :class:`~mcp_sync.Backoff`), a lost connection is made again
    from the same command or URL on the next call (see :class:`Client`).

    With ``config`` (a path to an ``mcpServers`` JSON file, its parsed dict, or a
    :class:`mcp_sync.config.Config`), ``target`` is the name of a server in it::

        client = mcp_sync.connect("time", config="mcp.json")

    ``sandbox=True`` (or a :class:`~mcp_sync.Sandbox`) runs a command's server in a sandbox
    (see ``docs/sandbox.md``), its roots being the local paths among ``roots``; a config
    entry's ``sandbox`` key does the same.

    ``verify`` (``"system"``: the operating system's trust store; a CA bundle path; True),
    ``cert`` (a client certificate) and ``proxy`` (a proxy URL, credentials included) apply to
    HTTP, replacing what the environment says (see docs/transports.md, "Corporate networks");
    ``user_agent_suffix`` (``"my-app/1.2"``) names the application after mcp-sync in the
    ``User-Agent`` of every HTTP request to the server.
    """
    target = resolve_target(target, config)
    client_options, transport_options = split_options(options)
    return open_client(
        target, timeout=timeout, client_options=client_options, transport_options=transport_options
    )


def resolve_target(
    target: Target, config: Config | str | os.PathLike[str] | Mapping[str, Any] | None
) -> Target:
    """``target`` itself, or with ``config`` the entry of that name in it."""
    if config is None:
        return target
    from ..config import resolve

    if not isinstance(target, str):
        raise TypeError("with config=, the target is a server name (a string)")
    return resolve(config)[target]
