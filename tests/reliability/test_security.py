"""Security properties not covered elsewhere: redirects, header injection, the callback listener.

OAuth token handling (never to another origin, never logged, state checks, 0600 files) is tested
in tests/oauth/; docs/reliability.md points there.
"""

from __future__ import annotations

import json
import socket

import pytest

import mcp_sync
from mcp_sync.auth import BearerToken
from mcp_sync.errors import HttpError
from mcp_sync.oauth import CallbackServer
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import StreamableHttpTransport
from tests.helpers.http_faults import FaultServer, Request, initialize_result

pytestmark = pytest.mark.timeout(30)


def mcp_handler(req: Request) -> None:
    """A minimal handshake-era server: JSON answers echoing what it saw."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "initialize":
        value = initialize_result()
    else:
        value = {"path": req.path, "params": msg.get("params")}
    req.reply_json(jsonrpc.result_response(msg["id"], value))


def connect(url: str, **kwargs: object) -> mcp_sync.Client:
    client = mcp_sync.Client("sec", "1", protocol="handshake", request_timeout=5)
    return client.connect(StreamableHttpTransport(url, **kwargs))  # type: ignore[arg-type]


def test_a_redirect_to_another_origin_is_refused_and_the_other_origin_gets_nothing(leaks) -> None:
    with FaultServer(mcp_handler) as other:

        def redirect(req: Request) -> None:
            req.reply(307, "", {"Location": other.url})

        with FaultServer(redirect) as server:
            with pytest.raises(HttpError) as raised:
                connect(server.url, auth=BearerToken("s3cret"), headers={"X-Api-Key": "k3y"})
            assert raised.value.status == 307
        assert other.requests == []  # neither the token nor the API key header went there


@pytest.mark.parametrize("status", [307, 308])
def test_a_same_origin_307_or_308_is_followed_with_body_and_credentials(status: int) -> None:
    def handler(req: Request) -> None:
        if req.path == "/mcp":
            req.reply(status, "", {"Location": "/mcp/"})
        else:
            mcp_handler(req)

    with FaultServer(handler) as server:
        client = connect(server.url, auth=BearerToken("tok"))
        try:
            assert client.request("tools/list", {"cursor": "c"})["params"] == {"cursor": "c"}
        finally:
            client.close()
        moved = [r for r in server.of("POST") if r.path == "/mcp/"]
        assert moved and all(r.headers["authorization"] == "Bearer tok" for r in moved)


@pytest.mark.parametrize("status", [301, 302, 303])
def test_a_post_redirected_with_301_302_303_fails_and_is_not_resent_as_a_get(status: int) -> None:
    def handler(req: Request) -> None:
        req.reply(status, "", {"Location": "/elsewhere"})

    with FaultServer(handler) as server:
        with pytest.raises(HttpError) as raised:
            connect(server.url, open_get_stream=False)
        assert raised.value.status == status
        assert [(r.method, r.path) for r in server.requests] == [("POST", "/mcp")]


def test_mcp_name_and_method_values_cannot_inject_headers() -> None:
    hostile = "evil\r\nX-Injected: 1\r\n\r\nGET / HTTP/1.1"
    with FaultServer(mcp_handler) as server:
        client = connect(server.url, open_get_stream=False)
        try:
            client.request("tools/call", {"name": hostile, "arguments": {}})
            client.request("prompts/get", {"name": hostile})
            client.request("resources/read", {"uri": "file:///x\nX-Injected: 2"})
            client.request("odd\r\nX-Injected: 3", {})
        finally:
            client.close()
        posts = server.of("POST")
        assert len(posts) == 6
        for post in posts:
            assert "x-injected" not in post.headers
            for value in post.headers.values():
                assert "\r" not in value and "\n" not in value
        named = [
            p for p in posts if p.json["method"] in ("tools/call", "prompts/get", "resources/read")
        ]
        names = [p.headers.get("mcp-name") for p in named]
        assert len(names) == 3 and all(n and n.startswith("=?base64?") for n in names), names


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 9))  # no packet is sent: just picks an interface
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_oauth_callback_server_listens_on_loopback_only() -> None:
    server = CallbackServer.listen(timeout=5)
    try:
        host, port = server._httpd.server_address[:2]
        assert host == "127.0.0.1" and server.redirect_url.startswith("http://127.0.0.1:")
        other = _non_loopback_address()
        if other is not None:  # reachable on loopback, refused on every other interface
            with pytest.raises(OSError):
                socket.create_connection((other, port), timeout=2).close()
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        server.close()


def test_error_bodies_and_reprs_never_carry_the_bearer_token() -> None:
    def handler(req: Request) -> None:
        req.reply(500, json.dumps({"echo": req.header("authorization")}))

    with FaultServer(handler) as server:
        transport = StreamableHttpTransport(server.url, auth=BearerToken("t0ken-XYZ"))
        with pytest.raises(HttpError) as raised:
            mcp_sync.Client("sec", "1", protocol="handshake").connect(transport)
        assert "t0ken-XYZ" not in repr(transport) and "t0ken-XYZ" not in repr(raised.value.headers)
        # the body echoes it: redacted in the message and the body too (test_redaction.py)
        for text in (str(raised.value), repr(raised.value), raised.value.body):
            assert "t0ken-XYZ" not in text and "[redacted]" in text
