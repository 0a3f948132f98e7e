"""Worker threads: a small elastic pool (:class:`Workers`) and an in-order lane on it
(:class:`Lane`).

Ordered lane
    Notifications and responses go out one at a time in ``send()`` order, each once the previous
    one was answered, or, if that answer is late, :data:`LANE_STALL` seconds after it was
    written: a server that never acknowledges one must not hold up the others. Every lane POST
    is bounded: a request's by its abort signal (the session aborts it on timeout), any other
    by the transport's acknowledgement timeout. A message sent outside the lane (a Streamable
    HTTP request) first waits for the lane the same way (:meth:`Lane.wait_passed`), so it does
    not overtake a notification sent before it (``notifications/initialized`` first).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ...errors import ConnectionClosed

__all__ = ["LANE_STALL", "Lane", "Workers"]

logger = logging.getLogger("mcp_sync.transport.http")

#: Seconds an unanswered lane POST holds up the messages behind it.
LANE_STALL = 1.0


class Workers:
    """A small elastic thread pool: a task never waits for a busy worker; idle ones exit."""

    def __init__(self, prefix: str, idle_timeout: float = 30.0) -> None:
        self._prefix = prefix
        self._idle_timeout = idle_timeout
        self._tasks: deque[Callable[[], None] | None] = deque()
        self._cond = threading.Condition()
        self._idle = 0
        self._threads: set[threading.Thread] = set()
        self._count = 0
        self._stopped = False

    def submit(self, task: Callable[[], None]) -> None:
        with self._cond:
            if self._stopped:
                raise ConnectionClosed("the transport is closed")
            self._tasks.append(task)
            if self._idle > len(self._tasks) - 1:
                self._cond.notify()
                return
            self._count += 1
            thread = threading.Thread(
                target=self._run, name=f"{self._prefix}-{self._count}", daemon=True
            )
            self._threads.add(thread)
        thread.start()

    def _run(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                deadline = time.monotonic() + self._idle_timeout
                while not self._tasks and not self._stopped:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._idle += 1
                    self._cond.wait(left)
                    self._idle -= 1
                if not self._tasks:
                    self._threads.discard(me)
                    return
                task = self._tasks.popleft()
            if task is None:
                continue
            try:
                task()
            except Exception:
                logger.exception("HTTP transport worker failed")

    def shutdown(self, timeout: float) -> None:
        with self._cond:
            self._stopped = True
            threads = list(self._threads)
            self._cond.notify_all()
        me = threading.current_thread()
        deadline = time.monotonic() + timeout
        for thread in threads:
            if thread is not me:
                thread.join(max(deadline - time.monotonic(), 0.0))
                if thread.is_alive():
                    logger.warning("%s did not stop within %g s", thread.name, timeout)


class Lane:
    """Starts items one at a time, in order, on a worker (for messages that must not overtake).

    ``handle(item, advance)`` sends one item and calls ``advance()`` once it is on the wire.
    The next item starts when this one is done, or, if it was written but is still unanswered
    after ``stall`` seconds, without it (on another worker): a stuck item holds up the others
    only that long. The handler still owes each item a deadline.
    """

    def __init__(
        self,
        workers: Workers,
        handle: Callable[[Any, Callable[[], None]], None],
        stall: float = LANE_STALL,
    ) -> None:
        self._workers = workers
        self._handle = handle
        self._stall = stall
        self._items: deque[tuple[Any, threading.Event]] = deque()
        self._lock = threading.Lock()
        self._running = False
        #: Set when the latest item started is done (a new drain waits for it, up to ``stall``).
        self._latest_done: threading.Event | None = None
        #: Items put and not yet done, and the ``done`` event of the last one put.
        self._unsettled = 0
        self._last_put: threading.Event | None = None

    def put(self, item: Any) -> None:
        done = threading.Event()
        with self._lock:
            self._items.append((item, done))
            self._unsettled += 1
            self._last_put = done
            if self._running:
                return
            self._running = True
            after = self._latest_done
        try:
            self._workers.submit(lambda: self._drain(after))
        except BaseException:
            with self._lock:
                self._running = False
                self._drop_items()
            raise

    def wait_passed(self, deadline: float) -> None:
        """Return once the items put so far are done or have each held the lane up ``stall``
        seconds (or at ``deadline``, a ``time.monotonic()`` value): what is sent next outside
        the lane goes after them."""
        if not self._unsettled:  # the usual case: nothing in flight, no lock taken
            return
        with self._lock:
            last, count = self._last_put, self._unsettled
        if last is not None and count:
            last.wait(max(min(deadline - time.monotonic(), self._stall * count), 0.0))

    def _settle(self, done: threading.Event) -> None:
        with self._lock:
            self._unsettled -= 1
        done.set()

    def _drop_items(self) -> None:
        """(Under the lock.) Forget the queued items: they count as done."""
        for _, done in self._items:
            self._unsettled -= 1
            done.set()
        self._items.clear()

    def _drain(self, after: threading.Event | None) -> None:
        if after is not None:
            after.wait(self._stall)
        while True:
            with self._lock:
                if not self._items:
                    self._running = False
                    return
                item, done = self._items.popleft()
                self._latest_done = done
            handed_over = False

            def advance(done: threading.Event = done) -> None:
                # On the wire: the lane goes on without this thread (after ``stall``, unless
                # this item is done by then); this thread waits for the answer.
                nonlocal handed_over
                with self._lock:
                    if handed_over:
                        return
                    handed_over = True
                    if not self._items:
                        self._running = False  # the next put() starts a drain
                        return
                try:
                    self._workers.submit(functools.partial(self._drain, done))
                except ConnectionClosed:
                    with self._lock:
                        self._running = False
                        self._drop_items()

            try:
                self._handle(item, advance)
            except Exception:
                logger.exception("HTTP transport: sending a message failed")
            finally:
                self._settle(done)
            with self._lock:
                if handed_over:
                    return
                handed_over = True
