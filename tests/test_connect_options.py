"""``mcp_sync.connect()`` passes the Client's options on (``tests/test_options.py`` checks that it
takes them as ``**Unpack[ClientOptions]``): they reach the client, a misspelt one is refused,
and a group member and a config entry take them too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mcp_sync

SERVERS = Path(__file__).resolve().parent / "servers"


def test_the_options_reach_the_client_and_a_misspelt_one_is_refused():
    with mcp_sync.connect(
        [sys.executable, str(SERVERS / "env_server.py")],
        name="options-test",
        title="Options",
        request_timeout=12.5,
        strict_capabilities=False,
    ) as client:
        assert client.client_info.name == "options-test"
        assert client.client_info.title == "Options"
        assert client.request_timeout == 12.5
        assert client.strict_capabilities is False
    with pytest.raises(TypeError, match="request_timout"):
        mcp_sync.connect(["unused"], request_timout=1)  # type: ignore[call-arg]


def test_a_group_member_and_a_config_entry_take_the_client_name_option():
    """``name`` is the server's name in the group (and the entry's in the config), and also a
    Client option: the client's ``name=`` reaches the client."""
    command = [sys.executable, str(SERVERS / "env_server.py")]
    with mcp_sync.ClientGroup() as group:
        client = group.add("env", command, name="grouped", request_timeout=20)
        assert client.client_info.name == "grouped"
    config = mcp_sync.config.parse(
        {"mcpServers": {"env": {"command": command[0], "args": command[1:]}}}
    )
    with config.connect("env", name="configured") as client:
        assert client.client_info.name == "configured"


def test_a_config_entry_s_connect_takes_how_connect_reaches_the_server(tmp_path):
    """``Config.connect`` and ``ServerConfig.connect`` take ``connect()``'s transport options
    (``TransportOptions``), merged over the entry's own; before, only ``auth`` and
    ``on_stderr``, and ``env=`` was refused as an unknown client option."""
    command = [sys.executable, str(SERVERS / "env_server.py")]
    entry = {"command": command[0], "args": command[1:], "env": {"FROM_ENTRY": "entry"}}
    config = mcp_sync.config.parse({"mcpServers": {"env": entry}})
    with config.connect("env", env={"GIVEN": "given"}, cwd=str(tmp_path)) as client:
        assert client.call_tool("getenv", {"name": "FROM_ENTRY"}).text == "entry"
        assert client.call_tool("getenv", {"name": "GIVEN"}).text == "given"
        assert client.call_tool("cwd").text == str(tmp_path)


def test_transport_for_builds_the_transport_connect_would_use_first():
    from mcp_sync.config import parse
    from mcp_sync.transports.http import StreamableHttpTransport
    from mcp_sync.transports.sse_legacy import SseTransport

    http = mcp_sync.transport_for("http://127.0.0.1:9/mcp", headers={"X-Team": "a"})
    assert isinstance(http, StreamableHttpTransport) and http.url == "http://127.0.0.1:9/mcp"
    config = parse(
        {
            "mcpServers": {
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "env": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "env_server.py")],
                    "env": {"FROM_ENTRY": "entry", "MINE": "entry"},
                },
            }
        }
    )
    assert isinstance(mcp_sync.transport_for(config["old"]), SseTransport)
    stdio = mcp_sync.transport_for(config["env"], env={"MINE": "mine"})
    assert isinstance(stdio, mcp_sync.StdioTransport)
    with mcp_sync.Client(request_timeout=20).connect(stdio) as client:
        assert client.call_tool("getenv", {"name": "FROM_ENTRY"}).text == "entry"
        assert client.call_tool("getenv", {"name": "MINE"}).text == "mine"
    with pytest.raises(ValueError, match="needs a command"):
        mcp_sync.transport_for("")
