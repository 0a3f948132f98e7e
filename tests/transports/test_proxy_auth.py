"""Through a real authenticating proxy (Debian's tinyproxy with ``BasicAuth``, see
``tests/helpers/tinyproxy.py``) to real MCP servers: the official SDK's, over HTTPS
(``tests/servers/tls_mcp_server.py``, tunnelled with ``CONNECT``) and plain HTTP.

Every server is on 127.0.0.1, which a client could reach without the proxy: each test proves
its traffic went through the proxy from the proxy's own log of the requests it was asked.
``clean_env`` clears ``NO_PROXY``; requests bypasses an environment proxy for the hosts that
``NO_PROXY`` lists (one test shows it), never one given as ``proxy=``.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.config import load
from mcp_sync.errors import ProxyError, TransportError
from tests.helpers.support import SERVERS, HttpServer, free_port
from tests.helpers.tinyproxy import Tinyproxy
from tests.helpers.tls_certs import make_certificates

pytest.importorskip("mcp.server.mcpserver")
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        shutil.which("tinyproxy") is None,
        reason="needs tinyproxy (make services: apt-get install tinyproxy)",
    ),
]

USER, PASSWORD = "alice", "pr0xy-S3cret-7"


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def tls_port(certificates) -> Iterator[int]:
    port = free_port()
    argv = [sys.executable, str(SERVERS / "tls_mcp_server.py"), str(port)]
    with HttpServer([*argv, str(certificates["cert"]), str(certificates["key"])], port):
        yield port


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    port = free_port()
    argv = [sys.executable, str(SERVERS / "http_fixture_server.py"), "streamable-http", str(port)]
    with HttpServer(argv, port):
        yield port


@pytest.fixture
def proxy(tmp_path) -> Iterator[Tinyproxy]:
    with Tinyproxy(tmp_path, USER, PASSWORD) as running:
        yield running


def _add(client: mcp_sync.Client) -> object:
    return client.call_tool("add", {"a": 2, "b": 3}).structured_content


def _connects(proxy: Tinyproxy, port: int) -> list[str]:
    return [line for line in proxy.requests() if line.startswith(f"CONNECT localhost:{port} ")]


def _posts(proxy: Tinyproxy, port: int) -> list[str]:
    return [line for line in proxy.requests() if f"http://127.0.0.1:{port}/mcp" in line]


def test_https_and_http_through_the_proxy_given_to_the_client(
    proxy, certificates, tls_port, http_port, clean_env
) -> None:
    tls_url = f"https://localhost:{tls_port}/mcp"
    with mcp_sync.connect(
        tls_url, proxy=proxy.url(), verify=str(certificates["ca"]), request_timeout=30
    ) as client:
        assert _add(client) == {"result": 5}
    assert _connects(proxy, tls_port)  # tunnelled: the proxy saw CONNECT, not the requests
    assert not any(str(tls_port) in line and "POST" in line for line in proxy.requests())
    with mcp_sync.connect(
        f"http://127.0.0.1:{http_port}/mcp", proxy=proxy.url(), request_timeout=30
    ) as client:
        assert _add(client) == {"result": 5}
    posts = _posts(proxy, http_port)
    assert any(line.startswith("POST ") for line in posts), proxy.requests()


def test_the_proxy_from_https_proxy_and_http_proxy(
    proxy, certificates, tls_port, http_port, clean_env
) -> None:
    clean_env.setenv("HTTPS_PROXY", proxy.url())
    clean_env.setenv("HTTP_PROXY", proxy.url())
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(certificates["ca"]))
    with mcp_sync.connect(f"https://localhost:{tls_port}/mcp", request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    assert _connects(proxy, tls_port)
    http_url = f"http://127.0.0.1:{http_port}/mcp"
    with mcp_sync.connect(http_url, request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    seen = len(_posts(proxy, http_port))
    assert seen
    # NO_PROXY bypasses the environment's proxy for its hosts, not one given as proxy=
    clean_env.setenv("NO_PROXY", "127.0.0.1,localhost")
    with mcp_sync.connect(http_url, request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    assert len(_posts(proxy, http_port)) == seen
    with mcp_sync.connect(http_url, proxy=proxy.url(), request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    assert len(_posts(proxy, http_port)) > seen


def test_the_proxy_from_mcp_json_with_its_password_from_the_environment(
    proxy, certificates, tls_port, tmp_path, clean_env
) -> None:
    clean_env.setenv("PROXY_PASSWORD", PASSWORD)
    entry = {
        "url": f"https://localhost:{tls_port}/mcp",
        "type": "http",
        "verify": str(certificates["ca"]),
        "proxy": f"http://{USER}:${{PROXY_PASSWORD}}@127.0.0.1:{proxy.port}",
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"corp": entry}}), encoding="utf-8")
    config = load(path)
    assert PASSWORD not in repr(config["corp"])
    with mcp_sync.connect("corp", config=config, request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    assert _connects(proxy, tls_port)


def test_wrong_proxy_credentials_fail_typed_and_never_show_the_password(
    proxy, certificates, tls_port, http_port, clean_env, caplog
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_sync")
    wrong = "not-" + PASSWORD
    bare = f"http://127.0.0.1:{proxy.port}"
    with pytest.raises(ProxyError) as raised:
        mcp_sync.connect(
            f"https://localhost:{tls_port}/mcp",
            proxy=proxy.url(password=wrong),
            verify=str(certificates["ca"]),
            request_timeout=30,
        )
    error = raised.value
    assert error.proxy == bare
    assert f"the proxy {bare} refused" in str(error)
    # (tinyproxy answers 401; RFC 9110's proxy answer is 407: both name the credentials)
    assert "401 Unauthorized: its user or password is wrong or missing" in str(error)
    # plain HTTP: tinyproxy's refusal is a 401 with WWW-Authenticate, which nothing tells from
    # the server's own: an HTTP error (an RFC 9110 proxy's 407 is a ProxyError, below)
    with pytest.raises(TransportError) as plain:
        mcp_sync.connect(
            f"http://127.0.0.1:{http_port}/mcp",
            proxy=proxy.url(password=wrong),
            request_timeout=30,
        )
    for shown in (str(error), repr(error), str(plain.value), repr(plain.value), caplog.text):
        assert wrong not in shown
        assert "pr0xy" not in shown


@pytest.fixture
def rfc_proxy() -> Iterator[str]:
    """proxy.py (a real proxy that answers wrong credentials with 407 and
    ``Proxy-Authenticate``, as RFC 9110 says), requiring ``USER``/``PASSWORD``; its URL
    without credentials."""
    port = free_port()
    argv = [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", str(port)]
    with HttpServer([*argv, "--basic-auth", f"{USER}:{PASSWORD}", "--num-workers", "1"], port):
        yield f"http://127.0.0.1:{port}"


def test_a_proxys_407_over_plain_http_is_a_proxy_error_never_sent_to_the_server(
    rfc_proxy, http_port, clean_env, caplog
) -> None:
    """Over ``http://`` the proxy refuses the request itself (no ``CONNECT``): its 407 was an
    ``HttpError`` as if the server had answered. It is a ``ProxyError`` naming the proxy
    (never the password) with ``sent`` False: the server never saw the request, so recovery
    may send it again once the credentials are right."""
    caplog.set_level(logging.DEBUG, logger="mcp_sync")
    url = f"http://127.0.0.1:{http_port}/mcp"
    wrong = "not-" + PASSWORD
    host = rfc_proxy.removeprefix("http://")
    with pytest.raises(ProxyError) as raised:
        mcp_sync.connect(url, proxy=f"http://{USER}:{wrong}@{host}", request_timeout=30)
    error = raised.value
    assert error.proxy == rfc_proxy
    assert f"the proxy {rfc_proxy} refused the request to {url} (407" in str(error)
    assert "its user or password is wrong or missing" in str(error)
    assert error.sent is False
    for shown in (str(error), repr(error), caplog.text):
        assert wrong not in shown
    with mcp_sync.connect(url, proxy=f"http://{USER}:{PASSWORD}@{host}", request_timeout=30) as c:
        assert _add(c) == {"result": 5}
