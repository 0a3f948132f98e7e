"""The HTTP client both HTTP transports send with: a ``requests`` session with settings
resolved once, bearer auth with its challenges, same-origin redirects, and one safe retry.

Retries (never a call twice)
    A POST is not idempotent (RFC 9110 section 9.2.2): a tool call may charge a card. When a
    reused keep-alive connection fails (reset, broken pipe, closed before any answer), the
    request is sent again, once, on a fresh connection only if it provably never reached the
    server (the failure came before the request was completely written), or if its semantics
    are safe whatever the method (:data:`SAFE_TO_RESEND`: a GET, a DELETE, an MCP request that
    only reads, like ``tools/list``). Anything else fails. To make that rare, a pooled
    connection is not reused once it was idle for as long as the server said it keeps one
    (``Keep-Alive: timeout=N``, less a second), and urllib3 replaces one the server already
    closed; a server closing an idle connection at the moment it is reused is what is left.

Environment proxy and TLS settings are resolved once when the client is made and passed
explicitly, and an owned session has ``trust_env`` off, so no request reads the environment
again. urllib3 sets ``TCP_NODELAY``, so the header and body writes of a POST do not wait on Nagle.
"""

from __future__ import annotations

import http.client
import logging
import socket
import ssl
import threading
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from ..._causes import causes_of
from ...auth import AuthProvider, RequestContext, UnauthorizedContext, parse_www_authenticate
from .exchange import Cancelled, Exchange, use_exchange
from .options import HttpOptions
from .responses import ERROR_BODY_LIMIT, read_limited
from .send import RequestSender
from .tls import check_session, own_adapter, send_settings

__all__ = ["SAFE_TO_RESEND", "HttpClient", "describe_connection_error"]

logger = logging.getLogger("mcp_sync.transport.http")

#: MCP requests that only read: sending one twice changes nothing on the server.
SAFE_TO_RESEND = frozenset(
    {
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "skills/list",
        "tasks/get",
        "tasks/list",
        "tasks/result",
    }
)


