"""The HTTP client both HTTP transports send with: a ``requests`` session with settings
resolved once, bearer auth with its challenges, same-origin redirects, and one safe retry.

Retries (never a call twice)
    A POST is not idempotent (RFC 9110 section 9.2.2): a tool call may charge a card. When a
    reused keep-alive connection fails (reset, broken pipe, closed before any answer), the
    request is sent again, once, on a fresh connection only if it provably never reached the
    server (the failure came before the request was completely written), or if its semantics
    are safe whatever the method (a GET, a DELETE, or an MCP request that only reads, like
    ``tools/list``: the caller says so, from ``MessageOptions.safe_to_resend``). Anything else
    fails. To make that rare, a pooled connection is not reused once it was idle for as long as
    the server said it keeps one (``Keep-Alive: timeout=N``, less a second), a connection to a
    forwarding proxy (plain ``http://`` through a proxy) only if the proxy said it keeps it
    (tinyproxy closes each one after its answer without saying so), and urllib3
    replaces one the server already closed; a server closing an idle connection at the moment
    it is reused is what is left.

Environment proxy and TLS settings are resolved once when the client is made and passed
explicitly, and an owned session has ``trust_env`` off, so no request reads the environment
again. urllib3 sets ``TCP_NODELAY``, so the header and body writes of a POST do not wait on Nagle.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from ...auth import AuthProvider, RequestContext, UnauthorizedContext, parse_www_authenticate
from .errors import is_reset, proxy_refusal, translate
from .exchange import Cancelled, Exchange, use_exchange
from .options import HttpOptions
from .responses import ERROR_BODY_LIMIT, read_limited
from .send import RequestSender
from .tls import check_session, own_adapter, send_settings
from .user_agent import own_session, user_agent

__all__ = ["HttpClient", "ResendOnReset"]

logger = logging.getLogger("mcp_sync.transport.http")


@dataclasses.dataclass(frozen=True)
class ResendOnReset:
    """When a request whose reused keep-alive connection was reset is sent again (see
    "Retries" above), as a value: at most ``max_resends`` times, on a fresh connection, and
    only if it never reached the server (not completely written) or is ``safe`` to send twice.
    ``resent`` is where one request stands."""

    max_resends: int = 1
    resent: int = 0

    def allows(self, error: BaseException, exchange: Exchange, *, safe: bool) -> bool:
        """Whether a request that failed with ``error`` on ``exchange`` goes again."""
        return (
            self.resent < self.max_resends
            and (not exchange.written or safe)  # never a call twice
            and exchange.reused is not False  # a fresh connection's failure is the server's
            and is_reset(error)
        )

    def increment(self) -> ResendOnReset:
        return dataclasses.replace(self, resent=self.resent + 1)


@dataclasses.dataclass
class _Request:
    """One request as it goes through :meth:`HttpClient.open`'s layers."""

    method: str
    url: str  # (a redirect moves it)
    headers: dict[str, str]
    body: bytes | None
    exchange: Exchange
    timeouts: tuple[float, float | None]
    deadline: float | None
    auth_ctx: RequestContext
    safe: bool
    last_token: bool
    interactive: bool
    resend: ResendOnReset
    challenges_left: set[str]
    redirects: int = 0
    #: The token, auth generation and refusal count the latest attempt was sent with.
    token: str | None = None
    generation: int = 0
    refusals: int = 0


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
        suffix = options.get("user_agent_suffix")
        agent = user_agent(suffix)  # (checked with a session of the user's too)
        if session is None:
            session = own_session(suffix)
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
        self._sender = RequestSender(
            session, url, self._send_kwargs, owned=self.owns_session, user_agent=agent
        )
        self._auth_lock = threading.Lock()
        #: The auth headers of the latest request (reused by ``last_token`` requests).
        self._last_auth: dict[str, str] = {}
        self._auth_generation = 0
        self._auth_refusals = 0
        #: The resend policy after a reset (a value: replace it to change it).
        self.resend_on_reset = ResendOnReset()

    def open(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        exchange: Exchange,
        *,
        read_timeout: float | None = None,
        deadline: float | None = None,
        connect_timeout: float | None = None,
        auth_retry: bool = True,
        last_token: bool = False,
        safe: bool = False,
        interactive: bool = True,
    ) -> requests.Response:
        """Send one request on this thread and return the response with its body unread.

        ``deadline`` (``time.monotonic()``): the request's own, which its read timeout and
        its authorization (a refresh, a sign-in, a shared lock) wait by; without one,
        ``read_timeout`` from now. ``last_token``: send the auth headers the latest request
        carried instead of asking the auth provider (which might start a refresh), e.g. for
        the DELETE at close. ``safe``: the request may be sent twice (see "Retries" above);
        GET and DELETE always may. ``interactive``: a 401 may start an interactive sign-in
        (``MessageOptions``). Raises :class:`~mcp_sync.errors.NetworkError` for network
        failures (see :mod:`.errors`), :class:`Cancelled` if the exchange was cancelled, and
        whatever ``AuthProvider.on_unauthorized`` raises.

        Each concern is one layer, outermost first: auth challenges
        (:meth:`_send_handling_challenges`), redirects (:meth:`_send_handling_redirects`), the
        resend after a reset (:meth:`_send_handling_reset`, whose every attempt asks for auth
        headers afresh: a DPoP proof or a refreshed token is one request's), one exchange
        (:meth:`_send_single`). They share the request's :class:`_Request`.
        """
        if deadline is not None:
            read_timeout = max(deadline - time.monotonic(), 0.001)
        elif read_timeout is not None:
            deadline = time.monotonic() + read_timeout
        request = _Request(
            method,
            url,
            headers,
            body,
            exchange,
            (connect_timeout or self.connect_timeout, read_timeout),
            deadline,
            RequestContext(deadline, exchange.wake, interactive),
            safe=safe or method in ("GET", "DELETE"),
            last_token=last_token,
            interactive=interactive,
            resend=self.resend_on_reset,
            # one retry per kind of challenge: a 401, then a 403 step-up, and a DPoP nonce
            challenges_left={"401", "403", "nonce"} if auth_retry and self.auth else set(),
        )
        return self._send_handling_challenges(request)

    def _send_handling_challenges(self, r: _Request) -> requests.Response:
        while True:
            response = self._send_handling_redirects(r)
            if self.auth is not None:
                self.auth.on_response(r.url, response.headers)
            challenge = _auth_challenge(response)
            if challenge not in r.challenges_left:
                return response
            r.challenges_left.discard(challenge)
            body_prefix = read_limited(response, ERROR_BODY_LIMIT)
            response.close()
            ctx = UnauthorizedContext(
                status=response.status_code,
                headers=response.headers,
                www_authenticate=response.headers.get("WWW-Authenticate"),
                url=self.url,
                session=self.session,
                token=r.token,
                body=body_prefix.decode("utf-8", "replace"),
                method=r.method,
                cancelled=r.exchange.wake,
                interactive=r.interactive,
                deadline=r.deadline,
            )
            if not self._on_unauthorized(ctx, r.generation, r.refusals):
                r.exchange.body_prefix = body_prefix
                return response

    def _send_handling_redirects(self, r: _Request) -> requests.Response:
        while True:
            response = self._send_handling_reset(r)
            target = _same_origin_redirect(response, r.url)
            if target is None or r.redirects >= _MAX_REDIRECTS:
                return response
            # Followed by hand: requests would resend our own headers (API keys, session
            # ids) to another origin and turn a 301/302/303 POST into a GET. Any other
            # redirect is returned, and fails as an HTTP error naming its status.
            r.redirects += 1
            response.close()
            r.url = target

    def _send_handling_reset(self, r: _Request) -> requests.Response:
        while True:
            sent = self._authorized(r)  # (outside the try: an auth provider's own errors)
            try:
                return self._send_single(r, sent)
            except requests.RequestException as exc:
                if r.exchange.cancelled:
                    raise Cancelled from exc
                if not r.resend.allows(exc, r.exchange, safe=r.safe):
                    proxies = self._send_kwargs.get("proxies")
                    raise translate(exc, self.url, self.connect_timeout, proxies) from exc
                logger.debug(
                    "%s %s: reused connection reset; sending it again on a fresh one",
                    r.method,
                    r.url,
                )
                r.resend = r.resend.increment()

    def _authorized(self, r: _Request) -> dict[str, str]:
        """The request's headers with its auth headers, asked for now."""
        if r.exchange.cancelled:
            raise Cancelled
        r.generation, r.refusals = self._auth_generation, self._auth_refusals
        if r.last_token or self.auth is None:
            auth_headers = self._last_auth
        else:
            auth_headers = self._last_auth = self.auth.headers_for(r.method, r.url, r.auth_ctx)
        r.token = auth_headers.get("Authorization", "").partition(" ")[2] or None
        return {**r.headers, **auth_headers} if auth_headers else r.headers

    def _send_single(self, r: _Request, headers: dict[str, str]) -> requests.Response:
        """One exchange on the wire (``send.py`` does the socket-level work)."""
        exchange = r.exchange
        exchange.begin()
        use_exchange(exchange)
        try:
            response = self._sender.send(r.method, r.url, headers, r.body, r.timeouts)
        finally:
            use_exchange(None)
        exchange.attach_response(response)
        if exchange.cancelled:
            response.close()
            raise Cancelled
        refused = proxy_refusal(
            response.status_code,
            response.reason or "",
            response.headers,
            r.url,
            self._send_kwargs.get("proxies"),
        )
        if refused is not None:
            response.close()
            raise refused
        exchange.note_keep_alive(response.headers)
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
                # later asks again, so a refusal during an outage is not permanent.
                return False
            # A provider's error (an abort, its store or authorization server unreachable) is
            # the failing request's own, not a refusal: a request in flight asks again, by its
            # own deadline, and fails with an error of its own, never the server's bare 401.
            retry = self.auth.on_unauthorized(ctx)
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
