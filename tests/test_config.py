"""mcp_sync.config: the mcpServers format, ${VAR} expansion, connect(name, config=...),
ClientGroup / connect_all, against real stdio servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.config import ConfigError, ServerConnectError, load, parse

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "tests" / "servers"
TIME = str(Path(sys.executable).parent / "mcp-server-time")


def write(tmp_path: Path, data: object, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_reads_stdio_and_remote_entries_with_variables(tmp_path):
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "time": {
                    "command": "uvx",
                    "args": ["mcp-server-time", "--tz=${TZNAME}"],
                    "env": {"TOKEN": "${env:SECRET}", "MODE": "${MODE:-fast}"},
                    "cwd": "/tmp",  # parsed only: nothing is started
                },
                "web": {
                    "url": "https://${HOST}/mcp",
                    "headers": {"Authorization": "Bearer ${SECRET}"},
                },
                "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            }
        },
    )
    config = load(path, environ={"TZNAME": "UTC", "SECRET": "s3", "HOST": "example.com"})
    assert list(config) == ["time", "web", "old"]
    time = config["time"]
    assert (time.kind, time.command, time.args, time.cwd) == (
        "stdio",
        "uvx",
        ("mcp-server-time", "--tz=UTC"),
        "/tmp",
    )
    assert dict(time.env) == {"TOKEN": "s3", "MODE": "fast"}
    web = config["web"]
    assert (web.kind, web.url, dict(web.headers)) == (
        "http",
        "https://example.com/mcp",
        {"Authorization": "Bearer s3"},
    )
    assert config["old"].kind == "sse"


def test_reads_the_vscode_servers_key_and_type():
    config = parse(
        {
            "servers": {
                "a": {"type": "stdio", "command": "x"},
                "b": {"type": "http", "url": "http://h/mcp"},
            }
        }
    )
    assert [s.kind for s in config.values()] == ["stdio", "http"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"mcpServers": {"t": {"command": "x", "args": "a b"}}},
            "server 't': \"args\" must be a list of strings",
        ),
        ({"mcpServers": {"t": {"args": ["a"]}}}, "server 't': needs \"command\""),
        (
            {"mcpServers": {"t": {"type": "carrier-pigeon", "url": "http://x"}}},
            "server 't': unknown \"type\" 'carrier-pigeon'",
        ),
        ({"mcpServers": {"t": {"url": "ftp://x"}}}, "server 't': \"url\" must start with http"),
        (
            {"mcpServers": {"t": {"command": "x", "env": {"A": 1}}}},
            "server 't': \"env\" must be an object of strings",
        ),
        ({"mcpServers": []}, '"mcpServers" must be an object'),
        ({"tools": {}}, 'no "mcpServers"'),
    ],
)
def test_errors_name_the_file_and_the_bad_entry(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load(path, environ={})
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, mcp_sync.McpError)


def test_invalid_json_and_missing_file_and_unknown_server(tmp_path):
    with pytest.raises(ConfigError, match=r"not valid JSON \(line 2, column 2: Extra data"):
        load(write(tmp_path, '{"mcpServers": {}\n}}'))
    with pytest.raises(ConfigError, match="cannot read the config"):
        load(tmp_path / "missing.json")
    config = parse({"mcpServers": {"a": {"command": "x"}}}, source="mcp.json")
    with pytest.raises(ConfigError, match=r"mcp.json: no server named 'b' \(servers: a\)"):
        config["b"]


def test_an_unset_variable_fails_only_the_server_that_uses_it(tmp_path):
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "time": {"command": TIME},
                "team": {
                    "url": "https://example.com/mcp",
                    "headers": {"X-Team": "${NOPE_NOT_SET}"},
                },
            }
        },
    )
    config = load(path, environ={})
    assert config["time"].command == TIME
    with pytest.raises(ConfigError) as info:
        config["team"]
    assert (
        str(info.value) == f"{path}: server 'team': ${{NOPE_NOT_SET}} in headers.X-Team is not set"
    )
    assert info.value.server == "team"
    with mcp_sync.connect("time", config=path, request_timeout=20) as client:
        assert client.server_info is not None
    with mcp_sync.config.connect_all(path, ["time"], request_timeout=20) as group:
        assert list(group) == ["time"]
    with pytest.raises(ConfigError, match=r"NOPE_NOT_SET"):
        mcp_sync.config.connect_all(path)


def test_connect_by_name_runs_the_configured_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_TZ", "Asia/Tokyo")
    path = write(
        tmp_path,
        {"mcpServers": {"time": {"command": TIME, "args": ["--local-timezone", "${MY_TZ}"]}}},
    )
    with mcp_sync.connect("time", config=path, request_timeout=20) as client:
        tool = next(t for t in client.list_tools() if t.name == "get_current_time")
        assert (
            "Use 'Asia/Tokyo' as local timezone"
            in (tool.input_schema["properties"]["timezone"]["description"])
        )
        result = client.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.structured_content["timezone"] == "UTC"
    assert client.state == "closed"


def test_env_and_cwd_reach_the_server(tmp_path):
    config = {
        "mcpServers": {
            "env": {
                "command": sys.executable,
                "args": [str(SERVERS / "env_server.py")],
                "env": {"GREETING": "hello from config"},
                "cwd": str(tmp_path),
            }
        }
    }
    with mcp_sync.connect("env", config=config) as client:
        assert client.call_tool("getenv", {"name": "GREETING"}).text == "hello from config"
        assert client.call_tool("getenv", {"name": "PATH"}).text  # merged over os.environ
        assert Path(client.call_tool("cwd").text).resolve() == tmp_path.resolve()


def test_connect_all_lists_prefixed_unique_tools_and_routes_calls(tmp_path):
    config = {
        "mcpServers": {
            "time": {"command": TIME},
            "sdk": {"command": sys.executable, "args": [str(SERVERS / "sdk_server.py")]},
            "sdk.copy": {"command": sys.executable, "args": [str(SERVERS / "sdk_server.py")]},
        }
    }
    with mcp_sync.connect_all(config, request_timeout=20) as group:
        tools = group.list_tools()
        names = [t.name for t in tools]
        assert "time__get_current_time" in names and "sdk__add" in names
        assert "sdk_copy__add" in names  # sanitised: [A-Za-z0-9_-] only
        assert len(set(names)) == len(names)
        assert group.call_tool("sdk__add", {"a": 2, "b": 3}).structured_content == {"result": 5}
        utc = group.call_tool("time__get_current_time", {"timezone": "UTC"})
        assert utc.structured_content["timezone"] == "UTC"
        clients = list(group.clients.values())
        assert all(c.state == "connected" for c in clients)
    assert all(c.state == "closed" for c in clients)


def test_connect_all_closes_the_others_when_one_fails(tmp_path):
    from tests.helpers.support import client_threads, wait_until

    config = {
        "mcpServers": {
            "time": {"command": TIME},
            "broken": {"command": str(tmp_path / "no-such-server")},
        }
    }
    before = set(client_threads())
    with pytest.raises(ServerConnectError) as info:
        mcp_sync.connect_all(config)
    assert info.value.server == "broken"
    assert "broken" in str(info.value)
    assert isinstance(info.value.__cause__, mcp_sync.ServerStartError)
    # the time server's client was closed: none of its threads is left
    wait_until(lambda: not [t for t in client_threads() if t not in before and t.is_alive()])


def test_a_config_entry_is_a_target_like_a_command(tmp_path):
    """One builder: connect(), ClientGroup.add() and the entry's own connect() take an entry;
    connect()'s env=, cwd= and on_stderr= apply to it, over the entry's own."""
    config = parse(
        {
            "mcpServers": {
                "env": {
                    "command": sys.executable,
                    "args": [str(SERVERS / "env_server.py")],
                    "env": {"GREETING": "from config", "KEPT": "kept"},
                }
            }
        }
    )
    stderr: list[str] = []
    with mcp_sync.connect(
        config["env"],
        env={"GREETING": "from connect"},
        cwd=str(tmp_path),
        on_stderr=stderr.append,
    ) as client:
        assert client.call_tool("getenv", {"name": "GREETING"}).text == "from connect"
        assert client.call_tool("getenv", {"name": "KEPT"}).text == "kept"
        assert Path(client.call_tool("cwd").text).resolve() == tmp_path.resolve()
    with mcp_sync.connect("env", config=config, env={"GREETING": "by name"}) as client:
        assert client.call_tool("getenv", {"name": "GREETING"}).text == "by name"
    with mcp_sync.ClientGroup() as group:
        group.add("env", config["env"])
        assert group.call_tool("env__getenv", {"name": "KEPT"}).text == "kept"


def test_an_entry_builds_the_transport_its_type_names():
    from mcp_sync.transports import StdioTransport
    from mcp_sync.transports.http import StreamableHttpTransport
    from mcp_sync.transports.sse_legacy import SseTransport

    config = parse(
        {
            "mcpServers": {
                # parsed only: nothing is started
                "cmd": {"command": "server", "args": ["--flag"], "env": {"A": "1"}, "cwd": "/tmp"},
                "plain": {"url": "http://127.0.0.1:9/mcp"},
                "http": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "1"}},
                "sse": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            }
        }
    )
    stdio = config["cmd"].transport()
    assert isinstance(stdio, StdioTransport)
    assert (stdio.command, stdio.args, stdio.cwd) == ("server", ("--flag",), "/tmp")
    assert config["plain"].transport() == "http://127.0.0.1:9/mcp"  # connect() picks
    http = config["http"].transport()
    assert isinstance(http, StreamableHttpTransport)
    assert isinstance(config["sse"].transport(), SseTransport)
