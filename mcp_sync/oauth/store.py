"""Where the OAuth client keeps its state: tokens, client registrations, pending authorizations.

A :class:`StateStore` maps a key (the canonical MCP server URL) to one JSON object. The
provider reads and writes whole objects under :meth:`StateStore.lock`, which also
serializes token refreshes: with a :class:`FileStateStore` two processes sharing the file
refresh once, and the second one picks up the first one's tokens.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .sealing import Sealer, StateCodec, default_sealer

__all__ = ["FileStateStore", "MemoryStateStore", "StateStore"]


class StateStore(ABC):
    """Storage for the provider's JSON state, one object per key.

    Implementations must be safe to call from several threads. ``lock(key)`` must be
    reentrant in the thread that holds it.
    """

    @abstractmethod
    def load(self, key: str) -> dict[str, Any] | None:
        """The object saved under ``key``, or None."""

    @abstractmethod
    def save(self, key: str, value: dict[str, Any] | None) -> None:
        """Replace the object under ``key`` (None deletes it)."""

    @abstractmethod
    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        """Exclusive access to ``key`` for a read-modify-write (reentrant per thread)."""


class MemoryStateStore(StateStore):
    """State kept in this process only (the default): sign in again after a restart."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()

    def load(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            value = self._data.get(key)
            return json.loads(json.dumps(value)) if value is not None else None

    def save(self, key: str, value: dict[str, Any] | None) -> None:
        with self._lock:
            if value is None:
                self._data.pop(key, None)
            else:
                self._data[key] = json.loads(json.dumps(value))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            yield

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._locked()

    def __repr__(self) -> str:
        return f"<MemoryStateStore {len(self._data)} servers>"


class FileStateStore(StateStore):
    """State in one JSON file (camelCase keys), shared by threads and processes.

    Writes are atomic (a temporary file in the same directory, then ``os.replace``), the file
    and its lock file are created with mode 0600, and :meth:`lock` takes an exclusive
    ``flock`` on ``<path>.lock`` so that processes sharing the file take turns.

    ``sealer``: encrypt each server's entry (:mod:`.sealing`; by default an ``AesGcmSealer``
    from ``$MCP_SYNC_OAUTH_KEYS`` when it is set); ``accept_plaintext`` reads entries stored
    unsealed while migrating.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        sealer: Sealer | None = None,
        accept_plaintext: bool = False,
    ) -> None:
        self.path = Path(path).expanduser()
        self._codec = StateCodec(
            self,
            sealer if sealer is not None else default_sealer(),
            accept_plaintext=accept_plaintext,
        )
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock_fd: int | None = None

    def __repr__(self) -> str:
        return f"<FileStateStore {str(self.path)!r}>"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    _flock(fd, True)
                except BaseException:
                    os.close(fd)
                    raise
                self._lock_fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock_fd is not None:
                    fd, self._lock_fd = self._lock_fd, None
                    _flock(fd, False)
                    os.close(fd)

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._locked()

    def _read_all(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        servers = value.get("servers") if isinstance(value, dict) else None
        return servers if isinstance(servers, dict) else {}

    def load(self, key: str) -> dict[str, Any] | None:
        # The file is only ever replaced whole, so a read needs no lock.
        return self._codec.decode(key, self._read_all().get(key))

    def save(self, key: str, value: dict[str, Any] | None) -> None:
        with self._locked():
            servers = self._read_all()
            if value is None:
                servers.pop(key, None)
            else:
                servers[key] = self._codec.encode(key, value)
            self._write({"version": 1, "servers": servers})

    def _write(self, document: dict[str, Any]) -> None:
        fd, tmp = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(document, file, indent=2, sort_keys=True)
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _flock(fd: int, exclusive: bool) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: threads of this process still take turns
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_UN)
