"""Abort signals for blocking calls, built on :class:`threading.Event`.

An :class:`AbortController` owns a :class:`AbortSignal`; pass ``controller.signal`` to any
request method as ``signal=`` and call ``controller.abort(reason)`` from any thread to make
that call raise :class:`~mcp_sync.errors.Aborted` and cancel the request on the wire::

    controller = AbortController()
    threading.Timer(5, controller.abort, args=("user pressed stop",)).start()
    client.call_tool("slow", signal=controller.signal)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from ._rules.numbers import number
from .errors import Aborted

__all__ = ["AbortController", "AbortSignal"]

_Callback = Callable[[object], None]


class AbortSignal:
    """Tells whether an operation should stop, and why. Read-only for its consumers."""

    __slots__ = ("_aborted", "_callbacks", "_event", "_lock", "_reason")

    def __init__(self) -> None:
        # Every request has a signal, so making one allocates little: the Event (a Condition
        # and its locks) is made only for someone who waits, the list for someone who listens.
        self._lock = threading.Lock()  # guards the state below; never held while calling out
        self._aborted = False
        self._event: threading.Event | None = None
        self._callbacks: list[_Callback] | None = None
        self._reason: object = None

    @property
    def aborted(self) -> bool:
        """True once the signal has fired."""
        return self._aborted

    @property
    def reason(self) -> object:
        """The reason given to ``abort()``, or None while not aborted."""
        return self._reason

    def wait(self, timeout: float | None = None) -> bool:
        """Block until aborted or ``timeout`` seconds pass; return ``aborted``."""
        if timeout is not None:
            number(timeout, "AbortSignal.wait: timeout")
        with self._lock:
            if self._aborted:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    def throw_if_aborted(self) -> None:
        """Raise :class:`Aborted` with the reason if the signal has fired."""
        if self._aborted:
            raise Aborted(self._reason)

    def on_abort(self, callback: _Callback) -> Callable[[], None]:
        """Call ``callback(reason)`` once when aborted (at once if already aborted).

        Returns a function that removes the callback. Callbacks run on the aborting thread and
        must be quick.
        """
        with self._lock:
            if not self._aborted:
                if self._callbacks is None:
                    self._callbacks = []
                self._callbacks.append(callback)
                return lambda: self._remove(callback)
        callback(self._reason)
        return lambda: None

    def _remove(self, callback: _Callback) -> None:
        with self._lock:
            callbacks = self._callbacks
            if callbacks is not None and callback in callbacks:
                callbacks.remove(callback)

    def _abort(self, reason: object) -> bool:
        with self._lock:
            if self._aborted:
                return False
            self._reason = reason
            self._aborted = True
            event = self._event
            callbacks, self._callbacks = self._callbacks, None
        if event is not None:
            event.set()
        if callbacks:
            for callback in callbacks:
                callback(reason)
        return True

    @staticmethod
    def any(signals: Iterable[AbortSignal | None]) -> AbortSignal:
        """A signal that fires as soon as any of ``signals`` fires, with its reason."""
        controller = AbortController()
        for signal in signals:
            if signal is not None:
                signal.on_abort(controller.abort)
        return controller.signal

    @staticmethod
    def timeout(seconds: float) -> AbortSignal:
        """A signal that fires after ``seconds`` with a ``TimeoutError`` as its reason."""
        number(seconds, "AbortSignal.timeout: seconds")
        controller = AbortController()
        timer = threading.Timer(
            seconds, controller.abort, args=(TimeoutError(f"signal timed out after {seconds:g} s"),)
        )
        timer.daemon = True
        timer.start()
        controller.signal.on_abort(lambda _reason: timer.cancel())
        return controller.signal

    def __repr__(self) -> str:
        state = f"aborted, reason={self._reason!r}" if self.aborted else "pending"
        return f"<AbortSignal {state}>"


class AbortController:
    """Owns an :class:`AbortSignal` and fires it with :meth:`abort`."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: object = "aborted") -> None:
        """Fire the signal (once; later calls do nothing). Safe from any thread."""
        self.signal._abort(reason)
