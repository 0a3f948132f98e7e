"""What a user sees when ``mcp_sync.connect(url)`` points at the wrong thing: real HTTP servers
on 127.0.0.1 (a plain static file server; the official SDK's MCP server at another path)."""

from __future__ import annotations

import sys

import pytest

import mcp_sync
from mcp_sync.errors import HttpError
from tests.helpers.support import SERVERS, HttpServer, free_port

pytestmark = pytest.mark.timeout(90)


def test_a_url_that_is_no_mcp_server_names_its_status_without_the_html_page() -> None:
    port = free_port()
    argv = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    with HttpServer(argv, port) as server, pytest.raises(HttpError) as raised:
        mcp_sync.connect(server.url("/"), timeout=10)
    error = raised.value
    message = str(error)
    assert error.status == 501 and message.startswith("HTTP 501")
    assert "Unsupported method" in message
    assert "<" not in message and len(message) < 400  # no HTML page in the message...
    assert "<html" in error.body.lower()  # ...which the error still carries


def test_a_wrong_path_reports_the_post_status_first_then_the_fallback() -> None:
    port = free_port()
    argv = [sys.executable, str(SERVERS / "http_fixture_server.py"), "streamable-http", str(port)]
    with HttpServer(argv, port) as server, pytest.raises(HttpError) as raised:
        mcp_sync.connect(server.url("/wrong"), timeout=10)
    error = raised.value
    message = str(error)
    assert error.status == 404
    assert message.startswith(f"HTTP 404 Not Found from {server.url('/wrong')}")
    fallback = message.index("fallback")
    assert "GET" in message[fallback:] and "404" in message[fallback:]
