"""Whose certificates an HTTP transport trusts, its client certificate, and its proxy.

``verify``, ``cert`` and ``proxy`` (:class:`HttpOptions`) are given to either HTTP transport,
to ``mcp_sync.connect()``, or in an ``mcp.json`` entry. Given, each replaces what the
environment says (``REQUESTS_CA_BUNDLE``, ``HTTPS_PROXY``...); not given, the environment
applies, read once when the transport starts, as ``requests`` would read it.

``verify="system"`` trusts the operating system's store instead of certifi's bundle, through
``truststore`` (the ``truststore`` extra): the macOS keychain, Windows' certificate store, and
on Linux OpenSSL's default paths (which ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` move). It is
not the default even when ``truststore`` is installed: a library should not change whose
certificates it trusts because some package is importable (``truststore`` also arrives as a
dependency of other tools), a service that runs for months should not change its trust on an
upgrade, and ``requests`` and ``httpx`` make the same choice. pip turned it on by default
(24.2) as an application that owns its process; our CLI takes ``--verify system``. Only the
system store is trusted then, not certifi's bundle as well: the two would be a union nobody
chose.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from typing_extensions import Unpack

from ..._rules.values import os_text
from ...errors import MissingExtra
from .options import HttpOptions
from .send import OwnAdapter
from .user_agent import own_session, user_agent

__all__ = [
    "check_options",
    "SystemTrustAdapter",
    "own_adapter",
    "send_settings",
    "system_context",
    "tls_session",
    "trusting_like",
    "without_credentials",
]


def system_context() -> ssl.SSLContext:
    """A client ``SSLContext`` that verifies against the operating system's trust store."""
    try:
        import truststore
    except ImportError:
        raise MissingExtra(
            "verify='system' (the operating system's trust store) needs truststore:"
            " pip install 'mcp-sync-client[truststore]'",
            extra="truststore",
        ) from None
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class _SystemTrustMixin:
    """Connections made with :func:`system_context` (direct and through a proxy), without
    the certifi bundle ``requests`` would add to it."""

    ssl_context: ssl.SSLContext

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["ssl_context"] = self.ssl_context
        super().init_poolmanager(*args, **kwargs)  # type: ignore[misc]

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        kwargs["ssl_context"] = self.ssl_context
        return super().proxy_manager_for(proxy, **kwargs)  # type: ignore[misc]

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        super().cert_verify(conn, url, verify, cert)  # type: ignore[misc]
        if verify is True:  # (requests points a pool at certifi's bundle for True)
            conn.ca_certs = None
            conn.ca_cert_dir = None


class SystemTrustAdapter(_SystemTrustMixin, requests.adapters.HTTPAdapter):
    """A ``requests`` adapter trusting the operating system's store (for a session of one's
    own, e.g. an OAuth provider's: see :func:`tls_session`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.ssl_context = system_context()
        super().__init__(*args, **kwargs)


class _OwnSystemTrustAdapter(_SystemTrustMixin, OwnAdapter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.ssl_context = system_context()
        super().__init__(*args, **kwargs)


def trusting_like(session: requests.Session, adapter_class: type[Any]) -> type[Any]:
    """``adapter_class``, or a subclass of it with the system trust of ``session``'s https
    adapter when that is a :class:`SystemTrustAdapter` (for code that mounts adapters of its
    own on a session it was given, as the OAuth egress guard does)."""
    context = getattr(session.adapters.get("https://"), "ssl_context", None)
    if not isinstance(context, ssl.SSLContext) or issubclass(adapter_class, _SystemTrustMixin):
        return adapter_class

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self.ssl_context = context
        adapter_class.__init__(self, *args, **kwargs)

    name = f"SystemTrust{adapter_class.__name__}"
    return type(name, (_SystemTrustMixin, adapter_class), {"__init__": __init__})


def own_adapter(options: HttpOptions, **pool: Any) -> OwnAdapter:
    """The transport's own adapter for ``options``."""
    if options.get("verify") == "system":
        return _OwnSystemTrustAdapter(**pool)
    return OwnAdapter(**pool)


