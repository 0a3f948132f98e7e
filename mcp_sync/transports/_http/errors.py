"""The one place the HTTP library's exceptions become mcp_sync's: :func:`network_errors`, a
context manager around every call into ``requests`` that may fail in the network.

What leaves it is a :class:`~mcp_sync.errors.NetworkError` whose ``sent`` says whether the
request provably never reached the server: a :class:`~mcp_sync.errors.ConnectFailed` when no
connection was made (refused, the host did not resolve, connecting timed out: no byte left),
a :class:`~mcp_sync.errors.TlsError` or a :class:`~mcp_sync.errors.ProxyError` (naming the
proxy, never its credentials), a plain ``NetworkError`` otherwise (a reset, a read timeout:
the request may have arrived; ``sent`` None for all three). The HTTP library's exception is
its ``__cause__``. Recovery reads that type and that attribute; nothing above this module
inspects a ``requests`` or ``urllib3`` class. Classification is by ``isinstance`` on the
library's own classes, walking the wrapped causes (``requests`` wraps urllib3's
``MaxRetryError``, which wraps the reason).
"""

from __future__ import annotations

import copy
import http.client
import re
import socket
import ssl
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit

import requests
from requests.utils import select_proxy
from urllib3 import exceptions as urllib3_errors

from ..._rules.causes import causes_of
from ...errors import ConnectFailed, NetworkError, ProxyError, TlsError
from .tls import without_credentials

__all__ = [
    "describe",
    "is_reset",
    "is_timeout",
    "network_errors",
    "proxy_refusal",
    "retold",
    "translate",
]

#: Causes that mean no connection was made, so nothing of the request left.
_NOT_CONNECTED = (
    requests.ConnectTimeout,
    urllib3_errors.NewConnectionError,
    urllib3_errors.ConnectTimeoutError,
    ConnectionRefusedError,
    socket.gaierror,
)
_RESET = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)
# (not urllib3's TimeoutError: its NewConnectionError is one, for a refused connection too)
_TIMEOUT = (TimeoutError, requests.Timeout, urllib3_errors.ReadTimeoutError)


@contextmanager
def network_errors(
    url: str, connect_timeout: float, proxies: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Turn a ``requests`` exception raised inside into its :class:`NetworkError`."""
    try:
        yield
    except requests.RequestException as exc:
        raise translate(exc, url, connect_timeout, proxies) from exc


def translate(
    exc: BaseException, url: str, connect_timeout: float, proxies: Mapping[str, str] | None = None
) -> NetworkError:
    """The typed error of a failed exchange with ``url``, its message naming what failed;
    ``proxies`` are those the request went through (``requests``' mapping)."""
    causes = list(causes_of(exc))
    proxy = select_proxy(url, dict(proxies)) if proxies else None
    if proxy is not None and any(isinstance(c, requests.exceptions.ProxyError) for c in causes):
        return _proxy_error(causes, url, without_credentials(proxy))
    message = describe(exc, url, connect_timeout)
    if any(isinstance(c, _NOT_CONNECTED) for c in causes):
        return ConnectFailed(message)
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return TlsError(message)
    return NetworkError(message)


_STATUS = re.compile(r"\b[1-5]\d\d [A-Z][A-Za-z -]*[a-z]")


def _proxy_error(causes: list[BaseException], url: str, shown: str) -> ProxyError:
    status = next((m.group() for c in causes for m in [_STATUS.search(str(c))] if m), None)
    if status is not None and status.startswith(("407", "401")):  # (tinyproxy sends 401)
        reason = f"{status}: its user or password is wrong or missing"
    elif status is not None:
        reason = f"it answered {status}"
    else:
        reason = "it could not be connected to or failed"
    return ProxyError(f"the proxy {shown} refused the request to {url} ({reason})", proxy=shown)


def proxy_refusal(
    status: int,
    reason: str,
    headers: Mapping[str, str],
    url: str,
    proxies: Mapping[str, str] | None,
) -> ProxyError | None:
    """The error for a plain-``http://`` request's answer that came from its proxy refusing it
    (407, or tinyproxy's 401, with ``Proxy-Authenticate``: no server sends that), else None.
    Over ``https://`` the proxy's refusal fails the ``CONNECT`` instead (:func:`translate`)."""
    if status not in (401, 407) or urlsplit(url).scheme != "http":
        return None
    if status == 401 and not any(name.lower() == "proxy-authenticate" for name in headers):
        return None
    proxy = select_proxy(url, dict(proxies)) if proxies else None
    shown = "" if proxy is None else without_credentials(proxy) + " "
    error = ProxyError(
        f"the proxy {shown}refused the request to {url} ({status} {reason}: its user or "
        "password is wrong or missing)",
        proxy=shown.strip(),
    )
    error.sent = False  # it stopped at the proxy: the server never saw it
    return error


def retold(error: NetworkError, message: str) -> NetworkError:
    """``error`` with another message (what was being done), keeping its type, ``sent``,
    request, proxy and cause."""
    new = copy.copy(error)
    new.args = (message,)
    return new


def is_reset(exc: BaseException) -> bool:
    """The connection was reset or closed under the exchange."""
    return any(isinstance(c, _RESET) for c in causes_of(exc))


def is_timeout(exc: BaseException) -> bool:
    """A connect or read timeout is among ``exc``'s causes."""
    return any(isinstance(c, _TIMEOUT) for c in causes_of(exc))


def describe(exc: BaseException, url: str, connect_timeout: float) -> str:
    """A one-line explanation of a failed HTTP exchange, naming the URL (never a token)."""
    causes = list(causes_of(exc))
    # (urllib3's NewConnectionError subclasses ConnectTimeoutError: only the class itself)
    if any(
        isinstance(c, requests.ConnectTimeout) or type(c) is urllib3_errors.ConnectTimeoutError
        for c in causes
    ):
        return f"connecting to {url} timed out after {connect_timeout:g} s"
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return f"cannot connect to {url}: connection refused"
    if any(isinstance(c, socket.gaierror) for c in causes):
        host = urlsplit(url).hostname
        return f"cannot connect to {url}: cannot resolve host {host!r}"
    for c in causes:
        if isinstance(c, ssl.SSLError):
            return f"TLS error talking to {url}: {c}"
    if is_reset(exc):
        return f"the connection to {url} was reset"
    return f"HTTP request to {url} failed: {exc}"
