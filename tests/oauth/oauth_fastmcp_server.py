"""A real OAuth-protected MCP server for the end-to-end tests: fastmcp with its
``InMemoryOAuthProvider`` (authorization server and MCP server in one app) on 127.0.0.1,
served by uvicorn in a thread of the test process so that tests can reach the provider
(revoke tokens, shorten lifetimes).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions, RevocationOptions
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider


@dataclass
class OAuthServer:
    url: str
    base_url: str
    provider: InMemoryOAuthProvider


@contextmanager
def serve(required_scopes: list[str] | None = None) -> Iterator[OAuthServer]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    provider = InMemoryOAuthProvider(
        base_url=base,
        client_registration_options=ClientRegistrationOptions(enabled=True),
        revocation_options=RevocationOptions(enabled=True),
        required_scopes=required_scopes,
    )
    mcp = FastMCP("oauth-e2e", auth=provider)

    @mcp.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    app = mcp.http_app(path="/mcp")
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
        yield OAuthServer(f"{base}/mcp", base, provider)
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
