"""One worker of a fleet for the Redis state store tests, run as its own process.

    redis_worker.py call REDIS_URL MCP_URL THREADS   # "ready", wait for "go", call add per thread
    redis_worker.py hold REDIS_URL MCP_URL           # take the state lock, say "locked", block

``call`` prints one JSON line: each thread's result and this process's refresh grants.
"""

from __future__ import annotations

import json
import sys
import threading

import requests

import mcp_sync
from mcp_sync.oauth import OAuthProvider
from mcp_sync.oauth.discovery import canonical_resource
from mcp_sync.oauth.redis_store import RedisStateStore


class CountingSession(requests.Session):
    def __init__(self) -> None:
        super().__init__()
        self.refresh_grants = 0
        self._lock = threading.Lock()

    def request(self, method, url, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        grant = (kwargs.get("data") or {}).get("grant_type")
        if method.upper() == "POST" and url.endswith("/token") and grant == "refresh_token":
            with self._lock:
                self.refresh_grants += 1
        return super().request(method, url, *args, **kwargs)


def main() -> None:
    mode, redis_url, mcp_url = sys.argv[1:4]
    store = RedisStateStore(redis_url, lock_ttl=2.0, lock_wait=60.0)
    if mode == "hold":
        with store.lock(canonical_resource(mcp_url)):
            print("locked", flush=True)
            sys.stdin.read()  # until killed
        return
    session = CountingSession()
    provider = OAuthProvider(
        mcp_url, "http://127.0.0.1:1/callback", store=store, session=session, refresh_margin=1.0
    )
    results: list[str] = []
    lock = threading.Lock()

    def call(n: int) -> None:
        with mcp_sync.connect(mcp_url, auth=provider, request_timeout=30) as client:
            text = client.call_tool("add", {"a": n, "b": 1}).text
        with lock:
            results.append(text)

    threads = [threading.Thread(target=call, args=(n,)) for n in range(int(sys.argv[4]))]
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(
        json.dumps({"results": sorted(results), "refresh_grants": session.refresh_grants}),
        flush=True,
    )


if __name__ == "__main__":
    main()
