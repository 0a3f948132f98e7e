"""An opt-in cache of list and read results, honouring 2026-07-28 ``ttlMs``/``cacheScope``.

Keys are the method and the params that shape the result (``_meta`` excluded); each page is
its own entry. A result without a positive ``ttlMs`` is not kept. A list_changed or
resources/updated notification drops the entries it makes stale. The cache belongs to one
client, so ``private`` and ``public`` results are both safe to keep in it.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

__all__ = ["CACHEABLE", "ResultCache"]

#: Methods whose results may carry ``ttlMs``.
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)

#: Which cached methods each notification makes stale.
_STALE = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


def _key(method: str, params: dict[str, Any] | None) -> str:
    shaped = {k: v for k, v in (params or {}).items() if k != "_meta"}
    return method + " " + json.dumps(shaped, sort_keys=True, separators=(",", ":"))


class ResultCache:
    """Thread-safe TTL cache of raw results."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, method: str, params: dict[str, Any] | None) -> Any:
        """The cached result, or None if absent or expired."""
        key = _key(method, params)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry[0] <= time.monotonic():
                del self._entries[key]
                return None
            return entry[2]

    def put(self, method: str, params: dict[str, Any] | None, result: Any) -> None:
        """Keep ``result`` for its ``ttlMs`` (not at all without a positive one)."""
        ttl = result.get("ttlMs") if isinstance(result, dict) else None
        if method not in CACHEABLE or not isinstance(ttl, (int, float)) or ttl <= 0:
            return
        uri = str((params or {}).get("uri", ""))
        with self._lock:
            self._entries[_key(method, params)] = (time.monotonic() + ttl / 1000, uri, result)

    def invalidate(self, notification_method: str, params: dict[str, Any] | None) -> None:
        """Drop what a server notification says is stale."""
        methods = _STALE.get(notification_method, ())
        uri = (
            (params or {}).get("uri") if notification_method.endswith("resources/updated") else None
        )
        with self._lock:
            for key, (_, entry_uri, _result) in list(self._entries.items()):
                method = key.split(" ", 1)[0]
                if method in methods or (
                    uri is not None and method == "resources/read" and entry_uri == uri
                ):
                    del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
