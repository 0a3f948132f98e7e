"""Server configs in the ``mcpServers`` format, and a group of clients opened from one.

Claude Desktop, Cursor, Claude Code and VS Code describe MCP servers in the same JSON shape::

    {
      "mcpServers": {
        "time":   {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "search": {"url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${SEARCH_TOKEN}"}}
      }
    }

VS Code's ``.vscode/mcp.json`` calls the top-level key ``servers``; both are read. A stdio
entry has ``command`` and optionally ``args``, ``env`` and ``cwd``; a remote entry has ``url``
and optionally ``headers``. ``type`` (``"stdio"``, ``"http"``, ``"streamable-http"`` or
``"sse"``) is optional: without it a URL gets Streamable HTTP with the legacy HTTP+SSE
fallback. ``${VAR}``, ``${env:VAR}`` and ``${VAR:-default}`` in any string are replaced from the
environment when an entry is used (``config[name]``, ``connect(name, config=...)``,
``connect_all`` of the names given), so an unset variable without a default is an error naming
that entry and leaves the other entries usable.

Secrets: a header value is secret when its name says so (``Authorization``, ``Cookie``,
``X-Api-Key``, any ``*Token*``, ``*Secret*``...) or when it takes a variable from the
environment (the way to mark any other value secret), and so is an ``args`` or ``env`` value
taken from the environment. Such a value is a :class:`~mcp_sync.redaction.Secret`: the
entry's ``repr`` hides it, and the transport made from the entry redacts it from every error
and log record (``[redacted]``), as it does an ``env`` value under a secret name
(``GITHUB_TOKEN``). A header that cannot be sent (``Transfer-Encoding``, a value with a line
break...) is a :class:`ConfigError` naming it, as ``headers=`` would refuse it
(:func:`~mcp_sync.protocol.headers.checked_headers`).

::

    config = mcp_sync.config.load("mcp.json")
    with mcp_sync.connect("time", config=config) as client: ...
    with mcp_sync.config.connect_all(config) as group:
        tools = group.list_tools()                    # names prefixed: "time__get_current_time"
        group.call_tool("time__get_current_time", {"timezone": "UTC"})
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import Unpack

from .._client.targets import ConnectOptions, Kind, ServerConfig
from .._connection.options import ClientOptions
from .._rules.numbers import call_timeout
from ..errors import ConfigError, InvalidHeaderValue, ServerConnectError
from ..group import ClientGroup
from ..protocol.headers import checked_headers
from ..redaction import Secret, is_secret_name
from ..transports.sandbox import Sandbox
from ._files import parse_env_file, strip_jsonc
from ._http import http_options

if TYPE_CHECKING:
    from ..client import Client

__all__ = [
    "ClientGroup",
    "Config",
    "ConfigError",
    "ServerConfig",
    "ServerConnectError",
    "connect_all",
    "load",
    "parse",
]

_TYPES: dict[str, Kind] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_VAR = re.compile(
    r"\$\{(?:input:(?P<input>[^}\s]+)"
    r"|(?P<env>env:)?(?P<var>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?)\}"
)


@dataclasses.dataclass(frozen=True)
class _Context:
    """What a config's variables are filled in from."""

    environ: Mapping[str, str]
    workspace: str | None
    inputs: Mapping[str, str]

    def predefined(self, var: str) -> str | None:
        """VS Code's predefined variables (``${env:NAME}`` is the way to reach an environment
        variable of the same name)."""
        if var in ("workspaceFolder", "workspaceFolderBasename"):
            if self.workspace is None:
                return None
            return self.workspace if var == "workspaceFolder" else os.path.basename(self.workspace)
        if var == "userHome":
            return os.path.expanduser("~")
        if var == "pathSeparator":
            return os.sep
        return None


_PREDEFINED = frozenset({"workspaceFolder", "workspaceFolderBasename", "userHome", "pathSeparator"})


class Config(Mapping[str, ServerConfig]):
    """The servers of one config, by name, in file order.

    An entry's ``${VAR}`` references are resolved when it is looked up, so an unset variable
    is an error of that entry alone.
    """

    def __init__(self, servers: Iterable[ServerConfig], *, source: str = "<config>") -> None:
        self.source = source
        self._servers: dict[str, ServerConfig | Callable[[], ServerConfig]] = {
            server.name: server for server in servers
        }

    @classmethod
    def _deferred(
        cls, builders: Mapping[str, Callable[[], ServerConfig]], *, source: str
    ) -> Config:
        config = cls((), source=source)
        config._servers.update(builders)
        return config

    def __getitem__(self, name: str) -> ServerConfig:
        try:
            server = self._servers[name]
        except KeyError:
            known = ", ".join(self._servers) or "none"
            raise ConfigError(
                f"{self.source}: no server named {name!r} (servers: {known})", server=name
            ) from None
        if isinstance(server, ServerConfig):
            return server
        resolved = self._servers[name] = server()  # raises ConfigError on an unset variable
        return resolved

    def __iter__(self) -> Iterator[str]:
        return iter(self._servers)

    def __len__(self) -> int:
        return len(self._servers)

    def __repr__(self) -> str:
        return f"<mcp_sync.config.Config {self.source} servers={list(self._servers)}>"

    def connect(
        self,
        name: str,
        /,
        *,
        timeout: float | None = None,
        **options: Unpack[ConnectOptions],
    ) -> Client:
        """Connect to the server called ``name``; see :meth:`ServerConfig.connect`."""
        return self[name].connect(timeout=timeout, **options)


