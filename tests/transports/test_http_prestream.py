"""Nothing a server sends right after the initialized notification is lost over Streamable
HTTP: the GET stream is open before that notification goes out. Real servers, neither of which
keeps an event store: server-everything (TypeScript SDK) registers tools for the client and
announces them at once; the official Python SDK server of tests/servers/http_burst_server.py
announces tools, resources and prompts."""

from __future__ import annotations

import sys
import threading

import pytest

from mcp_sync import Client, Notification, StreamableHttpTransport
from tests.helpers.support import NODE, PEERS, SERVERS, HttpServer, free_port, wait_until

pytestmark = pytest.mark.timeout(90)

EVERYTHING = str(PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js")


def assert_burst_arrives(argv: list[str], port: int, expected: set[str]) -> None:
    """A client connected to the server ``argv`` receives the ``expected`` notifications."""
    with HttpServer(argv, port, env={"PORT": str(port)}) as server:
        seen: list[str] = []
        lock = threading.Lock()

        def note(notification: Notification) -> None:
            with lock:
                seen.append(notification.method)

        client = Client("prestream", "1", protocol="handshake", request_timeout=30)
        client.on_notification(None, note)
        with client.connect(StreamableHttpTransport(server.url())):
            wait_until(lambda: expected <= set(seen), timeout=10)


def test_the_list_changed_burst_of_server_everything_arrives() -> None:
    port = free_port()
    assert_burst_arrives(
        [str(NODE), EVERYTHING, "streamableHttp"], port, {"notifications/tools/list_changed"}
    )


def test_the_list_changed_burst_of_the_official_sdk_server_arrives() -> None:
    port = free_port()
    assert_burst_arrives(
        [sys.executable, str(SERVERS / "http_burst_server.py"), str(port)],
        port,
        {
            "notifications/tools/list_changed",
            "notifications/resources/list_changed",
            "notifications/prompts/list_changed",
        },
    )
