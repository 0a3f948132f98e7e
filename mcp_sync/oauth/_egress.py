"""Where the OAuth client may connect: the SSRF rules of the MCP security best practices.

The URLs discovery follows (the challenge's ``resource_metadata``, the metadata's
``authorization_servers``, its token and registration endpoints) are named by the MCP server,
code the user may not trust. Left alone, a server could make the client send requests into the
user's network: cloud metadata at 169.254.169.254, an admin page on 192.168.1.1, Redis on
localhost. So every connection an :class:`OAuthProvider` makes goes through :class:`Egress`:

- a link-local address (169.254.0.0/16, fe80::/10: where cloud metadata lives) and any address
  that is not a unicast host (0.0.0.0, multicast, reserved) is refused, always;
- a loopback or private-range address (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10 and the
  other non-global ranges) is refused unless the MCP server itself is in that range, or the
  host is in ``allow_hosts``;
- plain http is refused except to loopback from an MCP server on loopback (or to an
  ``allow_hosts`` host on loopback).

The check is on addresses, not spellings (``0x7f.1``, ``::ffff:127.0.0.1``, a name): the name
is resolved, every address it resolves to is checked, and the connection goes to a checked
address, never to a second resolution, so a name that answers differently the next time (DNS
rebinding) cannot steer it. ``Host``, TLS SNI and certificate verification stay on the name.
Through a proxy the name is checked, and the proxy connects. ``headless_redirect``, which
fetches the authorization URL (the metadata's too), connects by the same rules.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.utils import select_proxy
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from .errors import ForbiddenEndpointError

__all__ = ["Egress", "GuardedAdapter", "current_rules", "guard_session", "signing_in_through"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_LINK_LOCAL = "link-local"
_LOOPBACK = "loopback"
_PRIVATE = "private"
_PUBLIC = "public"
_NOT_A_HOST = "not a host"


def address_range(address: IPAddress) -> str:
    """``"link-local"``, ``"loopback"``, ``"private"`` (any other non-global range),
    ``"not a host"`` (unspecified, multicast, reserved) or ``"public"``."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is not None:  # (an IPv4 address spelt as IPv6 is that address)
            return address_range(embedded)
    if address.is_link_local:
        return _LINK_LOCAL
    if address.is_loopback:
        return _LOOPBACK
    if address.is_unspecified or address.is_multicast or address.is_reserved:
        return _NOT_A_HOST
    if not address.is_global:
        return _PRIVATE
    return _PUBLIC


