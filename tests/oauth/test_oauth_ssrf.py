"""Server-named URLs cannot point the OAuth client into the user's network (SSRF), checked
at the socket: the ``resource_metadata`` URL, the ``authorization_servers`` and the endpoints
of the metadata, against the scriptable authorization server on 127.0.0.1 (oauth_stub).

Nothing here ever connects to a non-loopback address: the ``connects`` fixture records every
socket connect of the process and refuses (before any packet) one to an address that is not
loopback, and names are mapped by a fake resolver (``resolver``), so that a refusal is seen
as "no connect was attempted", not as a timeout.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from mcp_sync.auth import UnauthorizedContext
from mcp_sync.oauth import (
    ForbiddenEndpointError,
    InsecureEndpointError,
    OAuthError,
    OAuthProvider,
    headless_redirect,
)
from tests.helpers.oauth_stub import Stub
from tests.helpers.tls_certs import make_certificates

REDIRECT = "http://127.0.0.1:1/callback"
#: A public address for a fake MCP server's name (never connected to: see the module doc).
PUBLIC = "93.184.216.34"


@pytest.fixture
def connects(monkeypatch):
    """The host of every socket connect; one to a non-loopback address is refused unmade."""
    attempts: list[str] = []
    real_connect = socket.socket.connect

    def connect(self, address):
        if isinstance(address, tuple):
            host = str(address[0])
            attempts.append(host)
            try:
                loopback = ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
            except ValueError:
                loopback = False  # a name: the guard does not resolve it for the code
            if not loopback:
                raise ConnectionRefusedError(f"the test refuses to connect to {host}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


def _off_loopback(attempts: list[str]) -> list[str]:
    return [host for host in attempts if host not in ("127.0.0.1", "::1")]


class Resolver:
    """Answers for the names given (a list: one answer per lookup, the last one repeated);
    any other name or address is resolved as usual."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}
        self.asked: list[str] = []

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        answers = self.names.get(name)
        if answers is None:
            return _real_getaddrinfo(host, port, family, type, proto, flags)
        self.asked.append(name)
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        port = int(port or 0)
        if ":" in address:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]


_real_getaddrinfo = socket.getaddrinfo


@pytest.fixture
def resolver(monkeypatch):
    fake = Resolver()
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


def challenge(url: str, metadata_url: str) -> UnauthorizedContext:
    return UnauthorizedContext(
        status=401,
        headers={},
        www_authenticate=f'Bearer resource_metadata="{metadata_url}"',
        url=url,
        session=requests.Session(),
    )


def provider_for(server_url: str, **options) -> OAuthProvider:
    return OAuthProvider(server_url, REDIRECT, on_redirect=headless_redirect(), **options)


# -- link-local: never ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "metadata_url",
    [
        "https://169.254.169.254/latest/meta-data/",
        "https://[fe80::1]/latest/meta-data/",
        "https://[::ffff:169.254.169.254]/latest/meta-data/",  # the same address, spelt IPv6
        "https://metadata.attacker.test/latest/meta-data/",  # a name for 169.254.169.254
    ],
)
def test_a_link_local_resource_metadata_url_is_refused_before_any_connect(
    stub, connects, resolver, metadata_url
):
    resolver.names["metadata.attacker.test"] = ["169.254.169.254"]
    stub.standard()
    provider = provider_for(stub.url)
    # Before: the client connected to 169.254.169.254 (cloud metadata), then went on.
    with pytest.raises(ForbiddenEndpointError) as caught:
        provider.on_unauthorized(challenge(stub.url, metadata_url))
    assert _off_loopback(connects) == []
    text = str(caught.value)
    assert metadata_url in text and "link-local" in text, text
    assert caught.value.url == metadata_url


@pytest.mark.parametrize("metadata_url", ["https://0.0.0.0/x", "https://[::]/x"])
def test_the_unspecified_address_is_refused(stub, connects, metadata_url):
    # 0.0.0.0 reaches the host's own services on Linux: it is no address to fetch from
    stub.standard()
    provider = provider_for(stub.url)
    with pytest.raises(ForbiddenEndpointError, match="not a unicast host"):
        provider.on_unauthorized(challenge(stub.url, metadata_url))
    assert _off_loopback(connects) == []


def test_a_token_endpoint_in_the_link_local_range_is_refused(stub, connects):
    stub.standard(metadata={"token_endpoint": "https://169.254.169.254/token"})
    provider = provider_for(stub.url)
    with pytest.raises(ForbiddenEndpointError, match="token endpoint .*link-local"):
        provider.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))
    assert _off_loopback(connects) == []
    assert provider.tokens is None


