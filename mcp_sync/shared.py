"""``shared_client``: one client per process and configuration, for long-lived services.

WSGI workers, Celery workers and thread pools want one connection per process, made on first
use (after any ``fork()``), shared by every thread, replaced when it is lost, closed at exit::

    @mcp_sync.shared_client
    def time_server() -> mcp_sync.Client:
        return mcp_sync.connect(["mcp-server-time"], recovery=True)

    def app(environ, start_response):        # any thread of any worker
        result = time_server().call_tool("get_current_time", {"timezone": "UTC"})

What ``functools.cache`` does not do and this does:

- The first calls of several threads at once make one client, not one each (a lock).
- A child process made by ``fork()`` makes its own client: the parent's threads and pipes did
  not survive the fork. The parent's client is left alone (closing it from the child would stop
  the parent's server).
- A client that closed (its server died and it has no ``recovery=``, or someone closed it) is
  replaced on the next call. A client with ``recovery=`` heals itself in place.
- Every client made in this process is closed at interpreter exit, or by ``close()``.

The decorated function may take arguments (hashable, as for ``functools.cache``): one client
per distinct arguments, e.g. per server name.

A ``SharedClient`` can be pickled, so that tasks of Dask, Ray or ``multiprocessing`` may use
one defined in a notebook or a ``__main__`` script (sent to the workers by value): every copy
that arrives in a process is that process's one instance, not a new client per task. One
defined in an importable module pickles by name, as a function does.
"""

from __future__ import annotations

import atexit
import functools
import os
import secrets
import sys
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, Generic, ParamSpec

from .client import Client

__all__ = ["SharedClient", "shared_client"]

P = ParamSpec("P")

_instances: weakref.WeakSet[SharedClient[Any]] = weakref.WeakSet()
# Copies unpickled in this process, by their origin's token: kept for the process's life, since
# a worker's tasks drop theirs after each run and the client must outlive them.
_arrived: dict[str, SharedClient[Any]] = {}
_arrived_lock = threading.Lock()


class SharedClient(Generic[P]):
    """Calls ``make(*args)`` once per process and distinct ``args``; see the module docstring."""

    def __init__(self, make: Callable[P, Client]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._clients: dict[Hashable, Client] = {}
        self._pid = os.getpid()
        self._parents_clients: list[Client] = []
        self._token = secrets.token_hex(8)
        functools.update_wrapper(self, make)
        _instances.add(self)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Client:
        """This process's client for these arguments, made now if there is none yet or the
        last one closed."""
        if self._pid != os.getpid():
            self._forget_parent()  # for when the fork hook could not run (no register_at_fork)
        key = (args, tuple(sorted(kwargs.items())))
        client = self._clients.get(key)
        if client is not None and client.state != "closed":
            return client
        with self._lock:
            client = self._clients.get(key)
            if client is None or client.state == "closed":
                client = self._make(*args, **kwargs)
                self._clients[key] = client
            return client

    def close(self) -> None:
        """Close every client this process made here; the next call makes a new one."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def _forget_parent(self) -> None:
        """In a forked child: drop the parent's clients without closing them, and the lock,
        which another thread of the parent may have held at the fork."""
        self._lock = threading.Lock()
        # Kept referenced, never closed: a collected copy must not stop the parent's server.
        self._parents_clients.extend(self._clients.values())
        self._clients = {}
        self._pid = os.getpid()

    def __reduce__(self) -> str | tuple[Any, ...]:
        """By name when its module has it under its name; else by token, with ``make`` (which
        the pickler must then send by value, as cloudpickle does for ``__main__``)."""
        module = sys.modules.get(getattr(self, "__module__", "") or "")
        name = getattr(self._make, "__qualname__", "")
        if module is not None and module.__name__ != "__main__" and "<" not in name:
            found: Any = module
            for part in name.split("."):
                found = getattr(found, part, None)
            if found is self:
                return name
        with _arrived_lock:  # so that a copy unpickled back in this process is this one
            _arrived.setdefault(self._token, self)
        return (_arrive, (self._token, self._make))

    def __repr__(self) -> str:
        name = getattr(self._make, "__qualname__", repr(self._make))
        return f"<mcp_sync.SharedClient {name} clients={len(self._clients)}>"


def shared_client(make: Callable[P, Client]) -> SharedClient[P]:
    """Decorate a function that connects a client: calling it returns this process's shared
    client, made on first use under a lock, made again in a forked child or after it closed,
    and closed at exit. See :mod:`mcp_sync.shared`."""
    return SharedClient(make)


def _arrive(token: str, make: Callable[..., Client]) -> SharedClient[Any]:
    """Unpickling: this process's instance for ``token``, made on the first copy to arrive."""
    with _arrived_lock:
        shared = _arrived.get(token)
        if shared is None:
            shared = _arrived[token] = SharedClient(make)
            shared._token = token  # pickled again from here, it stays the same instance
        return shared


def _after_fork_in_child() -> None:
    for shared in list(_instances):
        shared._forget_parent()


def _close_all_at_exit() -> None:
    pid = os.getpid()
    for shared in list(_instances):
        if shared._pid == pid:
            shared.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all_at_exit)
