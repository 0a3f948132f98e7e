"""HTTP helpers the OAuth modules share: endpoint checks, JSON GETs and form POSTs.

Redirects are never followed: a redirect could move a credential to another origin or
downgrade it to plain http. Every body is read as a stream and capped (after decompression:
a small gzip body can inflate to gigabytes), and every exchange is bounded in total time (a
peer that drips one byte at a time never hits a read timeout). The metadata URL comes from the
MCP server's own ``WWW-Authenticate``, so these are peers we do not trust.

A flow sets its limits once with :func:`limits` (per thread); the helpers read them.
"""

from __future__ import annotations

import ipaddress
import json as _json_module
import logging
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3

from .._rules.causes import causes_of
from ..errors import Aborted
from ..transports._http.user_agent import with_user_agent
from .errors import (
    EndpointUnreachable,
    ExchangeTimeout,
    ForbiddenEndpointError,
    InsecureEndpointError,
    SignInDeferred,
)

logger = logging.getLogger("mcp_sync.oauth")

#: Seconds one metadata, registration or token exchange may take in total.
DEFAULT_TIMEOUT = 30.0
#: The largest OAuth response body read (decompressed); a larger one counts as no document.
MAX_BODY = 1 << 20
_CHUNK = 16384


@dataclass(frozen=True)
class Limits:
    """How long one OAuth exchange may take, the event that aborts the whole flow, and
    whether the flow may start an interactive sign-in (False for a message nobody waits for:
    see ``UnauthorizedContext.interactive``). ``deadline`` (``time.monotonic()``) is that of
    the request being authorized: no exchange or store lock of the flow outlasts it."""

    timeout: float = DEFAULT_TIMEOUT
    cancelled: threading.Event = field(default_factory=threading.Event)
    interactive: bool = True
    deadline: float | None = None

    def budget(self, cap: float | None = None) -> float:
        """Seconds the next step may take: ``cap`` (default ``timeout``), less if the
        deadline is nearer; raises :class:`ExchangeTimeout` once the deadline has passed."""
        cap = self.timeout if cap is None else cap
        if self.deadline is None:
            return cap
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ExchangeTimeout("the request that needed authorization timed out")
        return min(cap, left)

    def check(self) -> None:
        """Raise :class:`~mcp_sync.errors.Aborted` if the flow was aborted."""
        if self.cancelled.is_set():
            raise Aborted("the request that needed authorization was aborted")

    def check_interactive(self, server_url: str) -> None:
        """Raise :class:`SignInDeferred` unless this flow may start a sign-in."""
        if not self.interactive:
            raise SignInDeferred(server_url)


_local = threading.local()


def current_limits() -> Limits:
    value = getattr(_local, "limits", None)
    return value if isinstance(value, Limits) else Limits()


@contextmanager
def limits(value: Limits) -> Iterator[Limits]:
    """Run the OAuth exchanges of this thread under ``value`` (restored afterwards)."""
    previous = getattr(_local, "limits", None)
    _local.limits = value
    try:
        yield value
    finally:
        _local.limits = previous


def is_loopback(host: str | None) -> bool:
    """True for ``localhost``, ``*.localhost``, 127.0.0.0/8 and ::1."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url: str, what: str) -> str:
    """``url`` if it is https, or http on a loopback host; else :class:`InsecureEndpointError`."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and is_loopback(parts.hostname):
        return url
    raise InsecureEndpointError(url, what)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with default ports filled in, for same-origin checks."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def get_json(
    session: requests.Session,
    url: str,
    what: str,
    *,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """GET ``url``; (status, the JSON object or None if the body is not one)."""
    response = exchange(session, "GET", url, what, headers=headers)
    return response.status, response.json


def post(
    session: requests.Session,
    url: str,
    what: str,
    *,
    data: Mapping[str, str] | None = None,
    json: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any] | None]:
    """POST a form (``data``) or JSON to ``url``; (status, the JSON object or None)."""
    response = exchange(session, "POST", url, what, data=data, json=json, headers=headers)
    return response.status, response.json


@dataclass(frozen=True)
class Answer:
    """An OAuth endpoint's answer: status, headers, and the body if it is a JSON object."""

    status: int
    headers: Mapping[str, str]
    json: dict[str, Any] | None


