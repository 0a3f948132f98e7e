"""An opt-in cache of list and read results, honouring 2026-07-28 ``ttlMs``/``cacheScope``.

What is kept: a ``complete`` result of a cacheable method that came back at the first try
(never one that needed an ``input_required`` round, nor a request that itself carries
``inputResponses`` or ``requestState``: those answers belong to one caller), with a ``ttlMs``
that is a finite number above 0 and at most :data:`MAX_TTL_MS`. Anything else (NaN, Infinity,
``1e300``, a string, a boolean) is not kept at all.

For whom: the key is the method and every param, ``_meta`` included. A ``"public"`` result is
served to every caller of the client; any other (``"private"``, or no scope) only to calls made
under the same authorization context, a digest of the credentials the transport sends (see
:func:`mcp_sync._connection.stateless.authorization_context`). Each page is its own entry.

For how long: its ``ttlMs``, at most :data:`MAX_TTL_MS`, and no more than :data:`MAX_ENTRIES`
entries and :data:`MAX_BYTES` of text in all (the least recently used go first; a result
larger than :data:`MAX_ENTRY_BYTES` is not kept: a server cannot make the client hold what
512 results of 16 MiB would weigh). Results go in and come out as copies, so what one
caller does to its result reaches no other. Expired entries are swept on the way in, at most
once a :data:`SWEEP_INTERVAL`, so entries never read again do not pile up. A list_changed or
resources/updated notification drops the entries it makes stale; a reconnection drops all.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol import methods

__all__ = [
    "CACHEABLE",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_TTL_MS",
    "SWEEP_INTERVAL",
    "ResultCache",
    "lifetime",
]

#: Methods whose results may carry ``ttlMs`` (their rows in the method table say so).
CACHEABLE = methods.CACHEABLE

#: The most entries one client keeps; the least recently used go first.
MAX_ENTRIES = 512
#: The most the kept results of one client may weigh, in all (see :func:`_sized_copy`).
MAX_BYTES = 64 * 1024 * 1024
#: The largest result kept: one an eighth of the budget would push out most of the rest.
MAX_ENTRY_BYTES = MAX_BYTES // 8
#: The longest ``ttlMs`` honoured (one day); a longer one is no hint a client can trust.
MAX_TTL_MS = 86_400_000
#: How often, at most, expired entries are swept (seconds).
SWEEP_INTERVAL = 1.0

#: Which cached methods each notification makes stale.
_STALE = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
#: Params that make a request one caller's retry: never served from, nor stored in, the cache.
_RETRY_PARAMS = ("inputResponses", "requestState")


def lifetime(result: Any) -> float | None:
    """How long (seconds) ``result`` may be kept, or None for "do not keep it"."""
    ttl = result.get("ttlMs") if isinstance(result, dict) else None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        return None
    if not math.isfinite(ttl) or ttl <= 0 or ttl > MAX_TTL_MS:  # NaN fails every comparison
        return None
    return ttl / 1000


def _copy(value: Any) -> Any:
    """A copy of a JSON tree: what one caller does to its result must not reach the next."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _sized_copy(value: Any) -> tuple[Any, int]:
    """:func:`_copy`, and what the tree weighs: the length of its strings and keys, and 8
    for each other node (close to its size as JSON text, found on the way)."""
    if isinstance(value, dict):
        copied, size = {}, 8
        for key, item in value.items():
            copied[key], weight = _sized_copy(item)
            size += weight + len(key)
        return copied, size
    if isinstance(value, list):
        items, size = [], 8
        for item in value:
            kept, weight = _sized_copy(item)
            items.append(kept)
            size += weight
        return items, size
    return value, len(value) if isinstance(value, str) else 8


def _key(method: str, params: Mapping[str, Any] | None, scope: str) -> str | None:
    """The entry's key, or None for a request that is never cached."""
    params = params or {}
    if any(name in params for name in _RETRY_PARAMS):
        return None
    try:
        shaped = json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # not JSON as the server would see it: nothing to match
        return None
    return f"{method} {scope} {shaped}"


class ResultCache:
    """Thread-safe, bounded TTL cache of raw results; see the module docstring.

    ``identity`` (the authorization context of a call) scopes the results that are not
    ``"public"``; None means "unknown": such results are neither served nor kept.
    """

    def __init__(
        self,
        *,
        max_entries: int = MAX_ENTRIES,
        max_bytes: int = MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._max_entry_bytes = max_bytes * MAX_ENTRY_BYTES // MAX_BYTES  # (an eighth)
        self._clock = clock
        # key -> (expires at, method, uri, result, weight), least recently used first
        self._entries: OrderedDict[str, tuple[float, str, str, Any, int]] = OrderedDict()
        self._bytes = 0  # the weight of every entry kept
        self._next_sweep = -math.inf
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def get(self, method: str, params: Mapping[str, Any] | None, identity: str | None) -> Any:
        """The cached result for this call, or None if absent or expired."""
        if method not in CACHEABLE:
            return None
        scopes = ["public"] if identity is None else ["public", "private:" + identity]
        now = self._clock()
        with self._lock:
            for scope in scopes:
                key = _key(method, params, scope)
                entry = self._entries.get(key) if key is not None else None
                if entry is None:
                    continue
                assert key is not None
                if entry[0] <= now:
                    self._drop(key)
                    continue
                self._entries.move_to_end(key)
                result = entry[3]
                break
            else:
                return None
        return _copy(result)

    def put(
        self, method: str, params: Mapping[str, Any] | None, result: Any, identity: str | None
    ) -> None:
        """Keep ``result`` for its ``ttlMs``, if it may be kept at all (module docstring)."""
        seconds = lifetime(result) if method in CACHEABLE else None
        if seconds is None:
            return
        public = result.get("cacheScope") == "public"
        if not public and identity is None:
            return
        key = _key(method, params, "public" if public else "private:" + str(identity))
        if key is None:
            return
        uri = str((params or {}).get("uri", ""))
        kept, weight = _sized_copy(result)
        now = self._clock()
        with self._lock:
            self._drop(key)
            if weight > self._max_entry_bytes:
                return  # too large to keep (and the old entry for it is stale)
            if now >= self._next_sweep or len(self._entries) >= self._max_entries:
                self._sweep(now)
            while self._entries and (
                len(self._entries) >= self._max_entries or self._bytes + weight > self._max_bytes
            ):
                self._drop(next(iter(self._entries)))
            self._entries[key] = (now + seconds, method, uri, kept, weight)
            self._bytes += weight

    def _drop(self, key: str) -> None:
        """Forget one entry, if kept (lock held)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[4]

    def _sweep(self, now: float) -> None:
        """Drop every expired entry (lock held)."""
        for key in [k for k, entry in self._entries.items() if entry[0] <= now]:
            self._drop(key)
        self._next_sweep = now + SWEEP_INTERVAL

    def invalidate(self, notification_method: str, params: dict[str, Any] | None) -> None:
        """Drop what a server notification says is stale."""
        methods = _STALE.get(notification_method, ())
        uri = (
            (params or {}).get("uri") if notification_method.endswith("resources/updated") else None
        )
        with self._lock:
            for key, (_, method, entry_uri, _result, _weight) in list(self._entries.items()):
                if method in methods or (
                    uri is not None and method == "resources/read" and entry_uri == uri
                ):
                    self._drop(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
