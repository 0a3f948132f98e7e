"""The dispatcher thread: runs user code (handlers and callbacks) in arrival order.

The transport's reader thread must never run user code: a callback that blocks, or that
calls back into the client and waits for a response, would stop the very thread that delivers
that response. So every handler and callback goes through here. The same class, with a bound
on its backlog, writes the answers the reader thread owes the peer (the reader never writes).
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
    """One daemon thread that runs submitted callables in order; exceptions are logged.

    ``max_backlog`` bounds the jobs waiting to run: :meth:`submit` refuses the excess.
    """

    def __init__(self, name: str = "mcp-sync-dispatcher", max_backlog: int | None = None) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False
        self._stopped = False
        self._lock = threading.Lock()
        self._max_backlog = max_backlog
        self._backlog = 0  # counted only with a max_backlog (guarded by _lock)

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``; it runs on the dispatcher thread after everything queued before it.

        Returns False (and drops the job) once the dispatcher is stopped, or when
        ``max_backlog`` jobs are already waiting.
        """
        with self._lock:
            if self._stopped:
                return False
            if self._max_backlog is not None:
                if self._backlog >= self._max_backlog:
                    return False
                self._backlog += 1
            if not self._started:
                self._started = True
                self._thread.start()
        self._queue.put(job)
        return True

    def on_dispatcher_thread(self) -> bool:
        """True when called from the dispatcher thread itself (inside a handler)."""
        return threading.current_thread() is self._thread

    def stop(self, timeout: float | None = 5.0) -> None:
        """Drop the jobs still queued, let the running one finish (up to ``timeout``), and end
        the thread (joined unless called from it). Nothing submitted runs after this returns."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            started = self._started
        if not started:
            return
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
        self._queue.put(_STOP)
        if not self.on_dispatcher_thread():
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.warning("mcp_sync: a handler is still running after close(); not waiting")

    def _run(self) -> None:
        bounded = self._max_backlog is not None
        while True:
            job = self._queue.get()
            if job is _STOP or self._stopped:
                return
            if bounded:
                with self._lock:
                    self._backlog -= 1
            try:
                job()
            except Exception:
                logger.exception("mcp_sync: a handler or callback raised")
