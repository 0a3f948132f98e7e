"""Sessions on Streamable HTTP against the official SDK server: expiry and re-initialization."""

from __future__ import annotations

import sys

import pytest
import requests
from support import SERVERS, HttpServer, free_port

from mcp_sync import Client, SessionExpired, StreamableHttpTransport


@pytest.fixture(scope="module")
def server():
    port = free_port()
    with HttpServer([sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)], port) as running:
        yield running


def end_session(transport: StreamableHttpTransport) -> str:
    """Make the server forget our session, as a restart or an idle timeout would."""
    old = transport.session_id
    assert old
    requests.delete(transport.url, headers={"Mcp-Session-Id": old,
                                            "MCP-Protocol-Version": "2025-11-25"}, timeout=5)
    return old


def test_expired_session_raises_without_auto_reinitialize(server):
    transport = StreamableHttpTransport(server.url())
    with Client(protocol="legacy").connect(transport) as client:
        end_session(transport)
        with pytest.raises(SessionExpired):
            client.list_tools()


def test_auto_reinitialize_retries_idempotent_requests_only(server):
    transport = StreamableHttpTransport(server.url())
    with Client(protocol="legacy", auto_reinitialize=True).connect(transport) as client:
        old = end_session(transport)
        assert [t.name for t in client.list_tools()][:2] == ["add", "weather"]  # retried
        assert transport.session_id and transport.session_id != old
        end_session(transport)
        with pytest.raises(SessionExpired):
            client.call_tool("add", {"a": 1, "b": 2})  # not idempotent: not re-sent
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
