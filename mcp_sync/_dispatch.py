"""The dispatcher thread: runs user code (handlers and callbacks) in arrival order.

The transport's reader thread must never run user code: a callback that blocks, or that
calls back into the client and waits for a response, would stop the very thread that delivers
that response. So every handler and callback goes through here.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

__all__ = ["Dispatcher"]

logger = logging.getLogger("mcp_sync")

_STOP = None


class Dispatcher:
    """One daemon thread that runs submitted callables in order; exceptions are logged."""

    def __init__(self, name: str = "mcp-sync-dispatcher") -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False
        self._stopped = False
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; it runs on the dispatcher thread after everything queued before it.

        Returns False (and drops the job) once the dispatcher is stopped.
        """
        with self._lock:
            if self._stopped:
                return False
            if not self._started:
                self._started = True
                self._thread.start()
        self._queue.put(job)
        return True

    def on_dispatcher_thread(self) -> bool:
        """True when called from the dispatcher thread itself (inside a handler)."""
        return threading.current_thread() is self._thread

    def stop(self, timeout: float | None = 5.0) -> None:
        """Let queued jobs finish, then end the thread (joined unless called from it)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            started = self._started
        if not started:
            return
        self._queue.put(_STOP)
        if not self.on_dispatcher_thread():
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.warning("mcp_sync: a handler is still running after close(); not waiting")

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is _STOP:
                return
            try:
                job()
            except Exception:
                logger.exception("mcp_sync: a handler or callback raised")
