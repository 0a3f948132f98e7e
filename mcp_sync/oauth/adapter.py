"""``adapt()``, deprecated: the OAuth providers are kinds of
:class:`~mcp_sync.auth.AuthProvider` (``mcp_sync.connect(url, auth=provider)``). It stays for
code written before, and still wraps a third-party :class:`TokenSource` that is not an
``AuthProvider``."""

from __future__ import annotations

from typing import Protocol

from .._rules.warn import warn
from ..auth import AuthProvider, UnauthorizedContext

__all__ = ["TokenSource", "adapt"]


class TokenSource(Protocol):
    """The interface :func:`adapt` wrapped: ``token()``, ``handle_challenge(ctx)`` and
    ``server_url``; an ``authorization_headers(method, url)`` method, when present, gives each
    request's headers (DPoP). Write an :class:`~mcp_sync.auth.AuthProvider` instead.
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


def adapt(provider: TokenSource | AuthProvider) -> AuthProvider:
    """Deprecated (a ``DeprecationWarning``): pass the provider itself as ``auth=``.

    An :class:`~mcp_sync.auth.AuthProvider` (every provider of :mod:`mcp_sync.oauth`) comes
    back unchanged; any other :class:`TokenSource` is wrapped as one.
    """
    warn(
        "mcp_sync.oauth.adapt() is no longer needed: OAuth providers are AuthProviders, "
        "pass the provider itself as auth= (adapt() goes in 0.2.0)",
        DeprecationWarning,
    )
    if isinstance(provider, AuthProvider):
        return provider
    return _Adapter(provider)
