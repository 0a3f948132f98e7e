"""One header validation: ``headers=`` (both HTTP transports and ``connect()``),
``mcp_sync.extra_headers``, a config file's ``headers`` and the CLI's ``-H`` refuse the same
headers, each naming the header and what is wrong with it, and send nothing.

The hostile table holds what would change how the request is framed or routed (hop-by-hop
and framing headers: ``Transfer-Encoding: chunked`` next to the ``Content-Length`` of an
unchunked body is a request-smuggling shape), what the protocol sets itself, and values that
cannot be one header's value (a line break, an obs-fold, NUL and other controls, a character
beyond Latin-1). The server is a plain HTTP server on 127.0.0.1 that records what reaches it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync import ConfigError, extra_headers
from mcp_sync.cli import main as cli_main
from mcp_sync.transports.http import StreamableHttpTransport
from mcp_sync.transports.sse_legacy import SseTransport
from tests.helpers.http_faults import FaultServer, answer

pytestmark = pytest.mark.timeout(60)

#: (name, value, what the refusal says). No value starts or ends with whitespace: the CLI's
#: ``-H 'Name: value'`` trims it, as curl does.
HOSTILE = [
    ("Transfer-Encoding", "chunked", "framing"),
    ("Content-Length", "999999", "framing"),
    ("Host", "intranet.example", "framing"),
    ("Connection", "close", "hop-by-hop"),
    ("Keep-Alive", "timeout=5", "hop-by-hop"),
    ("Proxy-Connection", "keep-alive", "hop-by-hop"),
    ("Upgrade", "h2c", "hop-by-hop"),
    ("TE", "trailers", "hop-by-hop"),
    ("Trailer", "X-Checksum", "hop-by-hop"),
    ("Mcp-Session-Id", "s-forged", "set by the protocol"),
    ("mcp-protocol-version", "1999-01-01", "set by the protocol"),
    ("Content-Type", "text/plain", "set by the protocol"),
    ("X-Nul", "a\x00b", "U+0000"),
    ("X-Soh", "a\x01b", "U+0001"),
    ("X-Del", "a\x7fb", "U+007F"),
    ("X-Split", "a\r\nX-Injected: 1", "line break"),
    ("X-Fold", "a\r\n b", "line break"),
    ("X-Bare-Lf", "a\nb", "line break"),
    ("X-Snowman", "a\u2603b", "U+2603"),
    ("X-Emoji", "\U0001f511", "U+1F511"),
    ("X Bad", "a-value", "not a valid HTTP header name"),
    ("X(Bad)", "a-value", "not a valid HTTP header name"),
    ("X-Caf\u00e9", "a-value", "not a valid HTTP header name"),
]
IDS = [f"{name}={value!r}" for name, value, _ in HOSTILE]


def refused_by_headers(kind: type, url: str, headers: dict[str, str]) -> str:
    with pytest.raises(ValueError) as raised:
        kind(url, headers=headers)
    return str(raised.value)


def refused_by_connect(url: str, headers: dict[str, str]) -> str:
    with pytest.raises(ValueError) as raised:
        mcp_sync.connect(url, headers=headers, protocol="handshake", request_timeout=5)
    return str(raised.value)


def refused_by_extra_headers(url: str, headers: dict[str, str]) -> str:
    with mcp_sync.connect(url, protocol="handshake", request_timeout=5) as client:
        client.ping()
        with pytest.raises(ValueError) as raised, extra_headers(headers):
            client.ping()
    return str(raised.value)


def refused_by_config(url: str, headers: dict[str, str], tmp: Path) -> str:
    path = tmp / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"url": url, "headers": headers}}}))
    with pytest.raises(ConfigError) as raised:
        mcp_sync.config.load(path)
    return str(raised.value)


def refused_by_cli(url: str, headers: dict[str, str], tmp: Path) -> str:
    (name, value), *_ = headers.items()
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["--url", url, "-H", f"{name}: {value}", "tools"], out=out, err=err)
    assert code == 2, err.getvalue()  # a usage error
    assert out.getvalue() == ""
    return err.getvalue()


SURFACES: dict[str, Callable[[str, dict[str, str], Path], str]] = {
    "StreamableHttpTransport(headers=)": lambda url, h, _: refused_by_headers(
        StreamableHttpTransport, url, h
    ),
    "SseTransport(headers=)": lambda url, h, _: refused_by_headers(SseTransport, url, h),
    "connect(headers=)": lambda url, h, _: refused_by_connect(url, h),
    "extra_headers": lambda url, h, _: refused_by_extra_headers(url, h),
    "a config file": refused_by_config,
    "the CLI's -H": refused_by_cli,
}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_surface_refuses_the_same_hostile_headers(surface: str, tmp_path: Path) -> None:
    with FaultServer(answer) as server:
        for name, value, reason in HOSTILE:
            message = SURFACES[surface](server.url, {name: value}, tmp_path)
            assert repr(name) in message and reason in message, (name, message)
            assert value not in message  # (a value may be a credential: never quoted)
        sent = [n for r in server.requests for n, v, _ in HOSTILE if r.headers.get(n.lower()) == v]
    assert sent == []


#: Values that are fine on every surface: HTAB inside, Latin-1, empty.
PLAIN = {"X-Tenant": "acme", "X-Tab": "a\tb", "X-Latin": "caf\u00e9", "X-Empty": ""}


def test_plain_headers_pass_every_surface_and_reach_the_server(tmp_path: Path) -> None:
    with FaultServer(answer) as server:
        StreamableHttpTransport(server.url, headers=PLAIN)
        SseTransport(server.url, headers=PLAIN)
        path = tmp_path / "mcp.json"
        path.write_text(json.dumps({"mcpServers": {"s": {"url": server.url, "headers": PLAIN}}}))
        assert dict(mcp_sync.config.load(path)["s"].headers) == PLAIN
        client = mcp_sync.connect(server.url, headers=PLAIN, protocol="handshake")
        with client, extra_headers({"X-Extra": "caf\u00e9\tau lait"}):
            client.ping()
        seen = server.of("POST")[-1].headers
        argv = ["--url", server.url, *(f"-H{n}: {v}" for n, v in PLAIN.items()), "tools"]
        assert cli_main(argv, out=io.StringIO(), err=io.StringIO()) == 0
        seen_by_cli = server.of("POST")[-1].headers
    # (sent as Latin-1 bytes, as the stdlib server reads them)
    assert seen["x-tab"] == "a\tb" and seen["x-latin"] == "caf\u00e9" and seen["x-empty"] == ""
    assert seen["x-extra"] == "caf\u00e9\tau lait"
    assert {k: seen_by_cli[k.lower()] for k in PLAIN} == PLAIN


def test_a_refused_value_is_named_never_quoted_even_as_a_token() -> None:
    """A token read from a file keeps its newline: the refusal says so, without the token."""
    token = "tok-Vb6Nm2Qw8Er4Ty0Ui"
    with pytest.raises(ValueError) as raised:
        StreamableHttpTransport("http://127.0.0.1:9/mcp", headers={"X-Api-Key": f"{token}\n"})
    assert "'X-Api-Key'" in str(raised.value) and "newline" in str(raised.value)
    assert token not in str(raised.value) and token not in repr(raised.value)


def test_a_cli_header_without_a_colon_is_refused_without_quoting_it() -> None:
    """``-H 'Authorization Bearer ...'`` (the colon forgotten): the usage error says what the
    option must look like, not what was given, which is most likely a token."""
    token = "tok-Pl9Ok8Ij7Uh6Yg5Tf"
    out, err = io.StringIO(), io.StringIO()
    argv = ["--url", "http://127.0.0.1:9/mcp", "-H", f"Authorization Bearer {token}", "tools"]
    assert cli_main(argv, out=out, err=err) == 2
    assert "--header must look like 'Name: value'" in err.getvalue()
    assert token not in out.getvalue() + err.getvalue()
