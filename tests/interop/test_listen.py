"""listen() in the 2026 era against the official SDK server, over stdio and over HTTP.

(The handshake-era path, resources/subscribe, runs against server-everything, which supports
it; the SDK server does not.)
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

import mcp_sync
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.support import SERVERS, HttpServer, free_port


def check_listen(client: mcp_sync.Client) -> None:
    assert client.era == "stateless"
    seen: list[str] = []
    both = threading.Event()

    def on_change(notification: mcp_sync.Notification) -> None:
        seen.append(notification.method)
        if len(seen) >= 2:
            both.set()

    subscription = client.listen(
        tools_list_changed=True, resource_subscriptions=["config://app"], callback=on_change
    )
    assert client.call_tool("poke").text == "poked"
    assert both.wait(10), seen
    assert sorted(seen) == ["notifications/resources/updated", "notifications/tools/list_changed"]
    subscription.cancel()
    assert client.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}


def test_listen_over_stdio():
    with mcp_sync.connect([sys.executable, str(SERVERS / "sdk_server.py"), "stdio"]) as client:
        check_listen(client)


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
def test_listen_over_streamable_http(json_response):
    port = free_port()
    argv = [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)]
    with (
        HttpServer(argv + (["--json"] if json_response else []), port) as server,
        mcp_sync.connect(server.url()) as client,
    ):
        check_listen(client)


class _AckedBeforeSendReturns(StdioTransport):
    """Sends ``subscriptions/listen`` and returns only once the server's acknowledgement went
    through the client's own listener: what a thread switch right after the write does under
    load (the CI run where the acknowledgement was dropped and listen() timed out)."""

    def send(self, message: dict[str, Any], **kwargs: Any) -> None:
        if message.get("method") != "subscriptions/listen":
            super().send(message, **kwargs)
            return
        handled = threading.Event()

        def seen(value: Any) -> None:  # (called after the client's own listener)
            if isinstance(value, dict) and value.get("method", "").endswith("/acknowledged"):
                handled.set()

        remove = self.on_message(seen)
        try:
            super().send(message, **kwargs)
            assert handled.wait(30), "the server did not acknowledge the listen"
        finally:
            remove()


def test_an_acknowledgement_that_comes_before_send_returns_is_not_lost():
    transport = _AckedBeforeSendReturns(sys.executable, [str(SERVERS / "sdk_server.py"), "stdio"])
    with mcp_sync.connect(transport) as client:
        subscription = client.listen(tools_list_changed=True, callback=print, timeout=5)
        subscription.cancel()
