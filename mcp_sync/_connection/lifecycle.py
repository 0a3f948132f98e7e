"""The parts of a connection's life that must work without the connection itself: the
finaliser of a client dropped unclosed, the fork hook, weak callbacks for the transport's
threads, and the shutdown steps they share with ``close()``.

None of this may hold the connection strongly: the transport's threads and the garbage
collector reach it, and a strong reference from them would keep an unreachable client alive.

After ``fork()`` the child holds a copy of every connection of its parent: the same server
process, the same HTTP session, copies of the same pipes and sockets, but none of the threads.
None of that is the child's to stop. A child's ``close()`` (or ``with`` block, or finaliser)
only releases its own copies of the descriptors (:func:`release_after_fork`): it sends nothing,
signals no process and joins no thread, so the parent's server and session go on. It takes no
lock either: a thread of the parent may have held one at the instant of the fork, and in the
child nobody would ever release it.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .._session import dispatch as _dispatch
from .._session.session import Session
from ..errors import InvalidStateError
from ..transports.base import Transport

__all__ = [
    "Live",
    "close_unreachable",
    "forked_error",
    "release_after_fork",
    "start_closer",
    "stop_connection",
    "unwatch_fork",
    "watch_fork",
    "weak_callback",
]

logger = logging.getLogger("mcp_sync")

_T = TypeVar("_T")

#: How long ``close()`` waits for queued cancellations (a Ctrl-C's, an abort's) to be written
#: before it closes the transport: long enough for a live peer, short for a stuck one.
CANCEL_FLUSH = 0.1


class _ForkAware(Protocol):
    #: Set in a child process made by ``fork()``: the threads and pipes did not survive.
    forked: bool


_watched: weakref.WeakSet[Any] = weakref.WeakSet()


def watch_fork(owner: _ForkAware) -> None:
    """Set ``owner.forked`` in a child process made by ``fork()`` (held weakly)."""
    _watched.add(owner)


def unwatch_fork(owner: _ForkAware) -> None:
    _watched.discard(owner)


def _mark_forked() -> None:
    for owner in list(_watched):
        owner.forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_forked)


def weak_callback(method: Callable[[Any], _T], default: Any = None) -> Callable[[Any], _T]:
    """``method`` (bound) held weakly: a callback kept by the transport's threads must not keep
    its owner alive (an unreachable client is collected and its finaliser closes it). Once
    the owner is gone the callback returns ``default``."""
    ref = weakref.WeakMethod(method)

    def call(arg: Any) -> _T:
        target = ref()
        return default if target is None else target(arg)

    return call


def stop_connection(
    session: Session | None, transport: Transport | None, dispatcher: _dispatch.Dispatcher | None
) -> None:
    """Stop the transport and end the connection's threads, finishing every step even when
    one is interrupted (Ctrl-C): a second ``close()`` then resumes what is left. The
    cancellations already queued go out first (within :data:`CANCEL_FLUSH`): a call given up
    right before ``close()`` (the CLI's Ctrl-C) is still cancelled on the server."""
    try:
        if session is not None:
            session.flush_writes(CANCEL_FLUSH)
        if transport is not None:
            try:
                transport.close()
            except Exception:
                logger.exception("closing the transport failed")
    finally:
        try:
            if session is not None:
                session.detach()
        finally:
            if dispatcher is not None:
                dispatcher.stop()


class Live:
    """What the finaliser must stop: the current session (recovery replaces it), and the
    process that started it."""

    __slots__ = ("dispatcher", "pid", "session", "transport")

    def __init__(self) -> None:
        self.session: Session | None = None
        self.transport: Transport | None = None
        self.dispatcher: _dispatch.Dispatcher | None = None
        #: The process that connected (set by ``connect()``).
        self.pid = os.getpid()

    def in_forked_child(self) -> bool:
        """True in a child made by ``fork()`` after the connection was made: nothing of it is
        this process's to stop. (The pid, not the fork hook: it holds without
        ``os.register_at_fork`` too.)"""
        return self.pid != os.getpid()


def release_after_fork(live: Live, finalizer: weakref.finalize[Any, Any] | None = None) -> None:
    """In a forked child: release this process's copies of the transport's descriptors, and
    nothing else (see the module docstring); ``finalizer`` will not run. Idempotent."""
    if finalizer is not None:
        finalizer.detach()
    transport, live.transport = live.transport, None
    live.session = live.dispatcher = None
    if transport is not None:
        try:
            transport.release_after_fork()
        except Exception:
            logger.exception("releasing the transport after fork() failed")


def close_unreachable(live: Live) -> None:
    """The finaliser of a connection whose client was dropped without ``close()`` (it must
    not refer to either).

    The garbage collector may run it on any thread, in the middle of anything, one of the
    connection's own threads holding one of its locks included: the shutdown runs on a thread
    of its own. In a forked child it only releases the child's copies of the descriptors."""
    if live.in_forked_child():
        release_after_fork(live)  # a copy dropped by the child: the parent's, not unclosed
        return
    warnings.warn(
        "unclosed <mcp_sync.Client>: call close() or use 'with'", ResourceWarning, stacklevel=2
    )
    threading.Thread(
        target=_stop_live, args=(live,), name="mcp-sync-finalizer", daemon=True
    ).start()


def _stop_live(live: Live) -> None:
    if live.session is not None:
        live.session.fail_all(None)
    stop_connection(live.session, live.transport, live.dispatcher)


def start_closer(
    shut_down: Callable[[BaseException | None], None], cause: BaseException | None
) -> threading.Thread:
    """Run ``shut_down(cause)`` on a new daemon thread, started before this returns: a
    transport's own thread reports its end and must not join itself."""
    closer = threading.Thread(target=shut_down, args=(cause,), name="mcp-sync-closer", daemon=True)
    closer.start()
    return closer


def forked_error() -> InvalidStateError:
    """The error for using, in a forked child, a client made before the fork."""
    return InvalidStateError(
        "this client was created before fork(): its threads and pipes did not survive; "
        "create the client in the child process, after the fork"
    )
