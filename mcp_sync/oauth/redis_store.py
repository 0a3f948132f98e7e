"""OAuth state in Redis, shared by every worker of a fleet (the ``redis`` extra).

::

    store = RedisStateStore("redis://cache.internal:6379/0")
    provider = OAuthProvider(server_url, redirect_uri, store=store)

Every worker on every host that points at the same Redis shares one set of tokens, one client
registration and one copy of the discovered metadata (one JSON value per MCP server). A token
refresh runs under a lock held in Redis: one worker of the fleet refreshes, the others wait
for the lock and then find the fresh tokens, so a rotating refresh token is spent once.

The lock is a key set with ``NX`` and an expiry (``lock_ttl``) holding a random token that only
its holder can extend or delete. While a thread holds it, a watchdog thread extends the expiry;
if the holder dies (killed, host gone), nobody extends it and the others take it over once it
expires, so a dead worker delays the fleet by at most ``lock_ttl``. A holder that lost its lock
(paused for longer than ``lock_ttl``) cannot overwrite what the new holder saved: a save made
while holding the lock checks, atomically in Redis, that the lock is still its own, and raises
:class:`LockLost` otherwise.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import LockLost, LockTimeout
from .sealing import Sealer, StateCodec, default_sealer
from .store import StateStore

if TYPE_CHECKING:
    import redis

__all__ = ["LockLost", "LockTimeout", "RedisStateStore"]

# KEYS[1] the lock, ARGV[1] the holder's token: delete it only if it is still ours.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# KEYS[1] the lock, ARGV[1] token, ARGV[2] milliseconds: extend it only if it is still ours.
_EXTEND = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
# KEYS[1] the lock, KEYS[2] the state, ARGV[1] token, ARGV[2] JSON or '' to delete.
_FENCED_SAVE = """
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('del', KEYS[2]) else redis.call('set', KEYS[2], ARGV[2]) end
return 1
"""


class _Held:
    """One thread's hold of one key's lock: the token, the depth, the watchdog."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.depth = 0
        self.released = threading.Event()
        self.watchdog: threading.Thread | None = None


class RedisStateStore(StateStore):
    """Tokens, registrations and discovery in Redis, with a fleet-wide refresh lock.

    ``client`` is a ``redis.Redis`` or a URL for ``redis.Redis.from_url``. Keys are
    ``<prefix>state:<server URL>`` and ``<prefix>lock:<server URL>``. ``lock_ttl``: how long a
    lock outlives a holder that died (seconds); ``lock_wait``: how long :meth:`lock` waits
    before raising :class:`LockTimeout`.

    ``sealer``: encrypt each value at rest (:mod:`.sealing`; by default an ``AesGcmSealer``
    from ``$MCP_SYNC_OAUTH_KEYS`` when it is set). Without one, a DPoP private key is refused
    (:class:`~mcp_sync.oauth.errors.PlaintextDPoPKeyRefused`) unless
    ``allow_plaintext_dpop_key``; ``accept_plaintext`` reads unsealed values while migrating.
    """

    def __init__(
        self,
        client: redis.Redis | str,
        *,
        prefix: str = "mcp_sync:oauth:",
        lock_ttl: float = 15.0,
        lock_wait: float = 60.0,
        sealer: Sealer | None = None,
        accept_plaintext: bool = False,
        allow_plaintext_dpop_key: bool = False,
    ) -> None:
        if isinstance(client, str):
            import redis as redis_module

            client = redis_module.Redis.from_url(client)
        if lock_ttl <= 0 or lock_wait <= 0:
            raise ValueError("lock_ttl and lock_wait must be positive")
        self.client = client
        self.prefix = prefix
        self.lock_ttl = lock_ttl
        self.lock_wait = lock_wait
        self._codec = StateCodec(
            self,
            sealer if sealer is not None else default_sealer(),
            accept_plaintext=accept_plaintext,
            shared=True,
            allow_plaintext_dpop_key=allow_plaintext_dpop_key,
        )
        self._release = client.register_script(_RELEASE)
        self._extend = client.register_script(_EXTEND)
        self._fenced_save = client.register_script(_FENCED_SAVE)
        # Threads of this process queue here first, so that only one per key polls Redis.
        self._local_locks: dict[str, threading.RLock] = {}
        self._local_guard = threading.Lock()
        self._held = threading.local()

    def __repr__(self) -> str:
        return f"<RedisStateStore prefix={self.prefix!r}>"

    def _state_key(self, key: str) -> str:
        return f"{self.prefix}state:{key}"

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}lock:{key}"

    def _holds(self) -> dict[str, _Held]:
        holds: dict[str, _Held] | None = getattr(self._held, "by_key", None)
        if holds is None:
            holds = self._held.by_key = {}
        return holds

    # -- state ------------------------------------------------------------------------------

    def load(self, key: str) -> dict[str, Any] | None:
        raw = self.client.get(self._state_key(key))
        if raw is None:
            return None
        return self._codec.from_text(key, raw)

    def save(self, key: str, value: dict[str, Any] | None) -> None:
        text = "" if value is None else self._codec.to_text(key, value)
        held = self._holds().get(key)
        if held is not None:
            saved = self._fenced_save(
                keys=[self._lock_key(key), self._state_key(key)], args=[held.token, text]
            )
            if not saved:
                raise LockLost(
                    f"the lock on the OAuth state of {key} expired and was taken by another "
                    "worker; this worker's update was not saved"
                )
        elif value is None:
            self.client.delete(self._state_key(key))
        else:
            self.client.set(self._state_key(key), text)

    # -- the lock ---------------------------------------------------------------------------

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._locked(key)

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        with self._local_guard:
            local = self._local_locks.setdefault(key, threading.RLock())
        deadline = time.monotonic() + self.lock_wait
        if not local.acquire(timeout=self.lock_wait):
            raise LockTimeout(f"waited {self.lock_wait:g} s for the OAuth state lock of {key}")
        try:
            holds = self._holds()
            held = holds.get(key)
            if held is None:
                held = _Held(secrets.token_hex(16))
                self._acquire(key, held.token, deadline)
                holds[key] = held
                held.watchdog = threading.Thread(
                    target=self._keep_alive,
                    args=(key, held),
                    name="mcp-sync-redis-lock",
                    daemon=True,
                )
                held.watchdog.start()
            held.depth += 1
            try:
                yield
            finally:
                held.depth -= 1
                if held.depth == 0:
                    del holds[key]
                    held.released.set()
                    self._release(keys=[self._lock_key(key)], args=[held.token])
                    if held.watchdog is not None:
                        held.watchdog.join()
        finally:
            local.release()

    def _acquire(self, key: str, token: str, deadline: float) -> None:
        """Take the Redis lock, polling (with backoff) until ``deadline``."""
        name = self._lock_key(key)
        ttl_ms = max(1, int(self.lock_ttl * 1000))
        pause = 0.005
        while not self.client.set(name, token, nx=True, px=ttl_ms):
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockTimeout(
                    f"waited {self.lock_wait:g} s for the OAuth state lock of {key} "
                    "(another worker holds it)"
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.1, self.lock_ttl / 4)

    def _keep_alive(self, key: str, held: _Held) -> None:
        """Extend the lock's expiry while it is held (every third of ``lock_ttl``)."""
        ttl_ms = max(1, int(self.lock_ttl * 1000))
        while not held.released.wait(self.lock_ttl / 3):
            try:
                if not self._extend(keys=[self._lock_key(key)], args=[held.token, ttl_ms]):
                    return  # lost: a save will say so
            except Exception:  # Redis unreachable for now: try again at the next tick
                continue