def load(
    path: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    inputs: Mapping[str, str] | None = None,
) -> Config:
    """Read a config file (``mcpServers`` or ``servers`` format, JSON with comments and
    trailing commas allowed); see the module docstring.

    ``${workspaceFolder}`` is the folder that holds ``.vscode/`` for a ``.vscode/mcp.json``,
    else the config file's folder. ``inputs`` gives the values of VS Code's ``${input:ID}``
    (which VS Code prompts for). Raises :class:`ConfigError` naming the file and the entry at
    fault.
    """
    source = os.fspath(path)
    try:
        text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the config: {exc.strerror or exc}") from None
    try:
        data = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    folder = Path(source).resolve().parent
    workspace = folder.parent if folder.name == ".vscode" else folder
    return parse(data, source=source, environ=environ, inputs=inputs, workspace=str(workspace))


def parse(
    data: Any,
    *,
    source: str = "<config>",
    environ: Mapping[str, str] | None = None,
    inputs: Mapping[str, str] | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> Config:
    """Build a :class:`Config` from an already parsed JSON value; ``workspace`` is what
    ``${workspaceFolder}`` stands for (and what a relative ``envFile`` is found in), ``inputs``
    the values of ``${input:ID}``."""
    env = _Context(
        os.environ if environ is None else environ,
        None if workspace is None else os.fspath(workspace),
        dict(inputs or {}),
    )
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the config must be a JSON object")
    key = "mcpServers" if "mcpServers" in data else "servers" if "servers" in data else None
    if key is None:
        raise ConfigError(f'{source}: no "mcpServers" (or "servers") object')
    entries = data[key]
    if not isinstance(entries, dict):
        raise ConfigError(f'{source}: "{key}" must be an object of named servers')
    builders: dict[str, Callable[[], ServerConfig]] = {}
    for name, entry in entries.items():
        # The entry's shape is checked now; its variables when it is used.
        with contextlib.suppress(_EntryProblem):
            _server(name, entry, source, env)
        builders[name] = functools.partial(_server, name, entry, source, env)
    return Config._deferred(builders, source=source)


class _EntryProblem(ConfigError):
    """A problem with what an entry takes from outside the file (an unset variable, an
    unreadable ``envFile``): an error of that entry, raised when it is used."""


class _UnsetVariable(_EntryProblem):
    """A ``${VAR}`` without a default whose variable is not set."""


def _sandbox(value: Any, fail: Callable[[str], ConfigError]) -> Sandbox | None:
    """The ``sandbox`` key of a stdio entry (see :meth:`Sandbox.from_config`)."""
    try:
        return Sandbox.from_config(value)
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None


def _server(name: str, entry: Any, source: str, environ: _Context) -> ServerConfig:
    where = f"{source}: server {name!r}"

    def fail(problem: str) -> ConfigError:
        return ConfigError(f"{where}: {problem}", server=name)

    def unset(var: str, key: str) -> ConfigError:
        if var.startswith("input:"):
            ident = var[len("input:") :]
            return _UnsetVariable(
                f"{where}: ${{{var}}} in {key} is a VS Code input, which VS Code prompts "
                f"for: give its value with load(..., inputs={{{ident!r}: ...}}) "
                f"(mcp-sync: --input {ident}=VALUE), or use ${{env:NAME}}",
                server=name,
            )
        if var in _PREDEFINED:
            return _UnsetVariable(
                f"{where}: ${{{var}}} in {key} has no value: no workspace folder (load() "
                "a file, or pass workspace= to parse())",
                server=name,
            )
        return _UnsetVariable(f"{where}: ${{{var}}} in {key} is not set", server=name)

    if not isinstance(entry, dict):
        raise fail("must be an object")

    def text(key: str) -> str | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise fail(f'"{key}" must be a string')
        return _expand(value, environ, lambda var: unset(var, repr(key)))

    def strings(key: str) -> tuple[str, ...]:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(f'"{key}" must be a list of strings')
        return tuple(_secret_if_taken(v, environ, lambda var: unset(var, repr(key))) for v in value)

    def table(key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise fail(f'"{key}" must be an object of strings')
        expanded = {}
        for k, v in value.items():
            text = _secret_if_taken(v, environ, lambda var, k=k: unset(var, f"{key}.{k}"))
            if key == "headers" and is_secret_name(k) and not isinstance(text, Secret):
                text = Secret(text)
            expanded[k] = text
        if key == "headers":
            try:
                checked_headers(expanded)
            except InvalidHeaderValue as exc:
                raise fail(f'"headers": {exc}') from None
        return expanded

    declared = text("type")
    kind: Kind | None = None
    if declared is not None:
        kind = _TYPES.get(declared.lower())
        if kind is None:
            raise fail(f'unknown "type" {declared!r} (use "stdio", "http" or "sse")')
    command, url = text("command"), text("url") or text("serverUrl")
    if kind is None:
        if command and url:
            raise fail('has both "command" and "url": say which with "type"')
        kind = "stdio" if command else "http" if url else None
    if kind is None:
        raise fail('needs "command" (a program to run) or "url" (a remote server)')
    if kind == "stdio":
        if not command:
            raise fail('a stdio server needs "command"')
        env = {**_env_file(text("envFile"), environ, where, name), **table("env")}
        server = ServerConfig(
            name,
            "stdio",
            command=command,
            args=strings("args"),
            env=env,
            cwd=text("cwd"),
            declared_type=declared,
            sandbox=_sandbox(entry.get("sandbox"), fail),
        )
        return server
    if entry.get("envFile") is not None:
        raise fail('"envFile" applies to stdio servers (a remote server takes "headers")')
    if not url:
        raise fail(f'a {kind} server needs "url"')
    if not url.startswith(("http://", "https://")):
        raise fail(f'"url" must start with http:// or https://, not {url!r}')
    http = http_options(entry, text, environ.workspace, fail)
    return ServerConfig(
        name, kind, url=url, headers=table("headers"), declared_type=declared, http=http
    )


def _env_file(path: str | None, context: _Context, where: str, name: str) -> dict[str, str]:
    """The variables of an entry's ``envFile`` (a relative path is in the workspace folder),
    secret like every value taken from outside the config."""
    if path is None:
        return {}
    full = Path(context.workspace or os.getcwd(), os.path.expanduser(path))
    try:
        text = full.read_text(encoding="utf-8")
    except OSError as exc:
        raise _EntryProblem(
            f"{where}: cannot read envFile {str(full)!r}: {exc.strerror or exc}", server=name
        ) from None
    except UnicodeDecodeError:
        raise _EntryProblem(f"{where}: envFile {str(full)!r} is not UTF-8", server=name) from None
    try:
        found = parse_env_file(text, str(full))
    except ConfigError as exc:
        raise _EntryProblem(f"{where}: {exc}", server=name) from None
    return {key: Secret(value, [value]) if value else value for key, value in found.items()}


def _secret_if_taken(value: str, environ: _Context, missing: Any) -> str:
    """``value`` expanded, as a :class:`Secret` if it took a variable from ``environ``."""
    parts: list[str] = []
    text = _expand(value, environ, missing, parts)
    return Secret(text, parts) if parts else text


def _expand(value: str, context: _Context, missing: Any, taken: list[str] | None = None) -> str:
    """``value`` with its variables replaced; the values taken from the environment or the
    inputs are appended to ``taken``."""

    def replace(match: re.Match[str]) -> str:
        ident = match.group("input")
        if ident is not None:
            if ident not in context.inputs:
                raise missing(f"input:{ident}")
            found = context.inputs[ident]
        else:
            var, default = match.group("var"), match.group("default")
            if match.group("env") is None and var in _PREDEFINED:
                known = context.predefined(var)
                if known is None:
                    raise missing(var)
                return known
            if var not in context.environ:
                if default is not None:
                    return default
                raise missing(var)
            found = context.environ[var]
        if taken is not None:
            taken.append(found)
        return found

    return _VAR.sub(replace, value)


def resolve(config: Config | str | os.PathLike[str] | Mapping[str, Any]) -> Config:
    """``config`` as a :class:`Config`: loaded from a path, parsed from a dict, or as is."""
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return parse(dict(config), source="<dict>")
    return load(config)


# -- several servers at once ----------------------------------------------------------------


def connect_all(
    config: Config | str | os.PathLike[str] | Mapping[str, Any],
    names: Sequence[str] | None = None,
    *,
    timeout: float | None = None,
    **client_options: Unpack[ClientOptions],
) -> ClientGroup:
    """Connect to every server of ``config`` (or those in ``names``), in parallel.

    If one fails, the others are closed and :class:`ServerConnectError` names the failing one.
    """
    timeout = call_timeout(timeout, "connect_all")
    resolved = resolve(config)
    chosen = list(names) if names is not None else list(resolved)
    entries = [resolved[name] for name in chosen]
    clients: dict[str, Client] = {}
    errors: dict[str, BaseException] = {}
    lock = threading.Lock()

    def open_one(entry: ServerConfig) -> None:
        try:
            client = entry.connect(timeout=timeout, **client_options)
        except BaseException as exc:
            with lock:
                errors[entry.name] = exc
            return
        with lock:
            clients[entry.name] = client

    threads = [
        threading.Thread(target=open_one, args=(entry,), name=f"mcp-sync-connect-{entry.name}")
        for entry in entries
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:
        if errors or any(thread.is_alive() for thread in threads):
            for thread in threads:
                thread.join()
            for client in clients.values():
                client.close()
    if errors:
        name = next(n for n in chosen if n in errors)
        raise ServerConnectError(name, errors[name]) from errors[name]
    return ClientGroup({name: clients[name] for name in chosen})
