"""Hidden setup for docs/oauth.md: a real OAuth-protected MCP server and a headless browser.

``oauth_page()`` starts the fastmcp ``InMemoryOAuthProvider`` server of the OAuth end-to-end
tests (it approves every sign-in without a user) with a machine client ``my-service`` for the
client credentials grant, and for the page's duration:

- ``MCP_SERVER_URL`` is that server, ``SECRET`` the machine client's secret;
- ``HOME`` is ``home/`` in the scratch directory, so ``~/...`` store paths stay there;
- :class:`HeadlessBrowser` is the preferred ``webbrowser`` browser, standing in for the user:
  it fetches the authorization URL, and delivers the redirect it answers with.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import webbrowser
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oauth"))
from oauth_fastmcp_server import MachineClient, OAuthServer, serve

SECRET = "docs-machine-secret"


def sign_in(authorization_url: str) -> str:
    """What the user does: open the URL, sign in; the address the browser ends on."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    location = response.headers.get("Location")
    assert response.is_redirect and location, f"/authorize answered {response.status_code}"
    return location


class HeadlessBrowser(webbrowser.BaseBrowser):
    """A browser without a window: signs in, then follows the redirect to the application."""

    def __init__(self) -> None:
        super().__init__("docs-headless")
        self.opened: list[str] = []

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        self.opened.append(url)
        requests.get(sign_in(url), timeout=10)  # the redirect to the callback server
        return True


@contextlib.contextmanager
def registered(browser: HeadlessBrowser) -> Iterator[None]:
    webbrowser.register(browser.name, None, browser, preferred=True)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            webbrowser._tryorder.remove(browser.name)  # type: ignore[union-attr]
        webbrowser._browsers.pop(browser.name, None)


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass
class OAuthPage:
    server: OAuthServer
    browser: HeadlessBrowser
    #: The machine client's private key (PEM), for ``private_key_jwt``.
    pem: str

    def pending_authorization_url(self, store_path: str) -> str:
        """The URL of the one sign-in waiting in a FileStateStore (what was printed)."""
        (state,) = json.loads(Path(store_path).read_text())["servers"].values()
        (pending,) = state["pending"].values()
        return str(pending["authorizationUrl"])


@contextlib.contextmanager
def oauth_page() -> Iterator[OAuthPage]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    home = Path.cwd() / "home"
    home.mkdir(exist_ok=True)
    browser = HeadlessBrowser()
    clients = {"my-service": MachineClient(secret=SECRET, public_key=public)}
    with serve(machine_clients=clients) as server, registered(browser), \
            environment(MCP_SERVER_URL=server.url, SECRET=SECRET, HOME=str(home)):
        yield OAuthPage(server, browser, pem)