_PROXY_SCHEMES = ("http", "https", "socks4", "socks4a", "socks5", "socks5h")


def check_options(options: HttpOptions) -> None:
    """Refuse, naming it, a wire-level setting of the wrong kind where it is given (the
    transports' constructors and :func:`tls_session`), not at the first request; and a
    misspelt one (``verfy=``), which ``**Unpack`` would take silently."""
    for name in options.keys() - HttpOptions.__annotations__.keys():
        raise TypeError(f"unexpected keyword argument {name!r} (no HTTP setting is called so)")
    verify = options.get("verify")
    if verify is not None and not isinstance(verify, (bool, str)):
        raise TypeError(f"verify= takes True, False, 'system' or a CA path, not {verify!r}")
    cert = options.get("cert")
    if cert is not None:
        parts = tuple(cert) if isinstance(cert, (tuple, list)) else (cert,)
        if isinstance(cert, (tuple, list)) and len(parts) != 2:
            raise TypeError("cert= takes a PEM file's path, or (certificate path, key path)")
        for part in parts:
            os_text(part, "cert=")
    proxy = options.get("proxy")
    if proxy is not None:
        if not isinstance(proxy, str):
            raise TypeError(f"proxy= takes a URL (a string), not {type(proxy).__name__}")
        parts_of = urlsplit(proxy if "://" in proxy else f"http://{proxy}")  # (as requests)
        if parts_of.scheme not in _PROXY_SCHEMES or not parts_of.hostname:
            raise ValueError(  # (not quoted: it may hold a password)
                f"proxy= must be a URL with a host and a scheme of {', '.join(_PROXY_SCHEMES)}"
            )
    user_agent(options.get("user_agent_suffix"))


def send_settings(options: HttpOptions, environment: Mapping[str, Any]) -> dict[str, Any]:
    """``proxies``, ``verify`` and ``cert`` for each request: ``options`` over the settings
    ``requests`` read from the environment."""
    verify = options.get("verify", environment.get("verify", True))
    if verify == "system":
        verify = True  # (the adapter's context does the checking)
    cert = options.get("cert", environment.get("cert"))
    if isinstance(cert, list):
        cert = tuple(cert)
    proxy = options.get("proxy")
    proxies = {"http": proxy, "https": proxy} if proxy else environment.get("proxies") or {}
    return {"proxies": proxies, "verify": verify, "cert": cert}


def check_session(options: HttpOptions, session: requests.Session | None) -> None:
    """Refuse ``verify='system'`` with a session of the caller's (whose adapters are theirs)."""
    if session is not None and options.get("verify") == "system":
        raise ValueError(
            "verify='system' applies to the transport's own session: mount"
            " mcp_sync.transports.SystemTrustAdapter on yours (or use tls_session())"
        )


def tls_session(**options: Unpack[HttpOptions]) -> requests.Session:
    """A ``requests.Session`` with these settings (``verify``, ``cert``, ``proxy``,
    ``user_agent_suffix``: see ``connect()``), for code that makes its own requests beside the
    transport (an OAuth provider's ``session=``, say)."""
    check_options(options)
    verify, cert, proxy = options.get("verify"), options.get("cert"), options.get("proxy")
    session = own_session(options.get("user_agent_suffix"))
    if verify == "system":
        adapter = SystemTrustAdapter()
        session.mount("https://", adapter)
        session.mount("http://", adapter)
    elif verify is not None:
        session.verify = verify
    if cert is not None:
        session.cert = cert
    if proxy is not None:
        session.proxies = {"http": proxy, "https": proxy}
    return session


def without_credentials(url: str) -> str:
    """``url`` without its ``user:password@`` part."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit(parts._replace(netloc=netloc))
