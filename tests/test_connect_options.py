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
CONNECT_ONLY = {"target", "headers", "auth", "env", "cwd", "on_stderr", "timeout", "config"}


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
        [sys.executable, str(SERVERS / "env_server.py")], name="options-test", title="Options",
        request_timeout=12.5, strict_capabilities=False,
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
    config = mcp_sync.config.parse({"mcpServers": {"env": {"command": command[0],
                                                           "args": command[1:]}}})
    with config.connect("env", name="configured") as client:
        assert client.client_info.name == "configured"
