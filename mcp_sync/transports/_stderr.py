"""Capturing a server's stderr: the last bytes kept for error messages, chunks passed on as text."""

from __future__ import annotations

import codecs
import logging
import os
import select
import threading
from collections.abc import Callable

__all__ = ["StderrCapture", "StderrListener"]

logger = logging.getLogger("mcp_sync.transport.stdio")

StderrListener = Callable[[str], None]

_CHUNK = 65536


class StderrCapture:
    """Keeps the last ``max_bytes`` of a stream and passes each chunk to ``listener``."""

    def __init__(self, max_bytes: int, listener: StderrListener | None) -> None:
        self.max_bytes = max_bytes
        self._listener = listener
        self._lock = threading.Lock()
        self._tail = bytearray()

    @property
    def tail(self) -> str:
        """The last ``max_bytes`` read, as text."""
        with self._lock:
            tail = bytes(self._tail)
        skip = 0
        while skip < min(3, len(tail)) and 0x80 <= tail[skip] < 0xC0:
            skip += 1  # the tail starts inside a UTF-8 sequence
        return tail[skip:].decode("utf-8", errors="replace")

    def pump(self, fd: int, wake_fd: int) -> None:
        """Read the non-blocking ``fd`` until EOF, an error, or ``wake_fd`` is readable."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(wake_fd, select.POLLIN)
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                if any(ready == wake_fd for ready, _ in poller.poll()):
                    break
                continue
            except OSError:
                break
            if not chunk:
                break
            self._keep(chunk)
            if self._listener is not None:
                self._pass(decoder.decode(chunk))
        if self._listener is not None:
            self._pass(decoder.decode(b"", True))

    def _keep(self, chunk: bytes) -> None:
        with self._lock:
            tail = self._tail
            tail += chunk
            excess = len(tail) - self.max_bytes
            if excess > 0:
                del tail[:excess]

    def _pass(self, text: str) -> None:
        if text and self._listener is not None:
            try:
                self._listener(text)
            except Exception:
                logger.exception("on_stderr callback failed")