class HttpClient:
    """A ``requests`` session with settings resolved once, auth, and cancellable exchanges."""

    def __init__(
        self,
        url: str,
        *,
        session: requests.Session | None,
        auth: AuthProvider | None,
        connect_timeout: float,
        options: HttpOptions | None = None,
    ) -> None:
        self.url = url
        options = options or {}
        check_session(options, session)
        self.auth = auth
        if auth is not None:
            auth.bind(url)  # a provider bound to another server refuses before any request
        self.connect_timeout = connect_timeout
        self.owns_session = session is None
        if session is None:
            session = requests.Session()
            adapter = own_adapter(options, pool_connections=4, pool_maxsize=32)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            del session.headers["Connection"]  # (keep-alive: HTTP/1.1's default)
        self.session = session
        # Proxies, CA bundle and client cert from the environment, resolved once (no per-request
        # environment or netrc lookups on the hot path).
        settings = session.merge_environment_settings(url, {}, None, None, None)
        if self.owns_session:
            session.trust_env = False
        self._send_kwargs: dict[str, Any] = send_settings(options, settings)
        self._sender = RequestSender(session, url, self._send_kwargs, owned=self.owns_session)
        self._auth_lock = threading.Lock()
        #: The auth headers of the latest request (reused by ``last_token`` requests).
        self._last_auth: dict[str, str] = {}
        self._auth_generation = 0
        self._auth_refusals = 0

    def open(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        exchange: Exchange,
        *,
        read_timeout: float | None = None,
        connect_timeout: float | None = None,
        auth_retry: bool = True,
        last_token: bool = False,
        safe: bool = False,
        interactive: bool = True,
    ) -> requests.Response:
        """Send one request on this thread and return the response with its body unread.

        ``last_token``: send the auth headers the latest request carried instead of asking the
        auth provider (which might start a refresh), e.g. for the DELETE at close. ``safe``:
        the request may be sent twice (see "Retries" above); GET and DELETE always may.
        ``interactive``: a 401 may start an interactive sign-in (``MessageOptions``).
        Raises ``requests`` exceptions for network failures, :class:`Cancelled` if the exchange
        was cancelled, and whatever ``AuthProvider.on_unauthorized`` raises.
        """
        reset_retried = False
        # one retry per kind of challenge: a 401, then a 403 step-up, and a DPoP nonce
        challenges_left = {"401", "403", "nonce"} if auth_retry and self.auth else set()
        redirects = 0
        # the request's timeout bounds its authorization too (a refresh, a shared lock)
        deadline = time.monotonic() + read_timeout if read_timeout is not None else None
        auth_ctx = RequestContext(deadline, exchange.wake, interactive)
        while True:
            if exchange.cancelled:
                raise Cancelled
            generation, refusals = self._auth_generation, self._auth_refusals
            if last_token or self.auth is None:
                auth_headers = self._last_auth
            else:
                auth_headers = self._last_auth = self.auth.headers_for(method, url, auth_ctx)
            token = auth_headers.get("Authorization", "").partition(" ")[2] or None
            sent = {**headers, **auth_headers} if auth_headers else headers
            exchange.begin()
            use_exchange(exchange)
            try:
                response = self._sender.send(
                    method, url, sent, body, (connect_timeout or self.connect_timeout, read_timeout)
                )
            except requests.RequestException as exc:
                if exchange.cancelled:
                    raise Cancelled from exc
                if (
                    not reset_retried
                    # (see "Retries" above: never a call twice)
                    and (not exchange.written or safe or method in ("GET", "DELETE"))
                    and exchange.reused is not False
                    and _is_reset(exc)
                ):
                    logger.debug(
                        "%s %s: reused connection reset; sending it again on a fresh one",
                        method,
                        url,
                    )
                    reset_retried = True
                    continue
                raise
            finally:
                use_exchange(None)
            exchange.attach_response(response)
            if exchange.cancelled:
                response.close()
                raise Cancelled
            keep_alive = response.headers.get("Keep-Alive")
            if keep_alive is not None:
                exchange.note_keep_alive(keep_alive)
            target = _same_origin_redirect(response, url)
            if target is not None and redirects < _MAX_REDIRECTS:
                # Followed by hand: requests would resend our own headers (API keys, session
                # ids) to another origin and turn a 301/302/303 POST into a GET. Any other
                # redirect is returned, and fails as an HTTP error naming its status.
                redirects += 1
                response.close()
                url = target
                continue
            if self.auth is not None:
                self.auth.on_response(url, response.headers)
            challenge = _auth_challenge(response)
            if challenge in challenges_left:
                challenges_left.discard(challenge)
                body_prefix = read_limited(response, ERROR_BODY_LIMIT)
                response.close()
                ctx = UnauthorizedContext(
                    status=response.status_code,
                    headers=response.headers,
                    www_authenticate=response.headers.get("WWW-Authenticate"),
                    url=self.url,
                    session=self.session,
                    token=token,
                    body=body_prefix.decode("utf-8", "replace"),
                    method=method,
                    cancelled=exchange.wake,
                    interactive=interactive,
                    deadline=deadline,
                )
                if self._on_unauthorized(ctx, generation, refusals):
                    continue
                exchange.body_prefix = body_prefix
            return response

    def _on_unauthorized(self, ctx: UnauthorizedContext, generation: int, refusals: int) -> bool:
        assert self.auth is not None
        # concurrent rejections: one provider call, the others wait (until their deadline;
        # past it the session reports the request's timeout)
        wait = -1.0 if ctx.deadline is None else max(0.0, ctx.deadline - time.monotonic())
        if not self._auth_lock.acquire(timeout=wait):
            return False
        try:
            if self._auth_generation != generation:
                return True  # someone got a new token since this request was sent
            if self._auth_refusals != refusals:
                # refused while this request was in flight: share that answer. A request sent
                # later asks again, so a failure during an outage is not permanent.
                return False
            try:
                retry = self.auth.on_unauthorized(ctx)
            except BaseException:
                # An abort is that request's, not a refusal; so is a sign-in refused to a
                # message nobody waits for (a request waiting behind it may still sign in).
                if not ctx.cancelled.is_set() and ctx.interactive:
                    self._auth_refusals += 1
                raise
            if retry:
                self._auth_generation += 1
            else:
                self._auth_refusals += 1
            return retry
        finally:
            self._auth_lock.release()

    def close(self) -> None:
        if self.owns_session:
            # urllib3 2's PoolManager.clear() leaves the pools' sockets to the garbage collector,
            # and an exception whose traceback reaches a pool (a failed connect()) keeps them
            # open for as long as the caller keeps the exception: close them now.
            for adapter in set(self.session.adapters.values()):
                managers = [getattr(adapter, "poolmanager", None)]
                managers += list(getattr(adapter, "proxy_manager", {}).values())
                for manager in managers:
                    pools: Any = getattr(manager, "pools", None)
                    for key in list(pools.keys()) if pools is not None else ():
                        pool = pools.get(key)
                        if pool is not None:
                            pool.close()
            self.session.close()


_MAX_REDIRECTS = 5


def _same_origin_redirect(response: requests.Response, url: str) -> str | None:
    """The target of a 307/308 redirect to the same origin (scheme, host, port), else None."""
    if response.status_code not in (307, 308):
        return None
    location = response.headers.get("Location")
    if not location:
        return None
    target = urljoin(url, location)
    old, new = urlsplit(url), urlsplit(target)
    if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port):
        return None
    return target


def _auth_challenge(response: requests.Response) -> str | None:
    """ "401", "403" (insufficient_scope), "nonce" (a DPoP ``use_dpop_nonce``) or None."""
    if response.status_code not in (401, 403):
        return None
    error = parse_www_authenticate(response.headers.get("WWW-Authenticate")).get("error")
    if error == "use_dpop_nonce":
        return "nonce"
    if response.status_code == 401:
        return "401"
    return "403" if error == "insufficient_scope" else None


def _is_reset(exc: BaseException) -> bool:
    reset = (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)
    return any(isinstance(c, reset) for c in causes_of(exc))


def describe_connection_error(exc: BaseException, url: str, connect_timeout: float) -> str:
    """A one-line explanation of a failed HTTP exchange, naming the URL (never a token)."""
    causes = list(causes_of(exc))
    if any(isinstance(c, requests.ConnectTimeout) for c in causes) or any(
        type(c).__name__ == "ConnectTimeoutError" for c in causes
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
    if _is_reset(exc):
        return f"the connection to {url} was reset"
    return f"HTTP request to {url} failed: {exc}"
