"""What ``connect()`` accepts, and the one place each kind of target becomes a transport.

A target is a command (a list, or a string split like a shell would), an ``http(s)://`` URL,
a :class:`~mcp_sync.transports.base.Transport`, a function making transports, a Python MCP
server object (served in this process), or one entry of an ``mcpServers`` config
(:class:`ServerConfig`, defined here because it is a target; :mod:`mcp_sync.config` reads
files into them). :func:`transport_for` builds a transport from any of them;
:func:`open_client` connects a new client to one, falling back from Streamable HTTP to the
2024-11-05 HTTP+SSE transport for a URL that does not say which it is.
``mcp_sync.connect``, ``ClientGroup.add``, the config's ``connect`` methods and the command
line all come through here.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

from typing_extensions import Unpack

from .._connection.options import ClientOptions
from .._rules.deadline import call_deadline, under
from .._rules.values import environment
from ..client import Client
from ..errors import McpError
from ..protocol.headers import checked_headers
from ..protocol.types import Root
from ..transports._http.options import HttpOptions
from ..transports.base import Transport
from ..transports.stdio import StdioTransport

if TYPE_CHECKING:
    from ..auth import AuthProvider
    from ..transports._stdout_watch import StdoutWatch
    from ..transports.sandbox import Sandbox

__all__ = [
    "ConnectOptions",
    "Kind",
    "ServerConfig",
    "Target",
    "TransportOptions",
    "open_client",
    "split_options",
    "transport_for",
]

Kind = Literal["stdio", "http", "sse"]
RootsOption = (
    Sequence[Root | str | os.PathLike[str]]
    | Callable[[], Sequence[Root | str | os.PathLike[str]]]
    | None
)


class TransportOptions(HttpOptions, total=False):
    """How a target is reached, declared once for ``connect()``, :func:`transport_for`, the
    pytest fixtures and the CLI: ``headers`` and ``auth`` (HTTP), ``env`` (merged over this
    process's environment), ``cwd`` and ``on_stderr`` (a command), ``sandbox`` (a command run
    confined), and the HTTP transport's wire-level settings
    (:class:`~mcp_sync.transports._http.options.HttpOptions`: ``verify``, ``cert``, ``proxy``,
    ``user_agent_suffix``)."""

    headers: Mapping[str, str] | None
    auth: AuthProvider | None
    env: Mapping[str, str | None] | None
    cwd: str | os.PathLike[str] | None
    on_stderr: Callable[[str], None] | None
    sandbox: Sandbox | bool | None


class ConnectOptions(ClientOptions, TransportOptions, total=False):
    """What ``connect()`` and the pytest fixtures take besides the target, ``timeout`` and
    ``config``: the client's options (:class:`~mcp_sync.ClientOptions`) and how the target is
    reached (:class:`TransportOptions`), each declared once there."""


def split_options(options: ConnectOptions) -> tuple[ClientOptions, TransportOptions]:
    """``options`` as the client's and the transport's (an HTTP setting given as None is not
    given: the environment's applies)."""
    client: dict[str, Any] = {}
    transport: dict[str, Any] = {}
    for name, value in options.items():
        if name not in TransportOptions.__annotations__:
            client[name] = value
        elif value is not None or name not in HttpOptions.__annotations__:
            transport[name] = value
    return client, transport  # type: ignore[return-value]


def _http_options(options: TransportOptions) -> HttpOptions:
    """The wire-level settings among ``options``."""
    return {k: v for k, v in options.items() if k in HttpOptions.__annotations__}  # type: ignore[return-value]


@dataclass(frozen=True)
class ServerConfig:
    """One entry of a config: how to reach one server (variables already expanded)."""

    name: str
    kind: Kind
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: ``type`` as written, or None when the entry had none.
    declared_type: str | None = None
    #: The ``sandbox`` key of a stdio entry: None (not sandboxed) or how it is confined.
    sandbox: Sandbox | None = None
    #: A remote entry's ``verify``, ``clientCert``/``clientKey`` and ``proxy``.
    http: HttpOptions = field(default_factory=lambda: HttpOptions())

    def transport(self, **options: Unpack[TransportOptions]) -> Transport | str:
        """The transport for this entry, reached with ``options`` merged over the entry's own
        (see :func:`transport_for`), or the URL itself when ``connect()`` should pick
        (Streamable HTTP with the legacy fallback)."""
        if self.url is not None and _fallback_url(self) is not None:
            return self.url
        return transport_for(self, **options)

    def connect(self, *, timeout: float | None = None, **options: Unpack[ConnectOptions]) -> Client:
        """A new :class:`~mcp_sync.Client` connected to this server: ``options`` are what
        :func:`mcp_sync.connect` takes, the transport's merged over the entry's own."""
        client_options, transport_options = split_options(options)
        return open_client(
            self,
            timeout=timeout,
            client_options=client_options,
            transport_options=transport_options,
        )


ServerObject = Any
"""A Python MCP server object: mcp's ``MCPServer`` or ``Server``, fastmcp's ``FastMCP``
(typed loosely: mcp_sync does not import them unless given one)."""
Target = str | Sequence[str] | Transport | Callable[[], Transport] | ServerConfig | ServerObject
"""What :func:`~mcp_sync.connect` and :func:`~mcp_sync.transport_for` accept: a command, a URL,
a transport, a function making transports, a config entry, or a server object to serve in
this process."""


def transport_for(
    target: Target, *, roots: RootsOption = None, **options: Unpack[TransportOptions]
) -> Transport:
    """The transport ``connect()`` would use first for ``target`` (a URL: Streamable HTTP).

    ``options`` (:class:`TransportOptions`): ``headers``, ``auth`` and the wire-level
    settings apply to HTTP, ``env`` (merged over this process's environment), ``cwd`` and
    ``on_stderr`` to a command; for a :class:`ServerConfig` they are merged over the entry's
    own. ``sandbox`` (or the entry's) confines a command, with the file paths among ``roots``
    (the client's) as its roots; a sandbox for a target that is not a command raises
    ``ValueError``.
    """
    for name in options.keys() - TransportOptions.__annotations__.keys():
        raise TypeError(f"transport_for() got an unexpected keyword argument {name!r}")
    wanted = _sandbox_for(target, options.get("sandbox"))
    if wanted is not None:
        wanted = wanted.with_roots(_root_paths(roots))
        if not isinstance(target, ServerConfig) and (
            not isinstance(target, (str, Sequence)) or (isinstance(target, str) and _is_url(target))
        ):
            raise ValueError("sandbox= applies to a server started from a command only")
    if isinstance(target, Transport):
        return target
    if isinstance(target, ServerConfig):
        options = _over_entry(target, options)
        if target.kind == "stdio":
            assert target.command is not None
            return _stdio([target.command, *target.args], options, wanted)
        assert target.url is not None
        if wanted is not None:
            raise ValueError(f"server {target.name!r} is not a command: it cannot be sandboxed")
        return _http(target.url, target.kind, options)
    if callable(target):
        made: Transport = target()
        return made
    if not isinstance(target, (str, Sequence)):  # a server object, served in this process
        try:
            from ..integrations.inprocess import InProcessTransport
        except ImportError as exc:  # without `mcp` installed it cannot be a server object
            raise TypeError(
                f"cannot connect to a {type(target).__qualname__}: give a command, a URL, a"
                " Transport, or an MCP server object (which needs the `mcp` package)"
            ) from exc
        return InProcessTransport(target)
    if isinstance(target, str) and _is_url(target):
        return _http(target, "http", options)
    argv = shlex.split(target) if isinstance(target, str) else list(target)
    if not argv:
        raise ValueError("connect() needs a command to run or a URL")
    return _stdio(argv, options, wanted)


def _over_entry(entry: ServerConfig, options: TransportOptions) -> TransportOptions:
    """``options`` merged over a config entry's own: its headers, environment and HTTP
    settings key by key, its working directory unless ``options`` names one."""
    merged: TransportOptions = {**entry.http, **options}
    merged["headers"] = {**entry.headers, **checked_headers(options.get("headers") or {})}
    merged["env"] = {**entry.env, **(environment(options.get("env"), "env") or {})} or None
    merged["cwd"] = options.get("cwd") or entry.cwd
    return merged


def _sandbox_for(target: Target, sandbox: Sandbox | bool | None) -> Sandbox | None:
    """The sandbox asked for by ``sandbox=`` or by a config entry, if any."""
    own = target.sandbox if isinstance(target, ServerConfig) else None
    if sandbox is None and own is None:
        return None  # (the sandbox's module is loaded only for a server that has one)
    from ..transports.sandbox import Sandbox

    wanted = Sandbox.of(sandbox)
    # the entry's own sandbox says more than a bare True (the CLI's --sandbox)
    return own if own is not None and not isinstance(sandbox, Sandbox) else wanted


def _root_paths(roots: RootsOption) -> list[str]:
    """The local paths among the client's roots (paths and ``file://`` URIs)."""
    if roots is None:
        return []
    items = roots() if callable(roots) else roots
    paths = []
    for root in items:
        text = root.uri if isinstance(root, Root) else os.fspath(root)
        if text.startswith("file://"):
            text = unquote(urlsplit(text).path)
        elif "://" in text:
            continue
        paths.append(text)
    return paths


def open_client(
    target: Target,
    *,
    timeout: float | None = None,
    client_options: ClientOptions,
    transport_options: TransportOptions | None = None,
) -> Client:
    """A new :class:`Client` with ``client_options``, connected to ``target`` reached with
    ``transport_options``.

    It is given a function making transports (not one transport), so that ``recovery=`` can
    make a new one after a loss. A URL that does not name its transport whose Streamable
    HTTP ``initialize`` is refused the way an old server refuses it is tried again over
    HTTP+SSE; when both fail, the first attempt's error is raised with the second's.
    """

    # A stdio server started from a command is watched while it connects: one that prints a
    # local URL on stdout is an HTTP server, and fails the connection at once (not at the
    # probe plus request_timeout), and other noise there is quoted in the error.
    watches: list[StdoutWatch] = []

    reach: TransportOptions = transport_options or {}

    def make() -> Transport:
        transport = transport_for(target, roots=client_options.get("roots"), **reach)
        if not watches and isinstance(transport, StdioTransport):
            from ..transports._stdout_watch import StdoutWatch

            watches.append(StdoutWatch(transport))
        return transport

    fallback = _fallback_url(target)
    client = Client(**client_options)
    # One deadline for both attempts: the fallback gets what the first one left.
    deadline = call_deadline(timeout, what="connect", default=client.request_timeout)
    try:
        with under(deadline):
            return client.connect(target if isinstance(target, Transport) else make)
    except Exception as exc:
        explained = watches[0].explain(exc) if watches else exc
        if explained is not exc:
            raise explained from exc
        if fallback is None:
            raise
        from ..transports.http import fallback_to_sse

        if not fallback_to_sse(exc):
            raise
        primary = exc
    finally:
        for watch in watches:
            watch.stop()
    from ..transports.http import fallback_failed

    if isinstance(target, ServerConfig):
        reach = _over_entry(target, reach)

    def make_legacy() -> Transport:
        return _http(fallback, "sse", reach)

    try:
        with under(deadline):
            return Client(**client_options).connect(make_legacy)
    except McpError as legacy:  # both failed: the first attempt's status goes first
        raise fallback_failed(primary, legacy) from legacy


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _fallback_url(target: Target) -> str | None:
    """The URL to try over HTTP+SSE if Streamable HTTP is refused: a URL given as such, or a
    config entry's URL without a ``type``."""
    if isinstance(target, str) and _is_url(target):
        return target
    if isinstance(target, ServerConfig) and target.declared_type is None:
        return target.url
    return None


def _http(url: str, kind: Kind, options: TransportOptions) -> Transport:
    headers, auth, settings = options.get("headers"), options.get("auth"), _http_options(options)
    if kind == "sse":
        from ..transports.sse_legacy import SseTransport

        return SseTransport(url, headers=headers, auth=auth, **settings)
    from ..transports.http import StreamableHttpTransport

    return StreamableHttpTransport(url, headers=headers, auth=auth, **settings)


def _stdio(argv: Sequence[str], options: TransportOptions, sandbox: Sandbox | None) -> Transport:
    return StdioTransport(
        argv[0],
        argv[1:],
        env=options.get("env"),
        cwd=options.get("cwd"),
        on_stderr=options.get("on_stderr"),
        sandbox=sandbox,
    )