class Egress:
    """The connection rules for the OAuth requests about one MCP server (module docstring).

    ``allow_hosts``: host names, addresses or networks (``"10.0.0.0/8"``) whose private-range
    or loopback addresses may be used although the MCP server is not in that range.
    """

    def __init__(self, server_url: str, allow_hosts: Iterable[str] = ()) -> None:
        self.server_url = server_url
        names: set[str] = set()
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow_hosts:
            text = entry.strip().strip("[]").lower()
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                names.add(text.rstrip("."))
        self._names = frozenset(names)
        self._networks = tuple(networks)
        self._server_ranges: frozenset[str] | None = None

    def __repr__(self) -> str:
        return f"<Egress for {self.server_url}>"

    def server_ranges(self) -> frozenset[str]:
        """The ranges of the MCP server's own addresses (resolved once; none: public)."""
        if self._server_ranges is None:
            host = urlsplit(self.server_url).hostname or ""
            try:
                found = frozenset(address_range(a) for a in _resolve(host, None))
            except OSError:
                found = frozenset()
            self._server_ranges = found or frozenset({_PUBLIC})
        return self._server_ranges

    def _allowed(self, host: str, address: IPAddress) -> bool:
        return host.lower().rstrip(".") in self._names or any(
            address in network for network in self._networks
        )

    def check(self, url: str, host: str, address: IPAddress, secure: bool) -> None:
        """Raise :class:`ForbiddenEndpointError` if ``url`` (``host`` at ``address``) is
        refused, naming the rule."""
        kind = address_range(address)
        where = f"{host} is {address}" if host.strip("[]") != str(address) else str(address)
        if kind == _LINK_LOCAL:
            rule = (
                f"{where}, a link-local address (169.254.0.0/16, fe80::/10: where cloud "
                "metadata lives), which is never fetched"
            )
            raise ForbiddenEndpointError(url, rule)
        if kind == _NOT_A_HOST:
            raise ForbiddenEndpointError(url, f"{where}, which is not a unicast host address")
        allowed = self._allowed(host, address)
        server = self.server_ranges()
        if kind in (_LOOPBACK, _PRIVATE) and kind not in server and not allowed:
            rule = (
                f"{where}, a {kind} address, and the MCP server {self.server_url} is not on "
                f"one; a server may not point the client into your network (list the host in "
                "OAuthProvider(allow_hosts=...) to allow it)"
            )
            raise ForbiddenEndpointError(url, rule)
        if not secure and not (kind == _LOOPBACK and (_LOOPBACK in server or allowed)):
            rule = (
                "plain http is only allowed from an MCP server on loopback to a loopback "
                f"address ({where}, the MCP server is {self.server_url})"
            )
            raise ForbiddenEndpointError(url, rule)

    def addresses(self, host: str, port: int, secure: bool, url: str) -> list[tuple[Any, ...]]:
        """The checked ``getaddrinfo`` entries to connect ``host:port`` to, resolved once;
        raises :class:`ForbiddenEndpointError` if any address of the name is refused (a name
        that also points somewhere forbidden is not trusted for its other addresses)."""
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        for info in infos:
            self.check(url, host, _address_of(info), secure)
        return infos

    def check_url(self, url: str) -> None:
        """Resolve ``url``'s host and check every address (for a proxied request, where the
        proxy connects)."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        self.addresses(host, port, parts.scheme == "https", url)


def _address_of(info: tuple[Any, ...]) -> IPAddress:
    return ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])


def _resolve(host: str, port: int | None) -> list[IPAddress]:
    return [_address_of(i) for i in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def _connect(conn: HTTPConnection, egress: Egress, secure: bool) -> socket.socket:
    """``conn``'s socket: its host resolved once, each address checked against ``egress``,
    connected to a checked one (``Host`` and TLS stay on the name)."""
    scheme = "https" if secure else "http"
    url = f"{scheme}://{conn.host}:{conn.port}"
    try:
        infos = egress.addresses(conn._dns_host, conn.port, secure, url)
    except socket.gaierror as exc:
        raise NameResolutionError(conn.host, conn, exc) from exc
    failure: OSError | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            for level, name, value in conn.socket_options or ():
                sock.setsockopt(level, name, value)
            if isinstance(conn.timeout, (int, float)):  # (else urllib3's "default" marker)
                sock.settimeout(conn.timeout)
            if conn.source_address:
                sock.bind(conn.source_address)
            sock.connect(address)
            return sock
        except TimeoutError as exc:
            sock.close()
            message = f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
            raise ConnectTimeoutError(conn, message) from exc
        except OSError as exc:
            sock.close()
            failure = exc
    raise NewConnectionError(conn, f"Failed to establish a new connection: {failure}") from failure


class _CheckedHTTPConnection(HTTPConnection):
    egress: ClassVar[Egress]

    def _new_conn(self) -> socket.socket:
        return _connect(self, self.egress, secure=False)


class _CheckedHTTPSConnection(HTTPSConnection):
    egress: ClassVar[Egress]

    def _new_conn(self) -> socket.socket:
        return _connect(self, self.egress, secure=True)


def _pool_classes(egress: Egress) -> dict[str, type[HTTPConnectionPool]]:
    http_conn = type("CheckedHTTPConnection", (_CheckedHTTPConnection,), {"egress": egress})
    https_conn = type("CheckedHTTPSConnection", (_CheckedHTTPSConnection,), {"egress": egress})
    http_pool = type("CheckedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn})
    https_pool = type("CheckedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn})
    return {"http": http_pool, "https": https_pool}


class GuardedAdapter(HTTPAdapter):
    """A ``requests`` adapter whose connections follow an :class:`Egress` (module doc)."""

    __attrs__ = [*HTTPAdapter.__attrs__, "egress"]  # noqa: RUF012 - as requests declares it

    def __init__(self, egress: Egress, **kwargs: Any) -> None:
        self.egress = egress
        super().__init__(**kwargs)

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _pool_classes(self.egress)

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        if request.url and select_proxy(request.url, dict(proxies or {})):
            self.egress.check_url(request.url)  # (the proxy resolves and connects)
        return super().send(request, stream, timeout, verify, cert, proxies)


_signing_in = threading.local()


@contextlib.contextmanager
def signing_in_through(session: requests.Session) -> Iterator[None]:
    """Within it (on this thread), :func:`current_rules` are the rules ``session`` connects
    by (its :class:`GuardedAdapter`'s): a provider signs in so, for an ``on_redirect`` that
    fetches the authorization URL itself (``headless_redirect``) to follow them too."""
    adapter = session.get_adapter("https://")
    previous = getattr(_signing_in, "egress", None)
    _signing_in.egress = adapter.egress if isinstance(adapter, GuardedAdapter) else None
    try:
        yield
    finally:
        _signing_in.egress = previous


def current_rules() -> Egress | None:
    """The rules of the sign-in this thread is in (:func:`signing_in_through`), if any."""
    egress = getattr(_signing_in, "egress", None)
    return egress if isinstance(egress, Egress) else None


def guard_session(session: requests.Session, egress: Egress) -> requests.Session:
    """``session``, with a :class:`GuardedAdapter` for ``egress`` mounted (http and https)."""
    from ..transports._http.tls import trusting_like  # (keeps a tls_session's system trust)

    adapter = trusting_like(session, GuardedAdapter)(egress)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