# -- private ranges and loopback: only from the same range -------------------------------------


@pytest.mark.parametrize(
    "issuer",
    [
        "https://10.1.2.3",
        "https://172.16.0.1",
        "https://192.168.1.1",
        "https://100.64.0.1",  # carrier-grade NAT
        "https://[fd00::1]",
        "https://internal.attacker.test",  # a name for 10.0.0.7
    ],
)
def test_a_private_authorization_server_is_refused_for_a_server_on_loopback(
    stub, connects, resolver, issuer
):
    resolver.names["internal.attacker.test"] = ["10.0.0.7"]
    stub.standard()
    stub.route(
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        (200, {"resource": stub.url, "authorization_servers": [issuer]}),
    )
    provider = provider_for(stub.url)
    # Before: the client connected to each of the private addresses.
    with pytest.raises(ForbiddenEndpointError, match="a private address") as caught:
        provider.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))
    assert _off_loopback(connects) == []
    assert issuer in str(caught.value)


def _public_server(resolver, stub: Stub) -> str:
    """A fake MCP server on a public address, whose metadata points at the stub (loopback)."""
    resolver.names["mcp.public.test"] = [PUBLIC]
    server_url = "https://mcp.public.test/mcp"
    stub.standard()
    stub.route(
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        (200, {"resource": server_url, "authorization_servers": [stub.base]}),
    )
    return server_url


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_public_server_cannot_point_the_client_at_loopback(stub, connects, resolver, host):
    server_url = _public_server(resolver, stub)
    metadata_url = f"http://{host}:{stub.httpd.server_address[1]}/"
    metadata_url += ".well-known/oauth-protected-resource/mcp"
    provider = provider_for(server_url)
    # Before: plain http to any loopback port was fetched (Redis, an admin page...).
    with pytest.raises(ForbiddenEndpointError, match="a loopback address") as caught:
        provider.on_unauthorized(challenge(server_url, metadata_url))
    assert stub.requests == [], "a request reached the loopback service"
    assert metadata_url in str(caught.value)
    assert "allow_hosts" in str(caught.value)  # the way out is named
    assert _off_loopback(connects) == []


@pytest.mark.parametrize("allowed", ["127.0.0.1", "127.0.0.0/8"])
def test_allow_hosts_lets_a_listed_host_through(stub, connects, resolver, allowed):
    server_url = _public_server(resolver, stub)
    provider = provider_for(server_url, allow_hosts=[allowed])
    metadata_url = f"{stub.base}/.well-known/oauth-protected-resource/mcp"
    assert provider.on_unauthorized(challenge(server_url, metadata_url))
    assert provider.tokens is not None  # signed in through the listed host
    assert _off_loopback(connects) == []


def test_plain_http_is_refused_except_loopback_to_loopback(stub, connects):
    stub.standard()
    provider = provider_for(stub.url)
    with pytest.raises(InsecureEndpointError):
        provider.on_unauthorized(challenge(stub.url, "http://10.1.2.3/metadata"))
    assert _off_loopback(connects) == []
    assert provider.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))  # loopback


# -- DNS rebinding ----------------------------------------------------------------------------


def test_a_name_is_resolved_once_and_its_checked_address_connected(stub, connects, resolver):
    # The name answers loopback (allowed: the server is on loopback) the first time and cloud
    # metadata after that, as a rebinding attacker's DNS would: the connection must go to the
    # address that was checked, not to a second lookup. (A .localhost name, so that plain
    # http is allowed by its spelling too: only the address decides.)
    resolver.names["as.rebind.localhost"] = ["127.0.0.1", "169.254.169.254"]
    stub.standard()
    port = stub.httpd.server_address[1]
    provider = provider_for(stub.url)
    metadata_url = f"http://as.rebind.localhost:{port}/.well-known/oauth-protected-resource/mcp"
    assert provider.on_unauthorized(challenge(stub.url, metadata_url))
    assert _off_loopback(connects) == []
    (fetched,) = [r for r in stub.requests if r["headers"].get("Host", "").startswith("as.")]
    assert fetched["headers"]["Host"] == f"as.rebind.localhost:{port}"  # Host stays the name
    assert resolver.asked.count("as.rebind.localhost") == 1


