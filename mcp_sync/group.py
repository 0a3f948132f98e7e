"""Several servers used as one: their tools, prompts, resources and templates in one place.

::

    with mcp_sync.ClientGroup() as group:
        group.add("time", ["mcp-server-time"])
        group.add("files", "http://127.0.0.1:3001/mcp")
        tools = group.list_tools()                 # "time__get_current_time", ...
        group.call_tool("time__get_current_time", {"timezone": "UTC"})
        group.remove("files")                      # closes that client

Collision policy (what happens when two servers offer the same thing):

- **Tools and prompts** are always listed under ``<server>__<name>``, sanitised to what LLM
  APIs accept (``[A-Za-z0-9_-]``, at most 64 characters) and made unique with ``_2``, ``_3``
  suffixes when sanitising makes two equal. Two servers' ``search`` tools are ``a__search`` and
  ``b__search``; nothing is hidden or replaced. :meth:`ClientGroup.call_tool` and
  :meth:`ClientGroup.get_prompt` take these names.
- **A name, once given, reaches one server, always the same one.** The group remembers the
  name each (server, tool) got and gives it that name in every later listing, whatever the
  order or membership; a removed server's names are kept for it (re-added, it gets them
  back) and never go to another server. Server names that are equal once sanitised
  (``my.srv`` and ``my_srv``), or that hold the separator once sanitised, are refused.
  Up to :data:`MAX_BOUND_NAMES` names of each kind are remembered; past that, the oldest
  not in the current listing are forgotten.
- **Resources and templates** keep their URIs: a URI is an address, not a label.
  :meth:`ClientGroup.read_resource` sends a URI to the one server that listed it, or whose
  template matches it. When several did, the read raises :class:`UnknownName` naming them
  instead of guessing: pass ``server=``. Each listed item says where it came from in
  ``item.meta["io.mcp-sync/server"]``.

A listing asks every server at once and returns what the servers that answered offered, in
the group's order. A server that fails (gone, timed out, refused) is left out of that listing
and reported in :attr:`ClientGroup.failures`; it does not fail the listing.

Each server has a circuit breaker (:class:`CircuitBreaker`, on by default, per server with
``add(..., breaker=)``): after ``threshold`` outages in a row (transport failures and
timeouts; never tool errors or JSON-RPC errors, which are answers) the group stops calling it
for ``cool_down`` seconds. Its calls raise :class:`~mcp_sync.errors.ServerUnavailable` at
once, and listings leave it out with that error in :attr:`ClientGroup.failures`. Then one
call is let through as a trial (with ``recovery=``, that call is the reconnection); an answer
closes the breaker. The breaker sees the calls made through the group, not those made on
``group[name]`` directly.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from ._connection.breaker import Breaker, BreakerStatus, CircuitBreaker, policy_for
from ._rules.numbers import call_timeout
from .errors import GroupError, McpError, ServerUnavailable, UnknownName
from .llm import MAX_NAME_LENGTH, sanitize_tool_name
from .protocol.types.skills import SKILLS_EXTENSION

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._client.targets import ServerConfig
    from ._connection.options import ClientOptions
    from .client import Client
    from .protocol.types import (
        CallToolResult,
        GetPromptResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        Skill,
        Tool,
    )
    from .skills import LoadedSkill
    from .transports.base import Transport

__all__ = [
    "MAX_BOUND_NAMES",
    "SERVER_META_KEY",
    "BreakerStatus",
    "CircuitBreaker",
    "ClientGroup",
]

logger = logging.getLogger(__name__)

#: The ``_meta`` key on every item a group lists that names the server it came from.
SERVER_META_KEY = "io.mcp-sync/server"
#: How many prefixed names of each kind (tools, prompts) a group keeps bound to their server.
MAX_BOUND_NAMES = 10_000

_Item = TypeVar("_Item", "Tool", "Prompt", "Resource", "ResourceTemplate", "Skill")
_Named = TypeVar("_Named", "Tool", "Prompt")  # items a group renames
_T = TypeVar("_T")


class ClientGroup:
    """Clients of several servers, used together; closes them all on exit.

    ``clients`` maps a name of your choosing to what :meth:`add` takes: a connected
    :class:`~mcp_sync.Client`, or a target to connect here (one after the other) with
    ``timeout`` and ``client_options``; an entry of another type raises ``TypeError`` naming
    it, before anything is started. If one fails to connect, those connected before it are
    closed. More servers can be :meth:`add`-ed and :meth:`remove`-d at any time, from any
    thread. ``breaker`` is every server's :class:`CircuitBreaker` policy (True: the default
    one; None or False: none). The module docstring states the collision and failure policy.
    """

    SEPARATOR = "__"

    def __init__(
        self,
        clients: Mapping[str, Client | ServerConfig | Transport | str | Sequence[str]]
        | None = None,
        *,
        breaker: CircuitBreaker | bool | None = True,
        timeout: float | None = None,
        **client_options: Unpack[ClientOptions],
    ) -> None:
        self._lock = threading.Lock()
        self._policy = policy_for(breaker, CircuitBreaker())
        self._breakers: dict[str, Breaker] = {}
        self._clients: dict[str, Client] = {}
        self._tool_routes: dict[str, tuple[str, str]] = {}
        self._prompt_routes: dict[str, tuple[str, str]] = {}
        #: Every name given so far, by kind: name -> (server, item), oldest first. A name
        #: stays bound to its server for the group's life (see the module docstring).
        self._bound: dict[str, dict[str, tuple[str, str]]] = {"tool": {}, "prompt": {}}
        self._resource_routes: dict[str, list[str]] = {}
        self._templates: list[tuple[str, re.Pattern[str]]] = []
        self._failures: dict[str, McpError] = {}
        entries = dict(clients or {})
        for number, (name, target) in enumerate(entries.items()):
            self._check_name(name)
            _check_target(name, target)
            for other in list(entries)[:number]:
                if _safe(other) == _safe(name):
                    raise GroupError(
                        f"the server names {other!r} and {name!r} are both {_safe(name)!r} once"
                        " made safe for tool names: pick another name"
                    )
        try:
            for name, target in entries.items():
                self.add(name, target, timeout=timeout, **client_options)
        except BaseException:
            from .client import Client

            for name, target in entries.items():
                if name in self._clients and not isinstance(target, Client):
                    self._clients[name].close()
            raise

    # -- membership ------------------------------------------------------------------------

    @property
    def clients(self) -> Mapping[str, Client]:
        """The group's clients by name, as of now (a read-only snapshot)."""
        with self._lock:
            return MappingProxyType(dict(self._clients))

    def __getitem__(self, server: str) -> Client:
        with self._lock:
            client = self._clients.get(server)
        if client is None:
            raise UnknownName(f"no server {server!r} in this group", name=server)
        return client

    def __contains__(self, server: object) -> bool:
        with self._lock:
            return server in self._clients

    def __iter__(self) -> Iterator[str]:
        return iter(self.clients)

    def __len__(self) -> int:
        with self._lock:
            return len(self._clients)

    def add(
        self,
        name: str,
        target: Client | ServerConfig | Transport | str | Sequence[str],
        /,
        *,
        timeout: float | None = None,
        breaker: CircuitBreaker | bool | None = True,
        **client_options: Unpack[ClientOptions],
    ) -> Client:
        """Add a server under ``name`` and return its client.

        ``target`` is a connected :class:`~mcp_sync.Client` (the group takes it over), a
        :class:`~mcp_sync.config.ServerConfig`, or anything :func:`mcp_sync.connect` accepts
        (a command, a URL, a transport), connected here with ``timeout`` and
        ``client_options``. ``breaker``: this server's :class:`CircuitBreaker` policy (True:
        the group's; None or False: none). Raises :class:`GroupError` if the name is taken or
        contains ``__``, ``TypeError`` for a target of another type; a failed connection
        raises as :func:`mcp_sync.connect` does.
        """
        self._check_name(name)
        _check_target(name, target)
        policy = policy_for(breaker, self._policy)
        timeout = call_timeout(timeout, "add")
        with self._lock:
            if name in self._clients:
                raise GroupError(f"a server named {name!r} is already in this group")
            self._check_clash(name)
        client = self._connect(target, timeout, client_options)
        with self._lock:
            try:  # another thread may have added the same name, or a clashing one, meanwhile
                if name in self._clients:
                    raise GroupError(f"a server named {name!r} is already in this group")
                self._check_clash(name)
            except GroupError:
                if client is not target:
                    client.close()
                raise
            self._clients[name] = client
            if policy is not None:
                self._breakers[name] = Breaker(name, policy)
        return client

    def set_breaker(self, server: str, breaker: CircuitBreaker | bool | None) -> None:
        """Give ``server`` a fresh circuit breaker under ``breaker`` (True: the group's
        policy; None or False: no breaker)."""
        policy = policy_for(breaker, self._policy)
        with self._lock:
            if server not in self._clients:
                raise UnknownName(f"no server {server!r} in this group", name=server)
            self._breakers.pop(server, None)
            if policy is not None:
                self._breakers[server] = Breaker(server, policy)

    def remove(self, name: str, *, close: bool = True) -> Client:
        """Take the server ``name`` out of the group (closing its client unless
        ``close=False``) and forget its tools, prompts and resources."""
        with self._lock:
            client = self._clients.pop(name, None)
            if client is not None:
                self._forget(name)
                self._breakers.pop(name, None)
        if client is None:
            raise UnknownName(f"no server {name!r} in this group", name=name)
        if close:
            client.close()
        return client

    def close(self) -> None:
        """Close every client (idempotent)."""
        for client in self.clients.values():
            client.close()

    def __enter__(self) -> ClientGroup:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<mcp_sync.ClientGroup servers={list(self.clients)}>"

    @property
    def failures(self) -> Mapping[str, McpError]:
        """The servers the last listing had to leave out, with the error each raised
        (:class:`~mcp_sync.errors.ServerUnavailable` for one whose breaker is open)."""
        with self._lock:
            return MappingProxyType(dict(self._failures))

    @property
    def breakers(self) -> Mapping[str, BreakerStatus]:
        """Each server's circuit breaker as of now (servers without one are not in it)."""
        with self._lock:
            breakers = dict(self._breakers)
        return MappingProxyType({name: b.status() for name, b in breakers.items()})

    # -- listings --------------------------------------------------------------------------

    def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """Every server's tools, renamed ``<server>__<tool>`` (unique, LLM-safe)."""
        timeout = call_timeout(timeout, "list_tools")
        found = self._gather("tools", lambda c: c.list_tools(timeout=timeout))
        routes, tools = self._renamed("tool", found)
        with self._lock:
            self._tool_routes = routes
        return tools

    def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        """Every server's prompts, renamed ``<server>__<prompt>`` like tools."""
        timeout = call_timeout(timeout, "list_prompts")
        found = self._gather("prompts", lambda c: c.list_prompts(timeout=timeout))
        routes, prompts = self._renamed("prompt", found)
        with self._lock:
            self._prompt_routes = routes
        return prompts

    def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        """Every server's resources, URIs unchanged (see the collision policy)."""
        timeout = call_timeout(timeout, "list_resources")
        found = self._gather("resources", lambda c: c.list_resources(timeout=timeout))
        routes: dict[str, list[str]] = {}
        for server, resource in found:
            servers = routes.setdefault(resource.uri, [])
            if server not in servers:
                servers.append(server)
        with self._lock:
            self._resource_routes = routes
        return [_tagged(resource, server) for server, resource in found]

    def list_resource_templates(self, *, timeout: float | None = None) -> list[ResourceTemplate]:
        """Every server's resource templates, unchanged (see the collision policy)."""
        timeout = call_timeout(timeout, "list_resource_templates")
        found = self._gather("resources", lambda c: c.list_resource_templates(timeout=timeout))
        with self._lock:
            self._templates = [(server, template_pattern(t.uri_template)) for server, t in found]
        return [_tagged(template, server) for server, template in found]

    def list_skills(self, *, timeout: float | None = None) -> list[Skill]:
        """Every server's skills (servers declaring the skills extension), entries only.

        Skills keep their URIs, which two servers may share: a skill is the pair of its
        server's name in this group (``skill.meta["io.mcp-sync/server"]``) and its URI.
        """
        timeout = call_timeout(timeout, "list_skills")
        found = self._gather(SKILLS_EXTENSION, lambda c: c.skills.list(timeout=timeout))
        return [_tagged(skill, server) for server, skill in found]

    def load_skill(
        self, skill: Skill | str, *, server: str | None = None, **options: Any
    ) -> LoadedSkill:
        """Load a skill (verified, see :meth:`~mcp_sync.skills.Skills.load`) from its
        server: the one :meth:`list_skills` tagged it with, or ``server`` (needed for a bare
        URI). Its ``origin`` is the server's name in this group."""
        if server is None and not isinstance(skill, str):
            server = (skill.meta or {}).get(SERVER_META_KEY)
        if server is None:
            raise UnknownName("which server's skill? pass server=", name=str(skill))
        options.setdefault("origin", server)
        client = self[server]
        return self._through(server, lambda: client.skills.load(skill, **options))

    # -- using what was listed -------------------------------------------------------------

    def route(self, name: str) -> tuple[str, str]:
        """``(server, tool name)`` for a name :meth:`list_tools` gave."""
        return self._route(name, self._tool_routes, "tool", "list_tools")

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> CallToolResult:
        """Call the tool listed as ``name`` on its server; options as for
        :meth:`Client.call_tool`. An unknown name raises :class:`UnknownName`."""
        server, tool = self.route(name)
        client = self[server]
        result: CallToolResult = self._through(
            server, lambda: client.call_tool(tool, arguments, **options)
        )
        return result

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, **options: Any
    ) -> GetPromptResult:
        """Render the prompt listed as ``name`` on its server."""
        server, prompt = self._route(name, self._prompt_routes, "prompt", "list_prompts")
        client = self[server]
        return self._through(server, lambda: client.get_prompt(prompt, arguments, **options))

    def read_resource(
        self, uri: str, *, server: str | None = None, **options: Any
    ) -> ReadResourceResult:
        """Read ``uri`` from the server that listed it (or whose template matches it), or
        from ``server``. Raises :class:`UnknownName` when no server, or more than one, did."""
        if server is None:
            server = self._resource_server(uri)
        client = self[server]
        return self._through(server, lambda: client.read_resource(uri, **options))

    # -- internals -------------------------------------------------------------------------

    def _through(self, server: str, call: Callable[[], _T]) -> _T:
        """``call()`` through ``server``'s breaker, if it has one."""
        with self._lock:
            breaker = self._breakers.get(server)
        return call() if breaker is None else breaker.call(call)

    def _check_name(self, name: str) -> None:
        if not name or self.SEPARATOR in name:
            raise GroupError(
                f"a server name must be non-empty and free of {self.SEPARATOR!r}: {name!r}"
            )
        if self.SEPARATOR in _safe(name):
            raise GroupError(
                f"a server name must be free of {self.SEPARATOR!r} once made safe for tool"
                f" names: {name!r} is {_safe(name)!r} once made safe"
            )

    def _check_clash(self, name: str) -> None:
        """Refuse ``name`` if a member's name is the same once sanitised (the lock is held,
        or the group is being built): their tools would share names."""
        for other in self._clients:
            if other != name and _safe(other) == _safe(name):
                raise GroupError(
                    f"the server name {name!r} is {_safe(name)!r} once made safe for tool"
                    f" names, as {other!r} already in this group is: pick another name"
                )

    @staticmethod
    def _connect(target: Any, timeout: float | None, options: ClientOptions) -> Client:
        from ._client.targets import open_client
        from .client import Client

        if isinstance(target, Client):
            return target
        return open_client(target, timeout=timeout, client_options=options)

    def _forget(self, server: str) -> None:
        """Drop ``server``'s routes (the lock is held)."""
        for routes in (self._tool_routes, self._prompt_routes):  # the names stay bound
            for name in [n for n, (s, _) in routes.items() if s == server]:
                del routes[name]
        for uri, servers in list(self._resource_routes.items()):
            if server in servers:
                servers.remove(server)
                if not servers:
                    del self._resource_routes[uri]
        self._templates = [(s, p) for s, p in self._templates if s != server]
        self._failures.pop(server, None)

    def _renamed(
        self, kind: str, found: list[tuple[str, _Named]]
    ) -> tuple[dict[str, tuple[str, str]], list[_Named]]:
        """Each item under its ``<server>__<name>`` name (unique, LLM-safe, and the same as
        it got before): the routes from those names to (server, original name), and the
        renamed copies. An item a server lists twice is listed once."""
        with self._lock:
            bound = self._bound[kind]
            given = {route: name for name, route in bound.items()}
            fresh = [
                (server, item.name) for server, item in found if (server, item.name) not in given
            ]
            wanted = {key: sanitize_tool_name(f"{key[0]}{self.SEPARATOR}{key[1]}") for key in fresh}
            reserved = set(wanted.values())  # a suffixed name never takes one another wants
            for key in dict.fromkeys(fresh):
                name, number = wanted[key], 1
                while name in bound or (number > 1 and name in reserved):
                    number += 1
                    suffix = f"_{number}"
                    name = wanted[key][: MAX_NAME_LENGTH - len(suffix)] + suffix
                bound[name] = key
                given[key] = name
            routes: dict[str, tuple[str, str]] = {}
            renamed: list[_Named] = []
            for server, item in found:
                name = given[(server, item.name)]
                if name not in routes:
                    routes[name] = (server, item.name)
                    renamed.append(_tagged(item, server, name))
            for name in [n for n in bound if n not in routes][
                : max(len(bound) - MAX_BOUND_NAMES, 0)
            ]:
                del bound[name]
        return routes, renamed

    def _gather(
        self, capability: str, fetch: Callable[[Client], list[_Item]]
    ) -> list[tuple[str, _Item]]:
        """``fetch`` from every member offering ``capability`` (a capability, or an extension's
        identifier), all at once; failures are recorded, not raised."""
        members = list(self.clients.items())
        results: dict[str, list[_Item]] = {}
        failures: dict[str, McpError] = {}

        def one(server: str, client: Client) -> None:
            try:
                if not _offers(client, capability):
                    return
                results[server] = self._through(server, lambda: fetch(client))
            except ServerUnavailable as exc:  # its breaker said so when it opened
                logger.debug("server %r left out of the group's listing: %s", server, exc)
                failures[server] = exc
            except McpError as exc:
                logger.warning("server %r left out of the group's listing: %s", server, exc)
                failures[server] = exc

        if len(members) <= 1:
            for server, client in members:
                one(server, client)
        else:
            with ThreadPoolExecutor(len(members), thread_name_prefix="mcp-sync-group") as pool:
                for future in [pool.submit(one, s, c) for s, c in members]:
                    future.result()
        with self._lock:
            self._failures = failures
        return [(server, item) for server, _ in members for item in results.get(server, [])]

    def _route(
        self, name: str, routes: dict[str, tuple[str, str]], kind: str, lister: str
    ) -> tuple[str, str]:
        with self._lock:
            route = routes.get(name) or self._bound[kind].get(name)
            known = set(self._clients)
        if route is not None:
            if route[0] not in known:  # the name stays its server's: never another's
                raise UnknownName(
                    f"no {kind} {name!r} in this group: it was server {route[0]!r}'s,"
                    " which left the group (the name stays that server's)",
                    name=name,
                )
            return route
        server, sep, item = name.partition(self.SEPARATOR)
        if sep and item and server in known:
            return server, item
        raise UnknownName(f"no {kind} {name!r} in this group (call {lister}() first)", name=name)

    def _resource_server(self, uri: str) -> str:
        with self._lock:
            servers = list(self._resource_routes.get(uri, []))
            if not servers:
                servers = list(dict.fromkeys(s for s, p in self._templates if p.fullmatch(uri)))
        if len(servers) == 1:
            return servers[0]
        if not servers:
            raise UnknownName(
                f"no server of this group listed {uri!r} or a template matching it "
                "(call list_resources() or list_resource_templates() first, or pass server=)",
                name=uri,
            )
        raise UnknownName(
            f"{uri!r} is offered by several servers ({', '.join(servers)}): pass server=",
            name=uri,
        )