def exchange(
    session: requests.Session,
    method: str,
    url: str,
    what: str,
    *,
    data: Mapping[str, str] | None = None,
    json: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Answer:
    """One bounded request to an OAuth endpoint (see the module docstring).

    A network failure is an :class:`EndpointUnreachable` naming ``what`` and ``url`` (the
    MCP server's transport would otherwise describe it as its own URL's).
    """
    try:
        return _exchange(session, method, url, what, data=data, json=json, headers=headers)
    except requests.RequestException as exc:
        raise EndpointUnreachable(what, url, _reason(exc)) from exc
    except ForbiddenEndpointError as exc:
        if exc.url == url:
            raise
        raise ForbiddenEndpointError(url, exc.rule, what) from None  # (named by the caller)


def _reason(exc: requests.RequestException) -> str:
    """Why an exchange failed, in a few words (never a header or a body)."""
    causes = list(causes_of(exc))
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return "connection refused"
    if any(isinstance(c, socket.gaierror) for c in causes):
        return "the host name does not resolve"
    if any(isinstance(c, (requests.Timeout, TimeoutError)) for c in causes) or any(
        type(c).__name__ in ("ConnectTimeoutError", "ReadTimeoutError") for c in causes
    ):
        return "timed out"
    for c in causes:
        if isinstance(c, ssl.SSLError):
            return f"TLS error: {c}"
    if any(isinstance(c, (ConnectionResetError, BrokenPipeError)) for c in causes):
        return "the connection was reset"
    return f"{type(exc).__name__}: {exc}"


def _exchange(
    session: requests.Session,
    method: str,
    url: str,
    what: str,
    *,
    data: Mapping[str, str] | None,
    json: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
) -> Answer:
    require_secure(url, what)
    bound = current_limits()
    bound.check()
    budget = bound.budget()
    # A POST that was sent (a token or registration request) is read within the exchange's
    # own limit, not the request's deadline: cut, it would waste a rotated refresh token.
    read = budget if method == "GET" else bound.timeout
    deadline = time.monotonic() + read
    for attempt in (1, 2):
        try:
            response = session.request(
                method,
                url,
                data=dict(data) if data is not None else None,
                json=dict(json) if json is not None else None,
                headers=with_user_agent(
                    {
                        "Accept": "application/json",
                        "Accept-Encoding": "gzip, deflate",
                        **(headers or {}),
                    },
                    session,
                ),
                timeout=(budget, read),
                allow_redirects=False,
                stream=True,
            )
            break
        except requests.ConnectionError as exc:
            # A pooled keep-alive connection the server closed as we reused it (Node closes
            # idle ones after 5 s) hangs up on the request: a GET is sent once more, on a
            # fresh connection, rather than taken as "no document here".
            if method != "GET" or attempt == 2 or isinstance(exc, requests.ConnectTimeout):
                raise
            logger.debug("%s at %s: %s; sending it again", what, url, exc)
            bound.check()
    with response:
        body = _read_capped(response, deadline, bound, what)
        return Answer(response.status_code, response.headers, _json_object(body))


def _read_capped(
    response: requests.Response, deadline: float, bound: Limits, what: str
) -> bytes | None:
    """The decompressed body, or None when it is over :data:`MAX_BODY` (read no further)."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        logger.warning("%s: a %s byte body is over the limit; not read", what, length)
        return None
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        decoder: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        decoder = zlib.decompressobj()
    elif encoding in ("", "identity"):
        decoder = None
    else:
        logger.warning("%s: unsupported content encoding %r", what, encoding)
        return None
    raw: Any = response.raw
    body = bytearray()
    while True:
        # no abort check here: a request that was sent is read to its end (a token response
        # dropped half-read would waste the code or the rotated refresh token)
        if time.monotonic() > deadline:
            raise ExchangeTimeout(
                f"the {what} {response.url} did not answer within {bound.timeout:g} s"
            )
        try:
            chunk = raw.read1(_CHUNK, decode_content=False)
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise requests.ReadTimeout(f"reading the {what}: {exc}") from exc
        except (OSError, urllib3.exceptions.HTTPError) as exc:
            raise requests.ConnectionError(f"reading the {what}: {exc}") from exc
        if not chunk:
            if decoder is not None:
                body += decoder.flush()
            return bytes(body) if len(body) <= MAX_BODY else None
        if decoder is None:
            body += chunk
        else:
            # max_length keeps a bomb from inflating past the cap in one call
            body += decoder.decompress(chunk, MAX_BODY + 1 - len(body))
            while decoder.unconsumed_tail and len(body) <= MAX_BODY:
                body += decoder.decompress(decoder.unconsumed_tail, MAX_BODY + 1 - len(body))
        if len(body) > MAX_BODY:
            logger.warning("%s: the body is over %d bytes; not read further", what, MAX_BODY)
            return None


def _json_object(body: bytes | None) -> dict[str, Any] | None:
    if body is None:
        return None
    try:
        value = _json_module.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
