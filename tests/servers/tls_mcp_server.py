"""The official SDK's MCP server of ``http_fixture_server.py`` (``add``, ``echo``...) over
Streamable HTTP with TLS, served by uvicorn: a real TLS server, not a scripted one.

    python tls_mcp_server.py PORT CERT KEY [--client-ca CA]

With ``--client-ca`` the server requires a client certificate signed by that CA (mTLS), and
speaks TLS 1.2, where that refusal is part of the handshake (TLS 1.3 sends it after, so the
client sees a TLS alert or a reset, as the timing falls).
"""

from __future__ import annotations

import ssl
import sys

import uvicorn
from http_fixture_server import server

if __name__ == "__main__":
    port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    client_ca = sys.argv[sys.argv.index("--client-ca") + 1] if "--client-ca" in sys.argv else None
    uvicorn.run(
        server.streamable_http_app(),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ssl_certfile=cert,
        ssl_keyfile=key,
        ssl_ca_certs=client_ca,
        ssl_cert_reqs=ssl.CERT_REQUIRED if client_ca else ssl.CERT_NONE,
        ssl_version=ssl.PROTOCOL_TLSv1_2 if client_ca else ssl.PROTOCOL_TLS_SERVER,
    )
