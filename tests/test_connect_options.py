"""``mcp_sync.connect()`` spells out the Client's options as typed keyword parameters (for IDEs,
type checkers and the API docs), and they stay in step with ``Client()``."""

from __future__ import annotations

import inspect
import sys
import typing
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.auth import AuthProvider

SERVERS = Path(__file__).resolve().parent / "servers"
# connect()'s own: where and how to reach the server.
CONNECT_ONLY = {
    "target",
    "headers",
    "auth",
    "env",
    "cwd",
    "on_stderr",
    "timeout",
    "config",
    "sandbox",
    "verify",
    "cert",
    "proxy",
}


def _hints(function: typing.Callable[..., object]) -> dict[str, object]:
    return typing.get_type_hints(
        function, localns={"AuthProvider": AuthProvider, "Client": mcp_sync.Client}
    )


def test_connect_takes_every_client_option_as_a_typed_keyword():
    client = inspect.signature(mcp_sync.Client.__init__).parameters
    connect = inspect.signature(mcp_sync.connect).parameters
    client_options = [name for name in client if name != "self"]
    assert not any(p.kind is p.VAR_KEYWORD for p in connect.values())
    assert set(connect) == CONNECT_ONLY | set(client_options)
    client_hints, connect_hints = _hints(mcp_sync.Client.__init__), _hints(mcp_sync.connect)
    for name in client_options:
        assert connect[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert connect[name].default == client[name].default, name
        assert connect_hints[name] == client_hints[name], name


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


def test_the_functions_passing_client_options_on_name_them_all():
    from mcp_sync._targets import ClientOptions

    client = inspect.signature(mcp_sync.Client.__init__).parameters
    client_hints = _hints(mcp_sync.Client.__init__)
    assert list(ClientOptions.__annotations__) == [name for name in client if name != "self"]
    options_hints = typing.get_type_hints(ClientOptions)
    for name in ClientOptions.__annotations__:
        assert options_hints[name] == client_hints[name], name


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


def test_the_pytest_factory_takes_what_connect_takes():
    from typing_extensions import Unpack

    from mcp_sync._targets import ClientOptions
    from mcp_sync.config import Config
    from mcp_sync.pytest_plugin import McpClientFactory
    from mcp_sync.transports._http.options import ClientCert, Verify

    factory = inspect.signature(McpClientFactory.__call__).parameters
    assert {name for name, p in factory.items() if p.kind is p.KEYWORD_ONLY} == CONNECT_ONLY - {
        "target"
    }
    localns = {
        "AuthProvider": AuthProvider,
        "Client": mcp_sync.Client,
        "Config": Config,
        "ClientOptions": ClientOptions,
        "Unpack": Unpack,
        "Target": object,
        "Sandbox": mcp_sync.Sandbox,
        "Verify": Verify,
        "ClientCert": ClientCert,
    }
    factory_hints = typing.get_type_hints(McpClientFactory.__call__, localns=localns)
    connect_hints = _hints(mcp_sync.connect)
    for name in CONNECT_ONLY - {"target"}:
        assert factory_hints[name] == connect_hints[name], name
    assert factory_hints["client_options"] == Unpack[ClientOptions]


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
