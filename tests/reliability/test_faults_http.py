"""HTTP faults beyond tests/reliability/test_faults_http_transport.py: restarts, TLS, a tunnelling proxy,
gzip, and an SSE answer split at every byte. Everything runs on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
import ssl
import sys
import threading
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.errors import SessionExpired, TransportError
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import ReconnectOptions, StreamableHttpTransport
from tests.helpers.connect_proxy import ConnectProxy
from tests.helpers.http_faults import FaultServer, Request, initialize_result
from tests.helpers.support import SERVERS, HttpServer, free_port
from tests.helpers.tls_certs import make_certificates

pytestmark = pytest.mark.timeout(60)

FAST = ReconnectOptions(initial_delay=0.05, max_delay=0.2, max_retries=50)


def connect(url: str, **kwargs: object) -> mcp_sync.Client:
    client = mcp_sync.Client("rel", "1", protocol="handshake", request_timeout=10)
    return client.connect(StreamableHttpTransport(url, **kwargs))  # type: ignore[arg-type]


# -- a restart mid-session ------------------------------------------------------------------


def test_server_restart_mid_session(leaks) -> None:
    port = free_port()
    argv = [sys.executable, str(SERVERS / "http_fixture_server.py"), "streamable-http", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    with HttpServer(argv, port):
        plain = connect(url, reconnect=FAST)
        healing = mcp_sync.Client("rel", "1", protocol="handshake", auto_reinitialize=True)
        healing.connect(StreamableHttpTransport(url, reconnect=FAST))
        assert plain.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
        assert healing.list_tools()
    # down: a call fails at once with a clear error naming the URL, nothing hangs
    with pytest.raises(TransportError, match="connection refused"):
        plain.call_tool("add", {"a": 1, "b": 2}, timeout=5)
    with HttpServer(argv, port):  # back, without our session
        with pytest.raises(SessionExpired):
            plain.call_tool("add", {"a": 1, "b": 2})
        assert [t.name for t in healing.list_tools()]  # re-initialized once, then retried
        assert healing.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}
        plain.close()
        healing.close()


# -- TLS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    """A CA and a server certificate for localhost / 127.0.0.1, made now."""
    return make_certificates(tmp_path_factory.mktemp("tls"))


def mcp_handler(req: Request) -> None:
    msg = req.rpc_request()
    if msg is None:
        return
    value = initialize_result() if msg["method"] == "initialize" else {"ok": msg["method"]}
    req.reply_json(jsonrpc.result_response(msg["id"], value))


def tls_server(certificates: dict[str, Path], handler=mcp_handler) -> FaultServer:
    """The scripted fault server, speaking TLS with the test certificate."""
    server = FaultServer(handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates["cert"], certificates["key"])
    server._server.socket = context.wrap_socket(
        server._server.socket, server_side=True, do_handshake_on_connect=False
    )
    server.url = f"https://localhost:{server.port}/mcp"
    return server


def test_tls_to_a_self_signed_server_without_its_ca_fails_clearly(certificates, clean_env, leaks):
    with tls_server(certificates) as server:
        with pytest.raises(
            TransportError, match="TLS error talking to https://localhost"
        ) as raised:
            connect(server.url, open_get_stream=False)
        assert "CERTIFICATE_VERIFY_FAILED" in str(raised.value)
        assert not server.requests  # nothing was sent over the unverified connection


def test_tls_with_the_ca_bundle_from_the_environment_or_a_session(certificates, clean_env, leaks):
    import requests

    with tls_server(certificates) as server:
        clean_env.setenv("REQUESTS_CA_BUNDLE", str(certificates["ca"]))
        with connect(server.url, open_get_stream=False) as client:
            assert client.request("tools/list") == {"ok": "tools/list"}
        clean_env.delenv("REQUESTS_CA_BUNDLE")
        session = requests.Session()
        session.verify = str(certificates["ca"])
        with connect(server.url, session=session, open_get_stream=False) as client:
            assert client.request("ping") == {"ok": "ping"}
        session.close()


def test_https_through_a_connect_proxy_from_the_environment(certificates, clean_env, leaks):
    with tls_server(certificates) as server, ConnectProxy() as proxy:
        clean_env.setenv("HTTPS_PROXY", proxy.url)
        clean_env.setenv("REQUESTS_CA_BUNDLE", str(certificates["ca"]))
        with connect(server.url, open_get_stream=False) as client:
            for _ in range(3):
                assert client.request("tools/list") == {"ok": "tools/list"}
        assert proxy.targets and set(proxy.targets) == {f"localhost:{server.port}"}
        assert len(server.of("POST")) == 5


# -- encodings and framing ------------------------------------------------------------------


def test_gzip_encoded_json_and_sse_answers(leaks) -> None:
    def handler(req: Request) -> None:
        msg = req.rpc_request()
        if msg is None:
            return
        value = initialize_result() if msg["method"] == "initialize" else {"big": "z" * 100_000}
        body = json.dumps(jsonrpc.result_response(msg["id"], value)).encode()
        if msg["method"] == "tools/list":  # an SSE answer, gzip-encoded as a whole
            stream = req.open_sse(headers={"Content-Encoding": "gzip"})
            packed = gzip.compress(b"event: message\ndata: " + body + b"\n\n")
            for i in range(0, len(packed), 100):
                stream.raw(packed[i : i + 100])
            stream.end()
        else:
            req.reply(
                200,
                gzip.compress(body),
                {"Content-Type": "application/json", "Content-Encoding": "gzip"},
            )

    with FaultServer(handler) as server, connect(server.url, open_get_stream=False) as client:
        assert client.request("ping")["big"] == "z" * 100_000
        assert client.request("tools/list")["big"] == "z" * 100_000


def test_chunked_sse_split_at_every_byte_boundary(leaks) -> None:
    """Each byte of the answer stream is its own HTTP chunk: every boundary is a split."""

    def handler(req: Request) -> None:
        msg = req.rpc_request()
        if msg is None:
            return
        if msg["method"] == "initialize":
            req.reply_json(jsonrpc.result_response(msg["id"], initialize_result()))
            return
        stream = req.open_sse()
        note = jsonrpc.notification("notifications/message", {"level": "info", "data": "é\u2028x"})
        answer = jsonrpc.result_response(msg["id"], {"text": "héllo\nwörld"})
        body = (
            f": comment\r\nid: 1\r\ndata: {json.dumps(note)}\r\n\r\n"
            f"event: message\rdata: {json.dumps(answer, ensure_ascii=False)}\r\r"
        ).encode()
        for i in range(len(body)):
            stream.raw(body[i : i + 1])
        stream.end()

    got: list[object] = []
    seen = threading.Event()
    with FaultServer(handler) as server, connect(server.url, open_get_stream=False) as client:
        client.on_notification(
            "notifications/message", lambda n: (got.append(n.params), seen.set())
        )
        for _ in range(3):
            assert client.request("tools/list") == {"text": "héllo\nwörld"}
        assert seen.wait(5)
    assert got[0] == {"level": "info", "data": "é\u2028x"}
