"""One HTTP request through a ``requests.Session``, without the per-request work its
``prepare_request`` and ``send`` do for features the session does not use.

Why: ``Session.post`` costs about four raw ``http.client`` POSTs on a local server, and most of
it is bookkeeping that a client sending every request to one URL does not need again and
again: merging two cookie jars into a third, re-parsing and re-quoting the same URL, looking
up hooks, netrc and the environment, timing the call, probing for a redirect it will not
follow (``python -m bench.http_layers`` shows the layers). :class:`RequestSender` does what
those steps would do here, once where it can, and hands the request to the session's own
adapter (``adapter.send``), so everything a user configures on the adapter (a mounted adapter
of their own, ``Retry``, proxies, TLS, client certificates, pool sizes) applies as before.

What still happens per request, as ``requests`` does it: the session's headers merged under the
request's (case-insensitively, a ``None`` value removing one; through a session of the user's,
mcp_sync's ``User-Agent`` unless either names one: :mod:`mcp_sync.transports._http.user_agent`),
``Content-Length``, the session's cookies that match the URL (``Cookie``), and cookies a
response sets stored in the session's jar. Proxies, ``verify`` and ``cert`` are the settings
the transport resolved when it was made (as it did before: the environment is read once).

The client's own session mounts :class:`OwnAdapter`, which also remembers, per URL and TLS
settings, what ``HTTPAdapter.send`` works out again for every request when no proxy applies:
the connection pool (asked of the pool manager again once it was closed, e.g. evicted), the
TLS checks of the CA bundle and certificate paths, the request path; and builds the
``Response`` without parsing for cookies when no ``Set-Cookie`` came. Everything else of
``HTTPAdapter.send`` (its ``Retry``, timeouts, the translation of urllib3's errors) runs as is.

What sends the request through ``Session.send`` unchanged: a session class that overrides
``send``, ``prepare_request``, ``request`` or ``get_adapter``, response hooks, ``session.auth``,
``session.params``, a user and password in the URL (``requests`` makes them the request's
Basic credential), and an entry for the URL in ``~/.netrc`` (looked up once) when the session
trusts the environment. Those are rare on an MCP connection and each changes the request in
ways worth leaving to ``requests``.

Credentials: the sender holds (``mcp_sync.redaction``) what the session adds to the requests,
so that no error or log record quotes it: the ``Authorization`` value whenever it changes (one
string comparison per request), the session's own secret headers, and, read when an error is
made, its cookies, basic credentials and proxy credentials (the transport holds its URL's and
its ``headers=``). A header value that cannot be sent (an auth provider's token ending in a
newline) fails as :class:`~mcp_sync.errors.InvalidHeaderValue` naming the header, never
quoting the value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.cookies import extract_cookies_to_jar, get_cookie_header
from requests.models import PreparedRequest, Response
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers, get_netrc_auth, select_proxy

from ...errors import InvalidHeaderValue
from ...protocol.headers import value_problem
from ...redaction import basic_credential, hold, hold_fields, url_secrets, watch
from .exchange import TrackingAdapter
from .user_agent import with_user_agent

__all__ = ["OwnAdapter", "RequestSender"]

#: Remembered URLs (the server's and a few redirect targets) before starting over.
_REMEMBERED = 16


class RequestSender:
    """Sends requests to one URL (and same-origin redirect targets) through ``session``."""

    def __init__(
        self,
        session: requests.Session,
        url: str,
        send_kwargs: Mapping[str, Any],
        *,
        owned: bool = False,
        user_agent: str | None = None,
    ) -> None:
        self.session = session
        self._user_agent = user_agent
        self._send_kwargs = dict(send_kwargs)
        #: The session's headers by lower-cased name, when nobody else can change them (the
        #: transport's own session): merged without a ``CaseInsensitiveDict`` per request.
        self._fixed_headers: dict[str, tuple[str, str]] | None = None
        if owned:
            self._fixed_headers = {
                name.lower(): (name, value if isinstance(value, str) else value.decode("latin-1"))
                for name, value in session.headers.items()
                if value is not None
            }
        #: URL -> its prepared (IDNA-encoded, re-quoted) form, as ``prepare_url`` makes it.
        self._prepared_urls: dict[str, str] = {}
        # A session class of the user's own may do anything in the methods skipped here.
        kind = type(session)
        self._own_methods = any(
            getattr(kind, name) is not getattr(requests.Session, name)
            for name in ("send", "prepare_request", "request", "get_adapter")
        )
        self._netrc = bool(session.trust_env and get_netrc_auth(url))
        #: A user and password in the URL: ``requests`` turns them into a Basic credential.
        self._url_auth = bool(urlsplit(url).password)
        self._authorization: str | None = None
        hold_fields(self, session.headers)
        watch(self, _session_secrets)

    def _plain(self) -> bool:
        """True if the session uses nothing that only ``Session.send`` applies."""
        session = self.session
        return (
            not self._own_methods
            and not self._netrc
            and not self._url_auth
            and session.auth is None
            and not session.params
            and not any(session.hooks.get("response") or ())
        )

    def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: tuple[float, float | None],
    ) -> requests.Response:
        """The response to one request, its body not yet read (``stream=True``); redirects are
        returned, not followed. Raises what ``Session.send`` raises, and
        :class:`InvalidHeaderValue` for a header that cannot be sent."""
        authorization = headers.get("Authorization")
        if authorization is not None and authorization != self._authorization:
            self._authorization = authorization
            hold(self, authorization)
        if self._fixed_headers is None:  # (a session of mcp_sync's own names it already)
            headers = with_user_agent(headers, self.session, self._user_agent)
        try:
            return self._send(method, url, headers, body, timeout)
        except ValueError:
            problem = _invalid_header({**self.session.headers, **headers})
            if problem is None:
                raise
        # raised out here, without the ValueError as its context: http.client's and requests'
        # own errors quote the value, often a token
        raise InvalidHeaderValue(*problem)

    def _send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: tuple[float, float | None],
    ) -> requests.Response:
        session = self.session
        if not self._plain():
            prepared = session.prepare_request(
                requests.Request(method, url, headers=dict(headers), data=body)
            )
            return session.send(
                prepared,
                stream=True,
                timeout=timeout,
                allow_redirects=False,
                **self._send_kwargs,
            )
        request = PreparedRequest()
        request.method = method
        request.url = self._prepared_url(url)
        merged = self._merged_headers(headers)
        if body is not None:
            merged["Content-Length"] = str(len(body))
        elif method not in ("GET", "HEAD"):
            merged["Content-Length"] = "0"
        request.headers = merged  # type: ignore[assignment]
        request.body = body
        jar = session.cookies
        if len(jar):
            cookie = get_cookie_header(jar, request)  # type: ignore[no-untyped-call]
            if cookie is not None:
                merged["Cookie"] = cookie
        response = session.get_adapter(request.url).send(
            request,
            stream=True,
            timeout=timeout,  # type: ignore[arg-type]
            **self._send_kwargs,
        )
        if "Set-Cookie" in response.headers or "Set-Cookie2" in response.headers:
            extract_cookies_to_jar(jar, request, response.raw)  # type: ignore[no-untyped-call]
        return response

    def _merged_headers(self, headers: Mapping[str, str]) -> MutableMapping[str, str]:
        """The session's headers updated with ``headers`` (a name in any letter case replacing
        the session's), without those whose value is None, as ``requests`` merges them."""
        fixed = self._fixed_headers
        if fixed is None:
            merged: MutableMapping[str, str] = CaseInsensitiveDict(self.session.headers)  # type: ignore[arg-type]
            merged.update(headers)
            for name in [name for name, value in merged.items() if value is None]:
                del merged[name]
            return merged
        given = {name.lower(): (name, value) for name, value in headers.items()}
        plain = {name: value for lower, (name, value) in fixed.items() if lower not in given}
        for name, value in given.values():
            if value is not None:
                plain[name] = value
        return plain

    def _prepared_url(self, url: str) -> str:
        prepared = self._prepared_urls.get(url)
        if prepared is None:
            probe = PreparedRequest()
            probe.prepare_url(url, None)
            prepared = probe.url
            assert prepared is not None
            if len(self._prepared_urls) >= _REMEMBERED:
                self._prepared_urls.clear()
            self._prepared_urls[url] = prepared
        return prepared


