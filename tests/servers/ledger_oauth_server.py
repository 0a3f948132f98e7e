"""An OAuth-protected MCP server for the distributed-engine tests (test_dask.py, test_ray.py):
fastmcp with its ``InMemoryOAuthProvider`` (authorization server and MCP server in one app),
in its own process so that the engine's workers, not this server, share the test's cores.

    python ledger_oauth_server.py PORT LEDGER_DIR

Its tool ``record(row, idempotency_key="")`` stands for a tool with a side effect: each call it
receives is appended to ``LEDGER_DIR/calls`` (the row and the client's TCP port: which connection it came on), each effect it performs to ``LEDGER_DIR/effects``,
and it answers ``2 * row``. With a key it has seen, it answers as before and does nothing: the
idempotency key a retried task sends again.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings

from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp.server.dependencies import get_http_request

warnings.simplefilter("ignore")


def main() -> None:
    port, ledger = int(sys.argv[1]), sys.argv[2]
    base = f"http://127.0.0.1:{port}"
    provider = InMemoryOAuthProvider(
        base_url=base, client_registration_options=ClientRegistrationOptions(enabled=True)
    )
    mcp = FastMCP("ledger-oauth", auth=provider)
    done: dict[str, int] = {}
    lock = threading.Lock()
    # One short write per line to an O_APPEND file: lines never interleave.
    calls = open(os.path.join(ledger, "calls"), "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    effects = open(os.path.join(ledger, "effects"), "a", buffering=1, encoding="utf-8")  # noqa: SIM115

    @mcp.tool
    def record(row: int, idempotency_key: str = "") -> int:
        """Record a row (a side effect) and answer twice the row; a key already seen answers
        again without recording."""
        peer = get_http_request().client
        calls.write(f"{row} {peer.port if peer else 0}\n")
        with lock:
            if idempotency_key and idempotency_key in done:
                return done[idempotency_key]
            effects.write(f"{row}\n")
            if idempotency_key:
                done[idempotency_key] = 2 * row
        return 2 * row

    mcp.run(
        "http", host="127.0.0.1", port=port, path="/mcp", log_level="warning", show_banner=False
    )


if __name__ == "__main__":
    main()
