"""ClientGroup against real servers: mcp-server-time, the official SDK's MCPServer fixture
(tests/servers/sdk_server.py) and server-everything, all over stdio."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync import Client, ClientGroup, GroupError, McpError, StdioTransport, UnknownName
from mcp_sync.group import SERVER_META_KEY
from tests.helpers.support import NODE, PEERS, PYTHON, SERVERS, wait_until

SDK = [PYTHON, str(SERVERS / "sdk_server.py")]
TIME = [str(Path(sys.executable).parent / "mcp-server-time")]


def sdk_client() -> tuple[Client, StdioTransport]:
    transport = StdioTransport(SDK[0], SDK[1:])
    return Client("group", "1.0", request_timeout=20, protocol="handshake").connect(
        transport
    ), transport


@pytest.fixture(scope="module")
def group():
    everything = [
        str(NODE),
        str(PEERS / "@modelcontextprotocol/server-everything/dist/index.js"),
        "stdio",
    ]
    with ClientGroup() as group:
        group.add("time", TIME, request_timeout=20)
        group.add("sdk", sdk_client()[0])
        group.add("everything", everything, request_timeout=20)
        yield group


def test_tools_of_every_server_prefixed_and_routed(group):
    tools = group.list_tools()
    names = [tool.name for tool in tools]
    assert {"time__get_current_time", "sdk__add", "everything__echo"} <= set(names)
    assert len(set(names)) == len(names)
    assert {t.meta[SERVER_META_KEY] for t in tools} == {"time", "sdk", "everything"}
    assert group.call_tool("sdk__add", {"a": 2, "b": 3}).structured_content == {"result": 5}
    assert group.call_tool("everything__echo", {"message": "hi"}).text.endswith("hi")
    assert group.route("time__get_current_time") == ("time", "get_current_time")
    assert group.failures == {}


def test_prompts_resources_and_templates_aggregated_and_routed(group):
    prompts = {p.name: p for p in group.list_prompts()}
    assert "sdk__review" in prompts and prompts["sdk__review"].meta[SERVER_META_KEY] == "sdk"
    assert any(name.startswith("everything__") for name in prompts)
    rendered = group.get_prompt("sdk__review", {"code": "x = 1"})
    assert "x = 1" in rendered.messages[0].content.text

    resources = group.list_resources()
    servers = {r.meta[SERVER_META_KEY] for r in resources}
    assert servers == {"sdk", "everything"}  # mcp-server-time has no resources: not asked
    assert group.read_resource("config://app").contents[0].text == '{"debug": true}'
    everything_uri = next(r.uri for r in resources if r.meta[SERVER_META_KEY] == "everything")
    assert group.read_resource(everything_uri).contents[0].uri == everything_uri

    templates = group.list_resource_templates()
    assert "greeting://{name}" in [t.uri_template for t in templates]
    # an unlisted URI goes to the one server whose template matches it
    assert group.read_resource("greeting://Ada").contents[0].text == "Hello, Ada!"


def test_unknown_names_raise_an_mcp_error(group):
    # issue 22: this was a bare KeyError, outside the McpError tree
    with pytest.raises(McpError, match="no tool 'unknown__x'"):
        group.call_tool("unknown__x")
    with pytest.raises(UnknownName, match="no prompt"):
        group.get_prompt("nobody__nothing")
    with pytest.raises(UnknownName, match="no server of this group listed 'nowhere://x'"):
        group.read_resource("nowhere://x")
    with pytest.raises(KeyError):  # still a KeyError for code that caught one
        group["nobody"]


def test_same_names_on_two_servers_are_both_kept(tmp_path):
    with ClientGroup({"a": sdk_client()[0], "b": sdk_client()[0]}) as group:
        names = [t.name for t in group.list_tools()]
        assert "a__add" in names and "b__add" in names
        assert group.call_tool("b__add", {"a": 1, "b": 1}).structured_content == {"result": 2}
        assert [r.uri for r in group.list_resources()].count("config://app") == 2
        with pytest.raises(UnknownName, match=r"several servers \(a, b\): pass server="):
            group.read_resource("config://app")
        assert group.read_resource("config://app", server="b").contents[0].text
        group.list_resource_templates()
        with pytest.raises(UnknownName, match="several servers"):
            group.read_resource("greeting://Ada")


def test_servers_added_and_removed_at_run_time(time_cmd):
    with ClientGroup() as group:
        group.add("time", time_cmd, request_timeout=20)
        assert [t.name for t in group.list_tools()] == [
            "time__get_current_time",
            "time__convert_time",
        ]
        sdk = group.add("sdk", SDK, request_timeout=20)
        assert "sdk__add" in [t.name for t in group.list_tools()]
        assert group.call_tool("sdk__add", {"a": 1, "b": 2}).structured_content == {"result": 3}
        with pytest.raises(GroupError, match="already in this group"):
            group.add("sdk", SDK)
        with pytest.raises(GroupError, match="free of '__'"):
            group.add("a__b", SDK)
        assert group.remove("sdk") is sdk and sdk.state == "closed"
        assert "sdk" not in group and list(group) == ["time"]
        with pytest.raises(UnknownName, match="no tool 'sdk__add'"):
            group.call_tool("sdk__add", {"a": 1, "b": 2})
        assert "sdk__add" not in [t.name for t in group.list_tools()]
        with pytest.raises(UnknownName):
            group.remove("sdk")
        kept = group.add("spare", SDK, request_timeout=20)
        assert group.remove("spare", close=False) is kept and kept.state == "connected"
        kept.close()
        members = list(group.clients.values())
    assert [c.state for c in members] == ["closed"]


def test_a_failing_server_is_reported_not_fatal(time_cmd):
    client, transport = sdk_client()
    with ClientGroup() as group:
        group.add("time", time_cmd, request_timeout=20)
        group.add("sdk", client)
        assert "sdk__add" in [t.name for t in group.list_tools()]
        os.kill(transport.pid, signal.SIGKILL)  # the server crashes
        wait_until(lambda: client.state == "closed", timeout=10)
        names = [t.name for t in group.list_tools()]
        assert names == ["time__get_current_time", "time__convert_time"]
        assert list(group.failures) == ["sdk"]
        assert isinstance(group.failures["sdk"], McpError)
        assert group.list_prompts() == [] and list(group.failures) == ["sdk"]
        group.remove("sdk")
        group.list_tools()
        assert group.failures == {}


def test_connect_all_returns_a_group_that_grows(time_cmd):
    config = {"mcpServers": {"time": {"command": time_cmd[0]}}}
    with mcp_sync.connect_all(config, request_timeout=20) as group:
        group.add(
            "sdk",
            mcp_sync.config.parse({"mcpServers": {"sdk": {"command": SDK[0], "args": SDK[1:]}}})[
                "sdk"
            ],
            request_timeout=20,
        )
        assert list(group) == ["time", "sdk"]
        assert "sdk__weather" in [t.name for t in group.list_tools()]