class TlsMetadata:
    """Protected resource metadata over https on 127.0.0.1 (certificate for ``localhost``),
    recording the TLS SNI name each handshake carried."""

    def __init__(self, folder, document: dict) -> None:
        paths = make_certificates(folder)
        self.ca = str(paths["ca"])
        self.sni: list[str | None] = []
        body = json.dumps(document).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(paths["cert"], paths["key"])
        context.sni_callback = lambda sock, name, ctx: self.sni.append(name)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(5)


def test_tls_stays_on_the_name_while_the_checked_address_is_connected(
    stub, connects, resolver, tmp_path
):
    resolver.names["localhost"] = ["127.0.0.1"]
    stub.standard()
    tls = TlsMetadata(tmp_path, {"resource": stub.url, "authorization_servers": [stub.base]})
    try:
        session = requests.Session()
        session.trust_env = False
        session.verify = tls.ca
        provider = provider_for(stub.url, session=session)
        metadata_url = f"https://localhost:{tls.port}/.well-known/oauth-protected-resource/mcp"
        assert provider.on_unauthorized(challenge(stub.url, metadata_url))
        # connected to 127.0.0.1, yet the handshake named the host (an IP carries no SNI)
        # and the certificate was checked for it
        assert tls.sni == ["localhost"]
        assert _off_loopback(connects) == []
    finally:
        tls.close()


def test_through_a_proxy_the_name_is_checked_before_the_proxy_is_asked(stub, connects):
    stub.standard()
    session = requests.Session()
    session.trust_env = False
    session.proxies = {"https": stub.base, "http": stub.base}  # the stub plays the proxy
    provider = provider_for(stub.url, session=session)
    with pytest.raises(ForbiddenEndpointError, match="link-local"):
        provider.on_unauthorized(challenge(stub.url, "https://169.254.169.254/latest/"))
    assert connects == []  # not even the proxy was connected to


# -- the machine-to-machine providers follow the same rules ------------------------------------


def _machine_providers(server_url: str, **options):
    from mcp_sync.oauth import ClientCredentialsProvider, JwtBearerProvider

    return [
        ClientCredentialsProvider(server_url, "machine", client_secret="machine-secret", **options),
        JwtBearerProvider(server_url, "an.assertion.jwt", client_id="machine", **options),
    ]


@pytest.mark.parametrize("kind", ["client_credentials", "jwt_bearer"])
def test_a_machine_provider_refuses_a_link_local_metadata_url_before_any_connect(
    stub, connects, kind
):
    stub.standard()
    provider = {p.kind: p for p in _machine_providers(stub.url)}[kind]
    metadata_url = "https://169.254.169.254/latest/meta-data/"
    # Before: the machine providers connected wherever the MCP server pointed them.
    with pytest.raises(ForbiddenEndpointError, match="link-local"):
        provider.on_unauthorized(challenge(stub.url, metadata_url))
    assert _off_loopback(connects) == []


def test_a_machine_provider_takes_allow_hosts(stub, connects, resolver):
    stub.standard(metadata={"token_endpoint": "https://10.1.2.3/token"})
    refused = _machine_providers(stub.url)[0]
    with pytest.raises(ForbiddenEndpointError, match="token endpoint"):
        refused.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))
    allowed = _machine_providers(stub.url, allow_hosts=["10.0.0.0/8"])[0]
    with pytest.raises(OAuthError) as caught:  # let through: the test refuses the connect
        allowed.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))
    assert not isinstance(caught.value, ForbiddenEndpointError)
    assert "10.1.2.3" in _off_loopback(connects)


# -- headless_redirect -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("endpoint", "rule"),
    [
        ("https://169.254.169.254/authorize", "link-local"),
        ("https://metadata.attacker.test/authorize", "link-local"),  # a name for it
        ("https://10.1.2.3/authorize", "a private address"),
    ],
)
def test_headless_redirect_follows_the_same_rules(stub, connects, resolver, endpoint, rule):
    """The authorization URL is the metadata's too. Before: headless_redirect() connected to
    it whatever it was (only this test's socket guard stopped it)."""
    resolver.names["metadata.attacker.test"] = ["169.254.169.254"]
    stub.standard(metadata={"authorization_endpoint": endpoint})
    provider = provider_for(stub.url)
    with pytest.raises(ForbiddenEndpointError, match=rule) as caught:
        provider.on_unauthorized(challenge(stub.url, f"{stub.base}/nowhere"))
    assert _off_loopback(connects) == []
    assert endpoint.split("/authorize")[0] in str(caught.value)
    assert provider.tokens is None
