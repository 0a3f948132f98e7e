"""A real OAuth-protected MCP server for the end-to-end tests: fastmcp with its
``InMemoryOAuthProvider`` (authorization server and MCP server in one app) on 127.0.0.1,
served by uvicorn in a thread of the test process so that tests can reach the provider
(revoke tokens, shorten lifetimes).

fastmcp's token endpoint knows only the authorization code and refresh grants; with
``machine_clients`` the server also answers the client credentials grant for those clients
(``client_secret_basic``/``client_secret_post`` or ``private_key_jwt``), issuing tokens the
MCP endpoint accepts.
"""

from __future__ import annotations

import base64
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, unquote

import jwt
import uvicorn
from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions, RevocationOptions
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from mcp.server.auth.provider import AccessToken
from starlette.responses import JSONResponse

from tests.helpers.oauth_extensions import Extensions, Trust

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass
class MachineClient:
    """A client allowed the client credentials grant: a secret and/or a PEM public key."""

    secret: str | None = None
    public_key: str | None = None


@dataclass
class OAuthServer:
    url: str
    base_url: str
    provider: InMemoryOAuthProvider
    #: The client authentication method of each client credentials grant answered.
    client_credentials: list[str] = field(default_factory=list)
    #: While set, the authorization server's endpoints answer 503 (a short outage).
    outage: threading.Event = field(default_factory=threading.Event)


class Outage:
    """ASGI middleware: the OAuth endpoints answer 503 while ``server.outage`` is set."""

    PATHS = ("/.well-known/", "/authorize", "/token", "/register", "/revoke")

    def __init__(self, app: Any, server: OAuthServer) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and self.server.outage.is_set()
            and scope["path"].startswith(self.PATHS)
        ):
            response = JSONResponse({"error": "temporarily_unavailable"}, status_code=503)
            return await response(scope, receive, send)
        return await self.app(scope, receive, send)


class ClientCredentialsGrant:
    """ASGI middleware: POST /token with grant_type=client_credentials, else the app."""

    def __init__(self, app: Any, server: OAuthServer, clients: Mapping[str, MachineClient]) -> None:
        self.app, self.server, self.clients = app, server, clients

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != "/token":
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        if form.get("grant_type") == "client_credentials":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            return await self.grant(form, headers.get("authorization", ""))(scope, receive, send)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)

    def grant(self, form: dict[str, str], authorization: str) -> JSONResponse:
        client_id, method = self.authenticate(form, authorization)
        if client_id is None:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = secrets.token_hex(32)
        scopes = form.get("scope", "").split()
        self.server.provider.access_tokens[token] = AccessToken(
            token=token, client_id=client_id, scopes=scopes, expires_at=int(time.time()) + 3600
        )
        self.server.client_credentials.append(method)
        return JSONResponse(
            {"access_token": token, "token_type": "Bearer", "expires_in": 3600},
            headers={"Cache-Control": "no-store"},
        )

    def authenticate(self, form: dict[str, str], authorization: str) -> tuple[str | None, str]:
        if authorization.startswith("Basic "):
            pair = base64.b64decode(authorization[6:]).decode()
            client_id, secret = (unquote(part) for part in pair.split(":", 1))
            method = "client_secret_basic"
        elif form.get("client_assertion_type") == JWT_BEARER:
            claims = jwt.decode(
                form.get("client_assertion", ""), options={"verify_signature": False}
            )
            client_id, secret, method = claims.get("iss", ""), None, "private_key_jwt"
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret")
            method = "client_secret_post"
        client = self.clients.get(client_id)
        if client is None:
            return None, method
        if method == "private_key_jwt":
            if client.public_key is None:
                return None, method
            try:
                jwt.decode(
                    form["client_assertion"],
                    client.public_key,
                    algorithms=["ES256", "ES384", "RS256", "PS256"],
                    audience=str(self.server.provider.base_url),
                    issuer=client_id,
                )
            except jwt.InvalidTokenError:
                return None, method
            return client_id, method
        if (
            client.secret is None
            or secret is None
            or not secrets.compare_digest(secret, client.secret)
        ):
            return None, method
        return client_id, method


@contextmanager
def serve(
    required_scopes: list[str] | None = None,
    machine_clients: Mapping[str, MachineClient] | None = None,
    trust: Trust | None = None,
    port: int = 0,
    transport: Literal["http", "sse"] = "http",
    wrap: Callable[[Any, OAuthServer], Any] | None = None,
) -> Iterator[OAuthServer]:
    """The server (on ``port``, any free one by default), over Streamable HTTP at ``/mcp`` or
    the legacy HTTP+SSE transport at ``/sse``; with ``trust``, also the extension grants and
    DPoP (oauth_extensions); ``wrap(app, server)`` puts more middleware in front."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = InMemoryOAuthProvider(
        base_url=base,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=required_scopes, default_scopes=required_scopes
        ),
        revocation_options=RevocationOptions(enabled=True),
        required_scopes=required_scopes,
    )
    mcp = FastMCP("oauth-e2e", auth=provider)

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    path = "/sse" if transport == "sse" else "/mcp"
    running = OAuthServer(f"{base}{path}", base, provider)
    app: Any = mcp.http_app(path=path, transport=transport)
    if machine_clients:
        app = ClientCredentialsGrant(app, running, machine_clients)
    if trust is not None:
        app = Extensions(app, running, trust)
    if wrap is not None:
        app = wrap(app, running)
    app = Outage(app, running)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fastmcp OAuth server did not start")
        time.sleep(0.02)
    try:
        yield running
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
