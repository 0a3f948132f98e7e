"""One worker of a fleet sharing one OAuth state store, run as its own process.

    fleet_worker.py signin STORE MCP_URL   # "ready", wait for "go", sign in (headless), call add
    fleet_worker.py hold STORE MCP_URL     # take the state lock, say "locked", block

``STORE`` is a Redis URL (``redis://...``) or the path of a FileStateStore file. Prints one
JSON line: the result text or the error.
"""

from __future__ import annotations

import json
import sys
import time

import mcp_sync
from mcp_sync.oauth import FileStateStore, OAuthProvider, StateStore, headless_redirect
from mcp_sync.oauth.discovery import canonical_resource


def store_for(where: str) -> StateStore:
    if where.startswith(("redis://", "rediss://")):
        from mcp_sync.oauth.redis_store import RedisStateStore

        return RedisStateStore(where, lock_ttl=5.0)
    return FileStateStore(where)


def main() -> None:
    mode, where, mcp_url = sys.argv[1:4]
    if mode == "hold":
        with store_for(where).lock(canonical_resource(mcp_url)):
            print("locked", flush=True)
            sys.stdin.read()  # until killed
        return
    provider = OAuthProvider(
        mcp_url,
        "http://127.0.0.1:1/callback",
        on_redirect=headless_redirect(),
        store=store_for(where),
    )
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    started = time.monotonic()
    report: dict[str, object] = {}
    try:
        with mcp_sync.connect(mcp_url, auth=provider, timeout=60) as client:
            report["result"] = client.call_tool("add", {"a": 2, "b": 3}, timeout=60).text
    except Exception as exc:  # reported to the test, which shows it
        report["error"] = f"{type(exc).__name__}: {exc}"
    report["seconds"] = time.monotonic() - started
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
