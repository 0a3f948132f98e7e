"""A state store whose failures say they are the store's.

A provider reads and writes its store while it handles a 401 on the transport's thread; an
error from there (``redis.ConnectionError: Error 111 connecting to ...``, ``PermissionError``)
would reach the user as the failure of the MCP request, naming no store. Wrapped, it is a
:class:`StateStoreError` naming the store and the operation, with the store's error as cause.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..errors import McpError
from .errors import StateStoreError
from .store import StateStore

__all__ = ["GuardedStore", "guarded"]

T = TypeVar("T")


class GuardedStore(StateStore):
    """``inner``, with its errors raised as :class:`StateStoreError` (the library's own
    errors, ``LockTimeout`` and ``LockLost``, pass unchanged)."""

    def __init__(self, inner: StateStore) -> None:
        self.inner = inner

    def __repr__(self) -> str:
        return repr(self.inner)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # (not set yet: a copy or an unpickling in progress)
            raise AttributeError(name)
        return getattr(self.inner, name)  # (the store's own attributes: ``client``, ``path``)

    def _call(self, what: str, operation: Callable[[], T]) -> T:
        try:
            return operation()
        except McpError:
            raise
        except Exception as exc:
            raise StateStoreError(
                f"the OAuth state store {self.inner!r} failed to {what}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def load(self, key: str) -> dict[str, Any] | None:
        return self._call("load the state", lambda: self.inner.load(key))

    def save(self, key: str, value: dict[str, Any] | None) -> None:
        self._call("save the state", lambda: self.inner.save(key, value))

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._held(lambda: self.inner.lock(key))

    def sign_in_lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        return self._held(lambda: self.inner.sign_in_lock(key))

    @contextlib.contextmanager
    def _held(self, make: Callable[[], contextlib.AbstractContextManager[None]]) -> Iterator[None]:
        manager = self._call("take its lock", make)
        self._call("take its lock", manager.__enter__)
        try:
            yield
        except BaseException as exc:
            # (the body's own error stays what it is)
            if not manager.__exit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            self._call("release its lock", lambda: manager.__exit__(None, None, None))


def guarded(store: StateStore) -> StateStore:
    """``store`` wrapped once (a store already guarded is returned as is)."""
    return store if isinstance(store, GuardedStore) else GuardedStore(store)