def _session_secrets(sender: RequestSender) -> Iterator[str | None]:
    """The cookies, basic credentials and proxy credentials of a sender's session, as they
    are now (``requests`` adds the last two itself: they are never in our headers)."""
    jar: Any = sender.session.cookies
    for cookie in list(jar):
        yield cookie.value
    auth: Any = sender.session.auth  # (user, password), or requests' HTTPBasicAuth
    if isinstance(auth, tuple) and len(auth) == 2:
        user, password = auth
    else:
        user, password = getattr(auth, "username", None), getattr(auth, "password", None)
    if isinstance(user, str) and isinstance(password, str):
        yield password
        yield basic_credential(user, password)
    for proxy in (sender._send_kwargs.get("proxies") or {}).values():
        if isinstance(proxy, str):
            yield from url_secrets(proxy)


def _invalid_header(headers: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the name, what is wrong) of the first header whose value cannot be sent (an auth
    provider's or a session's: the user's own were checked when given)."""
    for name, value in headers.items():
        problem = value_problem(value) if isinstance(value, str) else None
        if problem is not None:
            return name, problem
    return None


class OwnAdapter(TrackingAdapter):
    """The transport's own adapter: :class:`TrackingAdapter`, remembering per-request work."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pools: dict[Any, Any] = {}
        self._paths: dict[str, str] = {}

    def get_connection_with_tls_context(
        self, request: PreparedRequest, verify: Any, proxies: Any = None, cert: Any = None
    ) -> Any:
        if proxies and select_proxy(request.url or "", proxies):
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        try:
            key = (request.url, verify, cert)
            pool = self._pools.get(key)
        except TypeError:  # (a cert given as a list)
            return super().get_connection_with_tls_context(request, verify, proxies, cert)
        if pool is None or pool.pool is None:  # (none yet, or closed by the pool manager)
            pool = super().get_connection_with_tls_context(request, verify, proxies, cert)
            if len(self._pools) >= _REMEMBERED:
                self._pools.clear()
            self._pools[key] = pool
        return pool

    def cert_verify(self, conn: Any, url: str, verify: Any, cert: Any) -> None:
        # (it sets the same attributes on the same pool each time, and looks for the files)
        checked = (url, verify, cert)
        if getattr(conn, "_mcp_sync_checked", None) != checked:
            super().cert_verify(conn, url, verify, cert)  # type: ignore[no-untyped-call]
            conn._mcp_sync_checked = checked

    def request_url(self, request: PreparedRequest, proxies: Any) -> str:
        url = request.url
        if url is None or (proxies and select_proxy(url, proxies)):
            return super().request_url(request, proxies)
        path = self._paths.get(url)
        if path is None:
            path = request.path_url or "/"
            if len(self._paths) >= _REMEMBERED:
                self._paths.clear()
            self._paths[url] = path
        return path

    def build_response(self, req: PreparedRequest, resp: Any) -> Response:
        headers = getattr(resp, "headers", None)
        if headers is None or "set-cookie" in headers or "set-cookie2" in headers:
            return super().build_response(req, resp)
        response = Response()
        response.status_code = resp.status
        response.headers = CaseInsensitiveDict(headers)
        response.encoding = get_encoding_from_headers(response.headers)
        response.raw = resp
        response.reason = resp.reason
        response.url = req.url or ""
        response.request = req
        response.connection = self
        return response
