"""Hidden setup for docs/oauth.md: a real OAuth-protected MCP server and a headless browser.

``oauth_page()`` starts the fastmcp ``InMemoryOAuthProvider`` server of the OAuth end-to-end
tests (it approves every sign-in without a user) with a machine client ``my-service`` for the
client credentials grant, and the extension grants of ``oauth_extensions`` (JWT bearer from a
trusted workload issuer or enterprise IdP, the IdP's token exchange at ``/idp/token``, DPoP);
for the page's duration:

- ``MCP_SERVER_URL`` is that server, ``SECRET`` the machine client's secret;
- ``IDP_TOKEN_ENDPOINT`` the enterprise IdP's token endpoint, ``ENTERPRISE_SECRET`` the
  secret of the enterprise-provisioned client ``enterprise-app``;
- ``home/workload-token`` holds a workload JWT for that authorization server (what a platform
  such as Kubernetes mounts into the workload);
- ``HOME`` is ``home/`` in the scratch directory, so ``~/...`` store paths stay there;
- the device grant (RFC 8628, ``oauth_device_server``) for the public client ``my-cli``, and
  a user who approves each code the moment it is issued (from another thread, as on a phone);
- :class:`HeadlessBrowser` is the preferred ``webbrowser`` browser, standing in for the user:
  it fetches the authorization URL, and delivers the redirect it answers with.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import webbrowser
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.helpers.oauth_device_server import DeviceGrant, DeviceScript, approve
from tests.helpers.oauth_extensions import Trust
from tests.helpers.oauth_fastmcp_server import MachineClient, OAuthServer, serve

SECRET = "docs-machine-secret"
ENTERPRISE_SECRET = "docs-enterprise-secret"


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
    #: Whom the authorization server trusts (the workload issuer, the enterprise IdP).
    trust: Trust

    def pending_authorization_url(self, store_path: str) -> str:
        """The URL of the one sign-in waiting in a FileStateStore (what was printed)."""
        (state,) = json.loads(Path(store_path).read_text())["servers"].values()
        (pending,) = state["pending"].values()
        return str(pending["authorizationUrl"])


@contextlib.contextmanager
def oauth_page() -> Iterator[OAuthPage]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    home = Path.cwd() / "home"
    home.mkdir(exist_ok=True)
    browser = HeadlessBrowser()
    clients = {"my-service": MachineClient(secret=SECRET, public_key=public)}
    workload_key = ec.generate_private_key(ec.SECP256R1())
    trust = Trust(
        workload_public_key=workload_key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode(),
        idp_private_key=ec.generate_private_key(ec.SECP256R1()),
        clients={"enterprise-app": ENTERPRISE_SECRET},
    )
    device = DeviceScript(clients=("my-cli",))
    with (
        serve(
            machine_clients=clients,
            trust=trust,
            wrap=lambda app, running: DeviceGrant(app, running, device),
        ) as server,
        registered(browser),
        environment(
            MCP_SERVER_URL=server.url,
            SECRET=SECRET,
            HOME=str(home),
            IDP_TOKEN_ENDPOINT=f"{server.base_url}/idp/token",
            ENTERPRISE_SECRET=ENTERPRISE_SECRET,
        ),
    ):
        now = int(time.time())
        claims = {
            "iss": trust.workload_issuer,
            "sub": "nightly-report",
            "aud": str(server.provider.base_url),
            "iat": now,
            "exp": now + 600,
        }
        (home / "workload-token").write_text(jwt.encode(claims, workload_key, algorithm="ES256"))
        device.on_issue = lambda code: threading.Thread(
            target=approve, args=(server.base_url, code)
        ).start()
        yield OAuthPage(server, browser, pem, trust)
