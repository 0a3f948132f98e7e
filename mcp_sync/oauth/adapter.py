"""``adapt()``: an OAuth token source as the :class:`~mcp_sync.auth.AuthProvider` a transport
takes (``mcp_sync.connect(url, auth=adapt(provider))``)."""

from __future__ import annotations

from typing import Protocol

from ..auth import AuthProvider, UnauthorizedContext

__all__ = ["TokenSource", "adapt"]


class TokenSource(Protocol):
    """What :func:`adapt` needs: :class:`OAuthProvider`, :class:`ClientCredentialsProvider`,
    :class:`JwtBearerProvider`. An ``authorization_headers(method, url)`` method, when
    present, gives each request's headers (DPoP); else ``token()`` is sent as a bearer token.
    """

    server_url: str

    def token(self) -> str | None: ...

    def handle_challenge(self, ctx: UnauthorizedContext) -> bool: ...


class _Adapter(AuthProvider):
    """An :class:`~mcp_sync.auth.AuthProvider` over a :class:`TokenSource`."""

    def __init__(self, source: TokenSource) -> None:
        self.source = source

    def bind(self, url: str) -> None:
        check = getattr(self.source, "check_url", None)
        if check is not None:
            check(url)

    def token(self) -> str | None:
        return self.source.token()

    def authorization(self, method: str, url: str) -> dict[str, str]:
        headers = getattr(self.source, "authorization_headers", None)
        if headers is not None:
            result: dict[str, str] = headers(method, url)
            return result
        return super().authorization(method, url)

    def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
        return self.source.handle_challenge(ctx)

    def __repr__(self) -> str:
        return f"<oauth.adapt({self.source!r})>"


def adapt(provider: TokenSource) -> AuthProvider:
    """The :class:`~mcp_sync.auth.AuthProvider` to give a transport or ``mcp_sync.connect``::

    client = mcp_sync.connect(url, auth=mcp_sync.oauth.adapt(provider))
    """
    return _Adapter(provider)
