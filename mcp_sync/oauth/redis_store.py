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

Deadlines: every Redis command, every new connection's connect and handshake, and every lock
wait ends by the deadline of the request being authorized (a call's ``timeout=``), and by
``command_timeout`` without one. A command that
timed out may still be applied when Redis answers again (a frozen server thaws): the lock is
then held by a token of this store's own. The store recognises its token when it asks again,
and deletes it meanwhile, compare-and-delete, from a short-lived thread that gives up after
``lock_ttl``, so no worker waits out a lock that no live process holds.

Deployments: ``rediss://`` URLs (TLS) and ``redis://user:password@host`` (ACL) work as URLs,
with ``client_options`` (``ssl_ca_certs=...``) passed on to ``redis.Redis.from_url``; for
Sentinel pass ``Sentinel(...).master_for(name)``, for Cluster a ``redis.cluster.RedisCluster``
(whose commands are bounded by its own ``socket_timeout``): see docs/oauth.md.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._rules.numbers import number
from ._deadline import lock_deadline
from ._http import current_limits
from .errors import LockLost, LockTimeout
from .sealing import Sealer, StateCodec, default_sealer
from .store import StateStore

if TYPE_CHECKING:
    import redis

__all__ = ["LockLost", "LockTimeout", "RedisStateStore"]

# KEYS[1] the lock, ARGV[1] the holder's token, ARGV[2] milliseconds: take it if it is free or
# already ours (a SET that timed out on our side and that Redis applied later).
_ACQUIRE = """
local holder = redis.call('get', KEYS[1])
if holder == false then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
if holder == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end
return 0
"""
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
#: The longest a best-effort release waits for Redis (it is retried until ``lock_ttl``).
_RELEASE_TIMEOUT = 1.0


class _ConnectByDeadline:
    """Mixed into a redis-py connection class: a connection made while an OAuth request waits
    (its deadline in force) connects and shakes hands within what is left of it, once (a
    frozen server accepts TCP, then never answers the handshake; redis-py's own retries would
    wait ``socket_timeout`` several times over). Without a deadline nothing changes."""

    socket_timeout: float | None
    socket_connect_timeout: float | None
    retry: Any
    _sock: Any

    def connect(self) -> None:
        limits = current_limits()
        if limits.deadline is None:
            super().connect()  # type: ignore[misc]
            return
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        own = self.socket_timeout, self.socket_connect_timeout, self.retry
        budget = limits.budget(min((t for t in own[:2] if t), default=None))
        self.socket_timeout = self.socket_connect_timeout = budget
        self.retry = Retry(NoBackoff(), 0)
        try:
            super().connect()  # type: ignore[misc]
        finally:
            self.socket_timeout, self.socket_connect_timeout, self.retry = own
            if self._sock is not None:
                self._sock.settimeout(own[0])


def _bound_by_deadline(client: Any) -> None:
    """Make the connections ``client``'s pool makes from now on :class:`_ConnectByDeadline`."""
    pool = getattr(client, "connection_pool", None)
    made = getattr(pool, "connection_class", None)
    if isinstance(made, type) and not issubclass(made, _ConnectByDeadline):
        pool.connection_class = type(made.__name__, (_ConnectByDeadline, made), {})  # type: ignore[union-attr]


class _Held:
    """One thread's hold of one key's lock: the token, the depth, the watchdog."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.depth = 0
        self.released = threading.Event()
        self.watchdog: threading.Thread | None = None


class RedisStateStore(StateStore):
    """Tokens, registrations and discovery in Redis, with a fleet-wide refresh lock.

    ``client`` is a ``redis.Redis`` or a URL for ``redis.Redis.from_url`` (``redis://``,
    ``rediss://``, ``unix://``; ``client_options`` go to ``from_url``). Keys are
    ``<prefix>state:<server URL>``, ``<prefix>lock:<server URL>`` and
    ``<prefix>sign-in:<server URL>``. ``lock_ttl``: how long a lock outlives a holder that
    died (seconds); ``lock_wait``: how long :meth:`lock` waits before raising
    :class:`LockTimeout`; ``command_timeout``: how long one Redis command may take when the
    request being authorized has no nearer deadline.

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
        command_timeout: float = 5.0,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        for name, value in (
            ("lock_ttl", lock_ttl),
            ("lock_wait", lock_wait),
            ("command_timeout", command_timeout),
        ):
            number(value, f"RedisStateStore: {name}", positive=True)
        if isinstance(client, str):
            import redis as redis_module

            options: dict[str, Any] = {
                # a new connection's handshake is bounded too (a frozen server accepts TCP)
                "socket_timeout": command_timeout,
                "socket_connect_timeout": command_timeout,
            }
            options.update(client_options or {})
            client = redis_module.Redis.from_url(client, **options)
        _bound_by_deadline(client)  # (a client given: its pool's new connections too)
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
        self.command_timeout = command_timeout
        # Threads of this process queue here first, so that only one per key polls Redis.
        self._local_locks: dict[str, threading.RLock] = {}
        self._local_guard = threading.Lock()
        self._held = threading.local()
        # One token per lock for the life of this store: a SET applied after its client gave
        # up is then recognisably ours (the local lock keeps two threads from sharing it).
        self._tokens: dict[str, str] = {}
        # lock name -> when to give up releasing it
        self._orphans: dict[str, float] = {}
        self._sweeper: threading.Thread | None = None

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

    # -- commands, bounded ------------------------------------------------------------------

    def _run(self, *args: Any, cap: float | None = None) -> Any:
        """One command, answered within the request's deadline and ``command_timeout``."""
        budget = current_limits().budget(cap or self.command_timeout)
        pool = getattr(self.client, "connection_pool", None)
        if pool is None:  # (a cluster client routes commands itself; its own timeouts apply)
            client: Any = self.client
            return client.execute_command(*args)
        try:
            conn = pool.get_connection()
        except TypeError:  # redis-py before 5.3 wants the command's name
            conn = pool.get_connection(args[0])
        try:
            own = getattr(conn, "socket_timeout", None)  # (the client's own, if shorter)
            if isinstance(own, (int, float)) and 0 < own < budget:
                budget = own
            conn.send_command(*args)
            # (on a timeout redis-py drops the connection: a late answer is never misread)
            return conn.read_response(timeout=budget)
        finally:
            pool.release(conn)

    def _script(
        self, source: str, keys: list[str], args: list[Any], cap: float | None = None
    ) -> Any:
        return self._run("EVAL", source, len(keys), *keys, *args, cap=cap)

    # -- state ------------------------------------------------------------------------------

    def load(self, key: str) -> dict[str, Any] | None:
        raw = self._run("GET", self._state_key(key))
        if raw is None:
            return None
        return self._codec.from_text(key, raw)

    def save(self, key: str, value: dict[str, Any] | None) -> None:
        text = "" if value is None else self._codec.to_text(key, value)
        held = self._holds().get(self._lock_key(key))
        if held is not None:
            saved = self._script(
                _FENCED_SAVE, [self._lock_key(key), self._state_key(key)], [held.token, text]
            )
            if not saved:
                raise LockLost(
                    f"the lock on the OAuth state of {key} expired and was taken by another "
                    "worker; this worker's update was not saved"
                )
        elif value is None:
            self._run("DEL", self._state_key(key))
        else:
            self._run("SET", self._state_key(key), text)

    # -- the locks --------------------------------------------------------------------------

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._locked(self._lock_key(key), key)

    def sign_in_lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        """The fleet-wide lock one sign-in to ``key`` runs under (see ``StateStore``)."""
        return self._locked(f"{self.prefix}sign-in:{key}", key)

    def _local(self, name: str) -> tuple[threading.RLock, str]:
        with self._local_guard:
            local = self._local_locks.setdefault(name, threading.RLock())
            token = self._tokens.setdefault(name, secrets.token_hex(16))
        return local, token

    @contextlib.contextmanager
    def _locked(self, name: str, key: str) -> Iterator[None]:
        local, token = self._local(name)
        deadline = lock_deadline(self.lock_wait)
        assert deadline is not None
        if not local.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise LockTimeout(f"waited too long for the OAuth state lock of {key}")
        try:
            holds = self._holds()
            held = holds.get(name)
            if held is None:
                held = _Held(token)
                self._acquire(name, key, token, deadline)
                holds[name] = held
                held.watchdog = threading.Thread(
                    target=self._keep_alive,
                    args=(name, held),
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
                    del holds[name]
                    held.released.set()
                    try:
                        self._script(_RELEASE, [name], [held.token])
                    except Exception:  # (the body's outcome stands; the lock goes later)
                        self._orphaned(name)
                    if held.watchdog is not None:
                        held.watchdog.join()
        finally:
            local.release()

    def _acquire(self, name: str, key: str, token: str, deadline: float) -> None:
        """Take the Redis lock, polling (with backoff) until ``deadline``."""
        ttl_ms = max(1, int(self.lock_ttl * 1000))
        pause = 0.005
        while True:
            try:
                if self._script(_ACQUIRE, [name], [token, ttl_ms]):
                    return
            except Exception:
                # Redis may still apply it: the lock would hold our token, and nobody here
                # would release it.
                self._orphaned(name)
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockTimeout(
                    f"waited too long for the OAuth state lock of {key} (another worker holds it)"
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.1, self.lock_ttl / 4)

    def _keep_alive(self, name: str, held: _Held) -> None:
        """Extend the lock's expiry while it is held (every third of ``lock_ttl``)."""
        ttl_ms = max(1, int(self.lock_ttl * 1000))
        while not held.released.wait(self.lock_ttl / 3):
            try:
                if not self._script(_EXTEND, [name], [held.token, ttl_ms]):
                    return  # lost: a save will say so
            except Exception:  # Redis unreachable for now: try again at the next tick
                continue

    # -- orphans ----------------------------------------------------------------------------

    def _orphaned(self, name: str) -> None:
        """Delete our token from lock ``name`` soon, unless a thread of ours takes it first."""
        with self._local_guard:
            self._orphans[name] = time.monotonic() + self.lock_ttl
            if self._sweeper is None:
                self._sweeper = threading.Thread(
                    target=self._sweep, name="mcp-sync-redis-unlock", daemon=True
                )
                self._sweeper.start()

    def _sweep(self) -> None:
        pause = 0.05
        idle = threading.Event()  # (never set: a pause that is not a busy wait)
        while True:
            with self._local_guard:
                pending = list(self._orphans.items())
                if not pending:
                    self._sweeper = None
                    return
            for name, give_up in pending:
                if self._release_orphan(name) or time.monotonic() > give_up:
                    with self._local_guard:
                        if self._orphans.get(name) == give_up:
                            del self._orphans[name]
            idle.wait(pause)
            pause = min(pause * 2, 1.0)

    def _release_orphan(self, name: str) -> bool:
        local, token = self._local(name)
        if not local.acquire(blocking=False):
            return True  # a thread of ours is taking it or holds it: its token, its lock
        try:
            self._script(_RELEASE, [name], [token], cap=_RELEASE_TIMEOUT)
            return True
        except Exception:
            return False  # still unreachable: later
        finally:
            local.release()