def _check_target(name: str, target: object) -> None:
    """Refuse what no server could be made of, before anything is started."""
    wrong = target is None or isinstance(target, (bool, int, float, bytes, Mapping))
    if not wrong and isinstance(target, Sequence) and not isinstance(target, str):
        wrong = not target or not all(isinstance(part, str) for part in target)
    if wrong:
        raise TypeError(
            f"server {name!r}: cannot connect to a {type(target).__qualname__} ({target!r:.60}):"
            " give a Client, a command, a URL, a Transport or a ServerConfig (a config file's"
            " entries: mcp_sync.connect_all)"
        )


def _safe(name: str) -> str:
    """A server name as it shows in a prefixed tool name (made safe, not yet cut)."""
    return _UNSAFE.sub("_", name)


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _offers(client: Client, capability: str) -> bool:
    if "/" in capability:  # an extension's identifier
        extensions = client.server_capabilities.to_wire().get("extensions") or {}
        return capability in extensions
    return getattr(client.server_capabilities, capability) is not None


def _tagged(item: _Item, server: str, name: str | None = None) -> _Item:
    """A copy of ``item`` saying which server it came from (and renamed, for tools and
    prompts)."""
    meta = dict(item.meta or {})
    meta[SERVER_META_KEY] = server
    update: dict[str, Any] = {"meta": meta}
    if name is not None:
        update["name"] = name
    return item.model_copy(update=update)


_EXPRESSION = re.compile(r"\{([+#./;?&]?)[^}]*\}")


def template_pattern(template: str) -> re.Pattern[str]:
    """A regular expression matching the URIs an RFC 6570 URI template can expand to.

    Simple expressions match one path segment; reserved (``+``, ``#``) and path (``/``)
    expansions may span segments; query expressions (``?``, ``&``) match an optional query.
    """
    parts: list[str] = []
    last = 0
    for match in _EXPRESSION.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        operator = match.group(1)
        if operator in ("+", "#"):
            parts.append(".*")
        elif operator == "/":
            parts.append("(?:/[^/?#]*)*")
        elif operator in ("?", "&"):
            parts.append(r"(?:[?&][^#]*)?")
        elif operator in (".", ";"):
            parts.append(r"(?:[.;][^/?#]*)*")
        else:
            parts.append("[^/?#]*")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts))
