"""``mcp-sync login`` / ``logout``: OAuth sign-in for remote servers, tokens kept on disk.

Tokens live in a :class:`~mcp_sync.oauth.FileStateStore` at ``$MCP_SYNC_OAUTH_FILE``, else
``$XDG_CONFIG_HOME/mcp-sync/oauth.json`` (``~/.config/...``); later commands against the same
server use (and refresh) them.
"""

from __future__ import annotations

import os
import webbrowser
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from ._render import safe

if TYPE_CHECKING:
    from ..auth import AuthProvider

__all__ = ["auth_for", "device_login", "login", "logout", "offers_oauth", "store_path"]


def store_path() -> Path:
    explicit = os.environ.get("MCP_SYNC_OAUTH_FILE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join("~", ".config")
    return Path(base).expanduser() / "mcp-sync" / "oauth.json"


def _store() -> Any:
    from ..oauth import FileStateStore

    return FileStateStore(store_path())  # (it makes its folder, 0700, when it first writes)


def auth_for(url: str) -> AuthProvider | None:
    """The stored sign-in for ``url`` as an auth provider, or None when there is none."""
    path = store_path()
    if not path.exists():
        return None
    from ..oauth import OAuthProvider

    provider = OAuthProvider(url, store=_store())
    return provider if provider.tokens is not None else None


def offers_oauth(url: str, challenge: str) -> bool:
    """Whether the server at ``url``, which refused a request with ``challenge`` (its
    ``WWW-Authenticate``, or ""), offers an OAuth sign-in: the challenge names its
    ``resource_metadata``, or protected resource metadata is where the spec puts it, or (a
    2025-03-26 server) authorization server metadata is at its origin. Else it wants
    something else, such as an API key in a header."""
    if "resource_metadata" in challenge:
        return True
    import requests

    from ..errors import McpError
    from ..oauth.discovery import discover_resource, discover_server

    parts = urlsplit(url)
    with requests.Session() as session:
        try:
            if discover_resource(session, url) is not None:
                return True
            discover_server(session, f"{parts.scheme}://{parts.netloc}")
        except McpError:
            return False
    return True


def login(
    url: str,
    err: IO[str],
    *,
    open_browser: bool,
    scope: str | None,
    timeout: float,
    client_id: str | None = None,
    client_secret: str | None = None,
    port: int = 0,
) -> None:
    """Sign in to ``url``: open the browser (or print the URL) and wait for the redirect."""
    from ..oauth import CallbackServer, OAuthProvider

    with CallbackServer.listen(port=port, timeout=timeout) as callbacks:
        provider = OAuthProvider(
            url,
            callbacks.redirect_url,
            store=_store(),
            scope=scope,
            client_id=client_id,
            client_secret=client_secret,
        )
        authorization_url = provider.start_authorization(scope=scope)
        state = (parse_qs(urlsplit(authorization_url).query).get("state") or [""])[0]
        pending = callbacks.wait_for_callback(state)
        opened = open_browser and webbrowser.open(authorization_url)
        if not opened:
            # the authorization server's metadata shapes this URL: never raw to the terminal
            err.write(f"Open this URL to sign in:\n  {safe(authorization_url)}\n")
        else:
            err.write("Opened the browser to sign in; waiting for it to come back...\n")
        err.flush()
        result = pending.wait(timeout)
        provider.authorize(code=result.code, state=result.state, iss=result.iss, error=result.error)
    err.write(f"Signed in to {url} (tokens in {store_path()})\n")


def device_login(
    url: str,
    err: IO[str],
    *,
    scope: str | None,
    timeout: float,
    client_id: str | None = None,
    client_secret: str | None = None,
) -> None:
    """Sign in to ``url`` with the device grant: print the code and URL, wait for approval."""
    from ..oauth import DeviceCode, DeviceFlowProvider

    def show(code: DeviceCode) -> None:
        # the authorization server wrote them: escaped and bounded, as the code shows itself
        uri, user_code, complete = code.shown()
        err.write(f"To sign in, open {uri}\nand enter the code: {user_code}\n")
        if complete:
            err.write(f"(or open {complete})\n")
        err.write("Waiting for the sign-in to be approved...\n")
        err.flush()

    provider = DeviceFlowProvider(
        url,
        on_code=show,
        store=_store(),
        scope=scope,
        client_id=client_id,
        client_secret=client_secret,
    )
    provider.sign_in(scope=scope, timeout=timeout)
    err.write(f"Signed in to {url} (tokens in {store_path()})\n")


def logout(url: str, err: IO[str]) -> None:
    """Revoke and forget the tokens (and client registration) stored for ``url``."""
    from ..oauth import OAuthProvider

    provider = OAuthProvider(url, store=_store())
    had = provider.tokens is not None
    try:
        provider.revoke()  # (a refused or failed revocation is logged: a warning on stderr)
    finally:
        provider.forget()
    err.write(f"Signed out of {url}\n" if had else f"Not signed in to {url}\n")
