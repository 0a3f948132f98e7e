"""Shared fixtures: a MockServer-backed client, and a check that no client thread outlives it."""

from __future__ import annotations

import pytest
from support import client_threads

from mcp_sync import Client
from mcp_sync.testing import MockServer

# The mcp_client fixture (users get it through the pytest11 entry point, which pyproject's
# addopts turns off here so that coverage starts before mcp_sync is imported).
pytest_plugins = ["mcp_sync.pytest_plugin"]


@pytest.fixture
def server():
    return MockServer(
        capabilities={
            "tools": {"listChanged": True},
            "resources": {"subscribe": True},
            "prompts": {},
            "logging": {},
            "completions": {},
        }
    )


@pytest.fixture
def client(server):
    before = set(client_threads())
    c = Client("test-client", "1.0", request_timeout=5.0)
    server.connect(c)
    server.wait_for("notifications/initialized")
    yield c
    c.close()
    server.transport.close()
    leftover = [t for t in client_threads() if t not in before and t.is_alive()]
    assert not leftover, f"threads left after close(): {leftover}"


@pytest.fixture
def clean_env(monkeypatch):
    """No proxy or CA-bundle variables from the environment (HTTP and TLS tests set their own)."""
    for name in (
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "SSL_CERT_FILE",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch
