"""Sessions on Streamable HTTP against the official SDK server: expiry and re-initialization."""

from __future__ import annotations

import sys

import pytest
import requests

from mcp_sync import Client, SessionExpired, StreamableHttpTransport
from tests.helpers.support import SERVERS, HttpServer, free_port


@pytest.fixture(scope="module")
def server():
    port = free_port()
    with HttpServer(
        [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)], port
    ) as running:
        yield running


def end_session(transport: StreamableHttpTransport) -> str:
    """Make the server forget our session, as a restart or an idle timeout would."""
    old = transport.session_id
    assert old
    requests.delete(
        transport.url,
        headers={"Mcp-Session-Id": old, "MCP-Protocol-Version": "2025-11-25"},
        timeout=5,
    )
    return old


def test_expired_session_raises_without_auto_reinitialize(server):
    transport = StreamableHttpTransport(server.url())
    with Client(protocol="handshake").connect(transport) as client:
        end_session(transport)
        with pytest.raises(SessionExpired):
            client.list_tools()


def test_auto_reinitialize_is_recovery_and_resends_what_the_server_refused_unrun(server):
    """``auto_reinitialize=True`` is the older name of ``recovery=True``. The server answers
    404 for a session it forgot instead of running the request, so every request, a tool call
    included, is sent again on the new session."""
    transport = StreamableHttpTransport(server.url())
    with Client(protocol="handshake", auto_reinitialize=True).connect(transport) as client:
        old = end_session(transport)
        assert [t.name for t in client.list_tools()][:2] == ["add", "weather"]  # re-sent
        assert transport.session_id and transport.session_id != old
        end_session(transport)
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
