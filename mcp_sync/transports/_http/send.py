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
request's (case-insensitively, a ``None`` value removing one), ``Content-Length``, the session's
cookies that match the URL (``Cookie``), and cookies a response sets stored in the session's
jar. Proxies, ``verify`` and ``cert`` are the settings the transport resolved when it was made
(as it did before: the environment is read once).

What sends the request through ``Session.send`` unchanged: a session class that overrides
``send``, ``prepare_request``, ``request`` or ``get_adapter``, response hooks, ``session.auth``,
``session.params``, and an entry for the URL in ``~/.netrc`` (looked up once) when the session
trusts the environment. Those are rare on an MCP connection and each changes the request in
ways worth leaving to ``requests``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests
from requests.cookies import extract_cookies_to_jar, get_cookie_header
from requests.models import PreparedRequest
from requests.structures import CaseInsensitiveDict
from requests.utils import get_netrc_auth

__all__ = ["RequestSender"]


class RequestSender:
    """Sends requests to one URL (and same-origin redirect targets) through ``session``."""

    def __init__(self, session: requests.Session, url: str, send_kwargs: Mapping[str, Any]) -> None:
        self.session = session
        self._send_kwargs = dict(send_kwargs)
        #: URL -> its prepared (IDNA-encoded, re-quoted) form, as ``prepare_url`` makes it.
        self._prepared_urls: dict[str, str] = {}
        # A session class of the user's own may do anything in the methods skipped here.
        kind = type(session)
        self._own_methods = any(
            getattr(kind, name) is not getattr(requests.Session, name)
            for name in ("send", "prepare_request", "request", "get_adapter")
        )
        self._netrc = bool(session.trust_env and get_netrc_auth(url))

    def _plain(self) -> bool:
        """True if the session uses nothing that only ``Session.send`` applies."""
        session = self.session
        return (
            not self._own_methods
            and not self._netrc
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
        returned, not followed. Raises what ``Session.send`` raises."""
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
        merged = CaseInsensitiveDict(session.headers)
        merged.update(headers)
        for name in [name for name, value in merged.items() if value is None]:
            del merged[name]
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
            request, stream=True, timeout=timeout, **self._send_kwargs  # type: ignore[arg-type]
        )
        if "Set-Cookie" in response.headers or "Set-Cookie2" in response.headers:
            extract_cookies_to_jar(jar, request, response.raw)  # type: ignore[no-untyped-call]
        return response

    def _prepared_url(self, url: str) -> str:
        prepared = self._prepared_urls.get(url)
        if prepared is None:
            probe = PreparedRequest()
            probe.prepare_url(url, None)
            prepared = probe.url
            assert prepared is not None
            if len(self._prepared_urls) < 16:  # (the URL and a few redirect targets)
                self._prepared_urls[url] = prepared
        return prepared
