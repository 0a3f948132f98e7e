"""The deadline of the request being authorized, applied to the waits of an OAuth flow.

A transport hands a provider the request's deadline (``RequestContext.deadline``,
``UnauthorizedContext.deadline``), which is the user call's one deadline
(:mod:`mcp_sync._rules.deadline`); the provider runs its flow under :func:`limits_for`, and every
wait of the flow on this thread (an exchange, a thread lock, a store's lock, a Redis command,
the polls of a device sign-in) ends by then, so that a call's ``timeout=`` bounds its
authentication too.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from ..auth import RequestContext, UnauthorizedContext
from ._http import Limits, current_limits
from .errors import LockTimeout

__all__ = ["inherited", "limits_for", "lock_deadline", "waited"]


def limits_for(timeout: float, ctx: RequestContext | UnauthorizedContext) -> Limits:
    """The limits of a flow run for the request ``ctx`` describes."""
    return Limits(timeout, ctx.cancelled, ctx.interactive, getattr(ctx, "deadline", None))


def inherited(timeout: float, *, deadline: bool = True) -> Limits:
    """Limits with ``timeout`` per exchange that keep this thread's abort and (unless
    ``deadline`` is False) its deadline."""
    outer = current_limits()
    return Limits(timeout, outer.cancelled, outer.interactive, outer.deadline if deadline else None)


def lock_deadline(wait: float | None) -> float | None:
    """When a lock wait ends: ``wait`` seconds from now or the request's deadline, the
    sooner (None: no end)."""
    request = current_limits().deadline
    if wait is None:
        return request
    mine = time.monotonic() + wait
    return mine if request is None else min(request, mine)


@contextlib.contextmanager
def waited(lock: threading.RLock | threading.Lock, what: str) -> Iterator[None]:
    """``lock``, waited for until the request's deadline (then :class:`LockTimeout`)."""
    deadline = lock_deadline(None)
    wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
    if not lock.acquire(timeout=wait):
        raise LockTimeout(f"waited until the request's deadline for {what}")
    try:
        yield
    finally:
        lock.release()
