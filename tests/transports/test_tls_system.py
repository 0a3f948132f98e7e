"""TLS trust and client certificates against a real TLS server on 127.0.0.1: the official SDK's
MCP server under uvicorn (``tests/servers/tls_mcp_server.py``), its certificate signed by a CA
made for the test (``tests/helpers/tls_certs.py``).

The CA is put only where the operating system's store is looked up on Linux (OpenSSL's
default paths, which ``SSL_CERT_FILE`` moves): never in certifi's bundle or
``REQUESTS_CA_BUNDLE``. So ``verify="system"`` connects and the default (certifi) does not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.config import load
from mcp_sync.errors import TlsError
from mcp_sync.transports.http import StreamableHttpTransport
from tests.helpers.support import SERVERS, HttpServer, free_port
from tests.helpers.tls_certs import make_certificates

pytest.importorskip("mcp.server.mcpserver")
pytest.importorskip("truststore")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    return make_certificates(tmp_path_factory.mktemp("tls"))


def _tls_server(certificates: dict[str, Path], *extra: str) -> HttpServer:
    port = free_port()
    argv = [
        sys.executable,
        str(SERVERS / "tls_mcp_server.py"),
        str(port),
        str(certificates["cert"]),
        str(certificates["key"]),
        *extra,
    ]
    return HttpServer(argv, port)


@pytest.fixture(scope="module")
def tls_url(certificates) -> Iterator[str]:
    with _tls_server(certificates) as server:
        yield f"https://localhost:{server.port}/mcp"


@pytest.fixture(scope="module")
def mtls_url(certificates) -> Iterator[str]:
    """A server that refuses any connection without a client certificate of the test CA."""
    with _tls_server(certificates, "--client-ca", str(certificates["ca"])) as server:
        yield f"https://localhost:{server.port}/mcp"


def _add(client: mcp_sync.Client) -> object:
    return client.call_tool("add", {"a": 2, "b": 3}).structured_content


def test_verify_system_trusts_a_ca_only_the_system_store_has(
    certificates, tls_url, clean_env
) -> None:
    clean_env.setenv("SSL_CERT_FILE", str(certificates["ca"]))
    with mcp_sync.connect(tls_url, verify="system", request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    transport = StreamableHttpTransport(tls_url, verify="system", open_get_stream=False)
    with mcp_sync.Client("t", "1").connect(transport) as client:
        assert _add(client) == {"result": 5}
    # the default is certifi's bundle (as requests'), which does not have this CA
    started = time.monotonic()
    with pytest.raises(TlsError, match="TLS error talking to https://localhost") as raised:
        mcp_sync.connect(tls_url, request_timeout=30)
    assert "CERTIFICATE_VERIFY_FAILED" in str(raised.value)
    assert time.monotonic() - started < 20  # (failed at the handshake, not at a timeout)


def test_verify_system_trusts_only_the_system_store(certificates, tls_url, clean_env) -> None:
    # the CA in REQUESTS_CA_BUNDLE, but not in the system store: "system" means the system's
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(certificates["ca"]))
    clean_env.setenv("SSL_CERT_FILE", str(certificates["cert"]))  # (a store without the CA)
    with pytest.raises(TlsError, match="CERTIFICATE_VERIFY_FAILED"):
        mcp_sync.connect(tls_url, verify="system", request_timeout=30)
    with mcp_sync.connect(tls_url, request_timeout=30) as client:  # REQUESTS_CA_BUNDLE applies
        assert _add(client) == {"result": 5}
    # and an explicit verify= replaces REQUESTS_CA_BUNDLE
    with pytest.raises(TlsError, match="CERTIFICATE_VERIFY_FAILED"):
        mcp_sync.connect(tls_url, verify=True, request_timeout=30)


def test_verify_system_without_truststore_names_the_extra(tmp_path) -> None:
    script = (
        "import sys; sys.modules['truststore'] = None\n"  # (as if not installed)
        "import mcp_sync\n"
        "from mcp_sync.errors import MissingExtra\n"
        "try:\n"
        "    mcp_sync.connect('https://localhost:9/mcp', verify='system', timeout=10)\n"
        "except MissingExtra as exc:\n"
        "    print(type(exc).__name__, exc.extra, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.startswith("MissingExtra truststore ")
    assert "pip install 'mcp-sync-client[truststore]'" in done.stdout


def _write_config(folder: Path, entry: dict[str, object]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"corp": entry}}), encoding="utf-8")
    return path


def test_a_client_certificate_from_mcp_json(certificates, mtls_url, tmp_path, clean_env) -> None:
    # paths relative to the config's folder, as envFile's are
    for name in ("ca", "client_cert", "client_key"):
        (tmp_path / certificates[name].name).write_bytes(certificates[name].read_bytes())
    entry = {
        "url": mtls_url,
        "type": "http",
        "verify": "ca.pem",
        "clientCert": "client.pem",
        "clientKey": "client.key",
    }
    config = load(_write_config(tmp_path, entry))
    with mcp_sync.connect("corp", config=config, request_timeout=30) as client:
        assert _add(client) == {"result": 5}
    # without the certificate the server refuses the handshake: a TlsError, no key in it
    del entry["clientCert"], entry["clientKey"]
    config = load(_write_config(tmp_path, entry))
    with pytest.raises(TlsError, match=f"TLS error talking to {mtls_url}") as raised:
        mcp_sync.connect("corp", config=config, request_timeout=30)
    key = certificates["client_key"].read_text()
    assert key.splitlines()[1] not in str(raised.value)


def test_a_client_certificate_and_the_system_store_together(
    certificates, mtls_url, clean_env
) -> None:
    clean_env.setenv("SSL_CERT_FILE", str(certificates["ca"]))
    cert = (str(certificates["client_cert"]), str(certificates["client_key"]))
    with mcp_sync.connect(mtls_url, verify="system", cert=cert, request_timeout=30) as client:
        assert _add(client) == {"result": 5}


def test_config_tls_keys_are_checked(tmp_path) -> None:
    from mcp_sync.errors import ConfigError

    path = _write_config(tmp_path, {"url": "https://x/mcp", "clientKey": "k.pem"})
    with pytest.raises(ConfigError, match='"clientKey" needs "clientCert"'):
        load(path)["corp"]
    path = _write_config(tmp_path, {"url": "https://x/mcp", "proxy": "proxy:3128"})
    with pytest.raises(ConfigError, match='"proxy" must be an http'):
        load(path)["corp"]
    path = _write_config(tmp_path, {"url": "https://x/mcp", "verify": "system"})
    assert load(path)["corp"].http == {"verify": "system"}


def test_the_cli_takes_verify_system(certificates, tls_url, clean_env) -> None:
    import os

    env = {**os.environ, "SSL_CERT_FILE": str(certificates["ca"])}
    argv = [sys.executable, "-m", "mcp_sync", tls_url, "tools"]
    done = subprocess.run(
        [*argv, "--verify", "system"], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "add" in done.stdout
    refused = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode != 0
    assert "CERTIFICATE_VERIFY_FAILED" in refused.stderr


def test_an_oauth_provider_session_keeps_the_system_trust(certificates, tls_url, clean_env):
    import requests

    from mcp_sync.oauth import OAuthProvider
    from mcp_sync.transports import tls_session

    clean_env.setenv("SSL_CERT_FILE", str(certificates["ca"]))
    # the provider mounts its egress guard on the session: the system trust must survive it
    provider = OAuthProvider(tls_url, session=tls_session(verify="system"))
    assert provider.session.get(tls_url, timeout=30).status_code < 500
    plain = OAuthProvider(tls_url)
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        plain.session.get(tls_url, timeout=30)
