"""The small interface the HTTP transports use to authorize their requests.

A transport knows nothing of OAuth: before every HTTP request it sends it asks its
:class:`AuthProvider` for the request's authorization headers (by default ``Authorization:
Bearer`` with :meth:`AuthProvider.token`), and when the server rejects them (HTTP 401, or 403
with ``error="insufficient_scope"``) it tells the provider through
:meth:`AuthProvider.on_unauthorized` and, if the provider says so, retries that request with
fresh headers. A request is retried at most once per kind of challenge: a 401, a 403 step-up
after it, and a DPoP ``use_dpop_nonce``.
``mcp_sync.oauth`` builds the full OAuth client on this interface; :class:`BearerToken` is the
trivial provider for a fixed token::

    transport = StreamableHttpTransport(url, auth=BearerToken(os.environ["API_TOKEN"]))

Tokens never appear in reprs, log records or exception messages.
"""

from __future__ import annotations

import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field

import requests

from .redaction import hold

__all__ = [
    "AuthProvider",
    "BearerToken",
    "RequestContext",
    "UnauthorizedContext",
    "parse_www_authenticate",
]

_PARAM = re.compile(r'([A-Za-z0-9_.~+/-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))')


def parse_www_authenticate(header: str | None) -> dict[str, str]:
    """The auth-params of a ``WWW-Authenticate: Bearer ...`` header, keys lower-cased.

    ``Bearer error="insufficient_scope", scope="files:read"`` gives
    ``{"error": "insufficient_scope", "scope": "files:read"}``. Only the first challenge is read.
    """
    if not header:
        return {}
    text = header.strip()
    scheme, _, rest = text.partition(" ")
    if "=" in scheme:  # no scheme at all: the header is only params
        rest = text
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest):
        name = match.group(1).lower()
        quoted, bare = match.group(2), match.group(3)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        params.setdefault(name, value)
    return params


@dataclass(frozen=True)
class RequestContext:
    """What a provider knows about the request it authorizes (see ``AuthProvider.headers_for``).

    ``deadline`` is the request's own (``time.monotonic()``), None for a request without one;
    a provider that refreshes a token or waits for a lock stops by then, so that the caller's
    ``timeout=`` also bounds authentication.
    """

    #: When the request times out (``time.monotonic()``), or None.
    deadline: float | None = None
    #: Set when the request is aborted (its signal, Ctrl-C, close): stop authorizing then.
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    #: False for a message nobody waits for (see ``UnauthorizedContext.interactive``).
    interactive: bool = True

    def time_left(self) -> float | None:
        """Seconds until ``deadline`` (0 once passed), or None without a deadline."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())


@dataclass(frozen=True)
class UnauthorizedContext:
    """What a provider learns about a rejected request (see ``AuthProvider.on_unauthorized``)."""

    #: The HTTP status: 401, or 403 with ``error="insufficient_scope"``.
    status: int
    #: The response headers.
    headers: Mapping[str, str]
    #: The raw ``WWW-Authenticate`` header, if any.
    www_authenticate: str | None
    #: The MCP server URL the request went to.
    url: str
    #: The transport's ``requests.Session`` (use it for discovery and token requests).
    session: requests.Session = field(repr=False)
    #: The token the rejected request carried (None if it carried none).
    token: str | None = field(default=None, repr=False)
    #: At most the first 8 KiB of the response body.
    body: str = field(default="", repr=False)
    #: The rejected request's HTTP method.
    method: str = "POST"
    #: Set when the request is aborted (its signal, Ctrl-C, close): stop authorizing then.
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    #: False for a message nobody waits for (a notification such as ``notifications/cancelled``,
    #: an answer to the server): refresh a token if you can, but start no interactive sign-in
    #: (no browser); raise instead, and the message is dropped and reported.
    interactive: bool = True
    #: When the rejected request times out (``time.monotonic()``), or None: handle the
    #: challenge by then.
    deadline: float | None = None

    @property
    def params(self) -> dict[str, str]:
        """The ``WWW-Authenticate`` auth-params (``error``, ``scope``, ``resource_metadata``...)."""
        return parse_www_authenticate(self.www_authenticate)

    @property
    def insufficient_scope(self) -> bool:
        """True when the server asks for more scope (step-up authorization)."""
        return self.params.get("error") == "insufficient_scope"

    @property
    def scope(self) -> str | None:
        """The scope the server asked for, if it said."""
        return self.params.get("scope")

    @property
    def resource_metadata(self) -> str | None:
        """The protected resource metadata URL the server pointed to, if any."""
        return self.params.get("resource_metadata")


class AuthProvider(ABC):
    """Supplies bearer tokens to an HTTP transport.

    Its methods are called on the transport's threads. ``on_unauthorized`` is called at most once
    per rejected token: when several requests are rejected at the same time it runs once and the
    others wait for it, then retry with the new token (or, when it answered False, fail with the
    401). An error it raises is that request's own: the others ask it again.
    """

    def bind(self, url: str) -> None:  # noqa: B027 - an optional hook, no-op by default
        """Called once with the server URL when a transport starts; raise to refuse that server.

        A provider whose credentials belong to one server refuses the others here, before any
        request carries a token.
        """

    @abstractmethod
    def token(self) -> str | None:
        """The access token to send as ``Authorization: Bearer``, or None to send none.

        Called before every request, so it should be cheap (return a cached token).
        """

    def authorization(self, method: str, url: str) -> dict[str, str]:
        """The headers that authorize one request (``method`` to ``url``).

        By default ``Authorization: Bearer <token()>``, or none without a token. Called before
        every request and every retry; a proof-of-possession provider (DPoP) overrides it to
        sign a fresh proof for each request.
        """
        token = self.token()
        return {"Authorization": f"Bearer {token}"} if token else {}

    def headers_for(self, method: str, url: str, ctx: RequestContext) -> dict[str, str]:
        """The headers for one request, knowing its deadline and abort signal (``ctx``).

        What the transports call. By default :meth:`authorization`, which knows neither: a
        provider written for an earlier version keeps working. A provider that may block (a
        refresh, a shared lock) overrides this to stop by ``ctx.deadline``.
        """
        return self.authorization(method, url)

    def on_response(self, url: str, headers: Mapping[str, str]) -> None:  # noqa: B027
        """Called with the headers of every response from the server at ``url``; by default
        nothing. A DPoP provider takes the next nonce from a ``DPoP-Nonce`` header here."""

    def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
        """Handle a 401 (or a 403 asking for more scope); return True to retry the request.

        Refresh or re-acquire a token here. Returning False (the default) fails the request
        with an :class:`~mcp_sync.errors.HttpError`; raising fails it with that error as cause.
        """
        return False


class BearerToken(AuthProvider):
    """A fixed bearer token, redacted from every error and log record while it lives."""

    def __init__(self, token: str) -> None:
        self._token = token
        hold(self, token)

    def token(self) -> str | None:
        return self._token

    def __repr__(self) -> str:
        return "BearerToken(<hidden>)"
