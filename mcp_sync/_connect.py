"""``mcp_sync.connect()``: one line from a command or a URL to a connected client."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._targets import ClientOptions, Target, open_client
from ._version import __version__
from .backoff import Backoff
from .config import Config, resolve
from .pins import PinSource
from .protocol.types import Root
from .protocol.versions import LATEST_HANDSHAKE
from .transports._http.options import ClientCert, HttpOptions, Verify
from .transports.sandbox import Sandbox

if TYPE_CHECKING:
    from .auth import AuthProvider
    from .client import Client

__all__ = ["connect"]


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
    sandbox: Sandbox | bool | None = None,
    verify: Verify | None = None,
    cert: ClientCert | None = None,
    proxy: str | None = None,
    # The Client's options, as Client() takes them (a test keeps the two in step).
    name: str = "mcp_sync",
    version: str = __version__,
    title: str | None = None,
    capabilities: Mapping[str, Any] | None = None,
    protocol_version: str = LATEST_HANDSHAKE,
    request_timeout: float = 30.0,
    max_total_timeout: float | None = None,
    roots: (
        Sequence[Root | str | os.PathLike[str]]
        | Callable[[], Sequence[Root | str | os.PathLike[str]]]
        | None
    ) = None,
    strict_capabilities: bool = True,
    protocol: str = "auto",
    probe_timeout: float = 2.0,
    max_input_rounds: int = 8,
    cache: bool = False,
    recovery: Backoff | bool | None = None,
    auto_reinitialize: bool = False,
    on_close: Callable[[BaseException | None], None] | None = None,
    pin: PinSource = None,
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
    :mod:`mcp_sync.integrations.inprocess`. ``headers`` and ``auth`` apply to HTTP. The
    keyword arguments from ``name`` on are :class:`Client`'s options (see there)::

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
    HTTP, replacing what the environment says (see docs/transports.md, "Corporate networks").
    """
    if config is not None:
        if not isinstance(target, str):
            raise TypeError("with config=, the target is a server name (a string)")
        target = resolve(config)[target]
    client_options: ClientOptions = {
        "name": name,
        "version": version,
        "title": title,
        "capabilities": capabilities,
        "protocol_version": protocol_version,
        "request_timeout": request_timeout,
        "max_total_timeout": max_total_timeout,
        "roots": roots,
        "strict_capabilities": strict_capabilities,
        "protocol": protocol,
        "probe_timeout": probe_timeout,
        "max_input_rounds": max_input_rounds,
        "cache": cache,
        "recovery": recovery,
        "auto_reinitialize": auto_reinitialize,
        "on_close": on_close,
        "pin": pin,
    }
    return open_client(
        target,
        headers=headers,
        auth=auth,
        env=env,
        cwd=cwd,
        on_stderr=on_stderr,
        timeout=timeout,
        client_options=client_options,
        sandbox=sandbox,
        http=_http_options(verify, cert, proxy),
    )


def _http_options(verify: Verify | None, cert: ClientCert | None, proxy: str | None) -> HttpOptions:
    options: HttpOptions = {}
    if verify is not None:
        options["verify"] = verify
    if cert is not None:
        options["cert"] = cert
    if proxy is not None:
        options["proxy"] = proxy
    return options
