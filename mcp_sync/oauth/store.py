"""Where the OAuth client keeps its state: tokens, client registrations, pending authorizations.

A :class:`StateStore` maps a key (the canonical MCP server URL) to one JSON object. The
provider reads and writes whole objects under :meth:`StateStore.lock`, which also
serializes token refreshes: with a :class:`FileStateStore` two processes sharing the file
refresh once, and the second one picks up the first one's tokens. A sign-in runs under
:meth:`StateStore.sign_in_lock`: the workers sharing a store register and sign in once, the
others wait for that sign-in and use its tokens. Lock waits end by the deadline of the request
being authorized (a call's ``timeout=``).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._deadline import lock_deadline, waited
from .errors import LockTimeout, UnsafeStateFile
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

    def sign_in_lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        """Exclusive for one sign-in (registration, authorization, code exchange) to ``key``,
        across everything that shares this store; held while the user signs in, so kept apart
        from :meth:`lock`. By default :meth:`lock` itself (a store written for an earlier
        version is still correct, only coarser)."""
        return self.lock(key)


class MemoryStateStore(StateStore):
    """State kept in this process only (the default): sign in again after a restart."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}
        self._lock = threading.RLock()
        self._sign_in_locks: dict[str, threading.RLock] = {}

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

    def sign_in_lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        with self._lock:
            lock = self._sign_in_locks.setdefault(key, threading.RLock())
        return waited(lock, f"the sign-in to {key}")

    def __repr__(self) -> str:
        return f"<MemoryStateStore {len(self._data)} servers>"


class FileStateStore(StateStore):
    """State in one JSON file (camelCase keys), shared by threads and processes.

    Writes are atomic (a temporary file in the same directory, then ``os.replace``), the file
    and its lock file are created with mode 0600 and the folders it makes with 0700, whatever
    the umask, and :meth:`lock` takes an exclusive ``flock`` on ``<path>.lock`` so that
    processes sharing the file take turns (a sign-in, on ``<path>.sign-in.lock``). A file
    another user could have written (writable by its group or by everyone, or owned by
    someone else but root) is refused: :class:`UnsafeStateFile`.

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
        self._sign_in = _FileLock(Path(f"{self.path}.sign-in.lock"))
        self._state = _FileLock(Path(f"{self.path}.lock"))

    def __repr__(self) -> str:
        return f"<FileStateStore {str(self.path)!r}>"

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return self._state.held("the OAuth state file " + str(self.path))

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._locked()

    def sign_in_lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._sign_in.held(f"the sign-in to {key}")

    def _read_all(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as file:
                _refuse_if_others_could_write(self.path, os.fstat(file.fileno()))
                text = file.read()
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


def _refuse_if_others_could_write(path: Path, info: os.stat_result) -> None:
    """Raise :class:`UnsafeStateFile` for a state file another user could have written: what
    it holds (a token endpoint, a client) may be theirs (ssh refuses such files the same way;
    a chmod would keep what they wrote)."""
    if os.name != "posix":
        return
    me = os.geteuid()
    if info.st_uid not in (me, 0):
        problem = f"is owned by uid {info.st_uid}, not by you (uid {me})"
        fix = "delete it, and sign in again"
    elif info.st_mode & 0o022:
        problem = f"is writable by others (mode {stat.S_IMODE(info.st_mode):04o})"
        fix = f"if you trust what it holds, chmod 600 {path}; else delete it, and sign in again"
    else:
        return
    raise UnsafeStateFile(
        f"the OAuth state file {path} {problem}: another user could have put their own token "
        f"endpoint or client in it, so it is not read ({fix})",
        path=str(path),
    )


def _make_private_folders(folder: Path) -> None:
    """Make ``folder`` and its missing parents with mode 0700, whatever the umask (what the
    XDG base directory spec asks of a folder it makes); folders that exist are left alone."""
    missing: list[Path] = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)
        except FileExistsError:
            continue  # (another process made it meanwhile)
        os.chmod(made, 0o700)  # (the umask may have taken some of 0700 away)


class _FileLock:
    """An ``flock`` on one file, for the threads (reentrant) and processes of a host; a wait
    ends by the request's deadline (:class:`LockTimeout`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def held(self, what: str) -> Iterator[None]:
        with waited(self._thread_lock, what):
            if self._depth == 0:
                _make_private_folders(self.path.parent)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    _flock(fd, lock_deadline(None), what)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    _unlock(fd)
                    os.close(fd)


def _flock(fd: int, deadline: float | None, what: str) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: threads of this process still take turns
        return
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    pause = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockTimeout(f"waited too long for the lock of {what}") from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.1)


def _unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
