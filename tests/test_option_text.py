"""Strings, environments and callbacks given as options are checked where they are given
(``mcp_sync/_rules/values.py``; the HTTP settings in ``transports/_http/tls.check_options``).

Each hostile value goes through every surface that takes its option: ``connect()``,
``transport_for``, a config entry's ``connect`` and ``transport``, the transport's own
constructor (and ``tls_session`` for the HTTP settings). Each must raise ``TypeError`` or
``ValueError`` naming the option, before any process starts or any request goes out; no
message quotes the value (an argument, an environment value or a proxy URL may be a secret).

Before: a NUL in ``env``, ``cwd`` or an argument failed in ``Popen`` with ``ValueError:
embedded null byte``, naming nothing; ``env={"A": 1}`` and ``cwd=5`` with a ``TypeError`` from
``subprocess``; ``on_stderr=123`` was taken, and the stderr reader would have failed on it;
``proxy=nan`` failed at ``initialize`` as a ``TransportError`` ("expected string or
bytes-like object"); ``cert=5`` at the first request.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

import mcp_sync
from mcp_sync.config import parse
from mcp_sync.transports import SseTransport, StreamableHttpTransport, tls_session
from tests.helpers.support import SERVERS, child_pids

SECRET = "s3cr3t-value"
COMMAND = [sys.executable, str(SERVERS / "env_server.py")]
URL = "http://127.0.0.1:9/mcp"  # (nothing listens: a value that slipped through fails there)

#: option, hostile value, the words the error must hold
STDIO = [
    ("env", {"A": f"{SECRET}\0"}, "env['A']"),
    ("env", {"A\0B": SECRET}, "env"),
    ("env", {"A=B": SECRET}, "env"),
    ("env", {"": SECRET}, "env"),
    ("env", {"A": 1}, "env['A']"),
    ("env", ["A", SECRET], "env"),
    ("cwd", f"/tmp/{SECRET}\0", "cwd"),
    ("cwd", 5, "cwd"),
    ("on_stderr", 123, "on_stderr"),
    ("on_stderr", SECRET, "on_stderr"),
]
HTTP = [
    ("verify", 5, "verify="),
    ("cert", 5, "cert="),
    ("cert", (f"{SECRET}.pem",), "cert="),
    ("cert", (f"{SECRET}\0.pem", "key.pem"), "cert="),
    ("proxy", float("nan"), "proxy="),
    ("proxy", f"ftp://user:{SECRET}@proxy", "proxy="),
    ("proxy", "http://", "proxy="),
    ("user_agent_suffix", f"app/1\r\nX-Leak: {SECRET}", "user_agent_suffix="),
    ("headers", ["Authorization", SECRET], "headers"),
    ("headers", {"X-Key": f"{SECRET}\r\nX-Leak: 1"}, "X-Key"),
]


def _config(kind: str) -> Any:
    entry = {"command": COMMAND[0], "args": COMMAND[1:]} if kind == "stdio" else {"url": URL}
    return parse({"mcpServers": {"x": {**entry, **({"type": "http"} if kind == "http" else {})}}})


def _stdio_surfaces() -> dict[str, Callable[..., object]]:
    return {
        "connect": lambda **o: mcp_sync.connect(COMMAND, timeout=10, **o),
        "transport_for": lambda **o: mcp_sync.transport_for(COMMAND, **o),
        "Config.connect": lambda **o: _config("stdio").connect("x", timeout=10, **o),
        "ServerConfig.transport": lambda **o: _config("stdio")["x"].transport(**o),
        "StdioTransport": lambda **o: mcp_sync.StdioTransport(COMMAND[0], COMMAND[1:], **o),
    }


def _http_surfaces() -> dict[str, Callable[..., object]]:
    return {
        "connect": lambda **o: mcp_sync.connect(URL, timeout=10, **o),
        "transport_for": lambda **o: mcp_sync.transport_for(URL, **o),
        "Config.connect": lambda **o: _config("http").connect("x", timeout=10, **o),
        "ServerConfig.transport": lambda **o: _config("http")["x"].transport(**o),
        "StreamableHttpTransport": lambda **o: StreamableHttpTransport(URL, **o),
        "SseTransport": lambda **o: SseTransport(URL, **o),
        "tls_session": lambda **o: tls_session(**o),
    }


def _refused(make: Callable[..., object], option: str, value: object, words: str) -> None:
    before = child_pids()
    with pytest.raises((TypeError, ValueError)) as caught:
        made = make(**{option: value})
        close = getattr(made, "close", None)
        if close is not None:
            close()
    message = str(caught.value)
    assert words in message, message
    assert SECRET not in message and SECRET not in repr(caught.value)
    assert child_pids() <= before  # nothing was started


@pytest.mark.parametrize(("option", "value", "words"), STDIO)
@pytest.mark.parametrize("surface", list(_stdio_surfaces()))
def test_a_command_s_hostile_option_is_refused_by_name_on_every_surface(
    surface: str, option: str, value: object, words: str
) -> None:
    _refused(_stdio_surfaces()[surface], option, value, words)


@pytest.mark.parametrize(("option", "value", "words"), HTTP)
@pytest.mark.parametrize("surface", list(_http_surfaces()))
def test_a_hostile_http_setting_is_refused_by_name_on_every_surface(
    surface: str, option: str, value: object, words: str
) -> None:
    if option == "headers" and surface == "tls_session":
        words = "'headers'"  # (no setting of a session's: refused as unknown)
    _refused(_http_surfaces()[surface], option, value, words)


@pytest.mark.parametrize("surface", list(_http_surfaces()))
def test_a_misspelt_setting_is_refused_not_dropped(surface: str) -> None:
    """``**Unpack[...]`` takes any keyword at run time: ``verfy=False`` was dropped without a
    word by the HTTP transports, ``tls_session`` and ``transport_for``, and the transport went
    on with the default."""
    _refused(_http_surfaces()[surface], "verfy", False, "'verfy'")


@pytest.mark.parametrize("arg", [f"--token={SECRET}\0", f"{SECRET}\0"])
def test_a_command_argument_with_a_nul_is_refused_by_its_position(arg: str) -> None:
    for make in (
        lambda: mcp_sync.connect([*COMMAND, arg], timeout=10),
        lambda: mcp_sync.StdioTransport(COMMAND[0], [COMMAND[1], arg]),
        lambda: mcp_sync.transport_for(f"{sys.executable} {arg}"),
    ):
        with pytest.raises(ValueError, match=r"args\[\d\]") as caught:
            make()
        assert SECRET not in str(caught.value)


def test_what_the_checks_take_still_connects() -> None:
    """A path-like ``cwd``, a number among the arguments (made a string, as before), an
    environment value of None (unset) and a proxy without a scheme (``requests`` reads it as
    http://) are taken."""
    from pathlib import Path

    seen: list[str] = []
    with mcp_sync.connect(
        COMMAND,
        cwd=Path(SERVERS),
        env={"GIVEN": "given", "HOME": None},
        on_stderr=seen.append,
        timeout=30,
    ) as client:
        assert client.call_tool("getenv", {"name": "GIVEN"}).text == "given"
        assert client.call_tool("getenv", {"name": "HOME"}).text == ""
        assert client.call_tool("cwd").text == str(SERVERS)
    assert mcp_sync.StdioTransport(sys.executable, ["-c", "pass", 7]).args[-1] == "7"  # type: ignore[list-item]
    assert isinstance(mcp_sync.transport_for(URL, proxy="127.0.0.1:3128"), StreamableHttpTransport)
