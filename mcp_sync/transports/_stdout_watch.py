"""What a stdio server printed on stdout that is not JSON-RPC, kept while connecting to
explain a failure (a command that is really an HTTP server fails at once).

``open_client`` watches every stdio server it starts from a command while it connects; the
CLI reaches it through ``connect()``."""

from __future__ import annotations

import ast
import contextlib
import re
import threading
from typing import TYPE_CHECKING

from ..errors import ProtocolError, StdioServerError

if TYPE_CHECKING:
    from .base import Transport

__all__ = ["StdioServerError", "StdoutWatch"]


class StdoutWatch:
    """Keeps what a stdio server printed on stdout that is not JSON-RPC, while connecting.

    A command that is really an HTTP server announces its local URL there and never answers:
    on such a line the connection is ended at once instead of waiting for the timeout.
    """

    _LOCAL_URL = re.compile(
        r"https?://(?:localhost|127\.[0-9.]+|0\.0\.0\.0|\[::1?\])(?::[0-9]+)?(?:/[^\s'\")]*)?"
    )
    _SHOWN = re.compile(r": (b?'.*'|b?\".*\")$", re.DOTALL)

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.lines: list[str] = []
        self.http_server = False
        self.url: str | None = None
        self._lock = threading.Lock()
        self._stop = transport.on_error(self._on_error)

    def _on_error(self, error: BaseException) -> None:
        match = self._SHOWN.search(str(error))
        if not isinstance(error, ProtocolError) or match is None:
            return
        with contextlib.suppress(ValueError, SyntaxError):
            shown = ast.literal_eval(match.group(1))
            line = (shown.decode(errors="replace") if isinstance(shown, bytes) else shown).strip()
            with self._lock:
                if len(self.lines) < 5:
                    self.lines.append(line)
                found = self._LOCAL_URL.search(line)
                if self.http_server or found is None:
                    return
                self.http_server = True
                self.url = found.group(0).rstrip(".,;:")
            # Not on the reader thread that called us: closing joins it.
            threading.Thread(target=self.transport.close, daemon=True).start()

    def stop(self) -> None:
        self._stop()

    def explain(self, exc: Exception) -> Exception:
        """``exc`` with what the server printed on stdout, if it printed anything."""
        with self._lock:
            lines, http_server, url = list(self.lines), self.http_server, self.url
        if not lines:
            return exc
        seen = "; ".join(repr(line) for line in lines)
        if http_server:
            return StdioServerError(
                f"the server printed on stdout: {seen}; it looks like an HTTP server: connect "
                f"to {url} instead of starting it as a command",
                looks_like_http=True,
                url=url,
            )
        return StdioServerError(
            f"{exc} (the server printed on stdout: {seen})", looks_like_http=False
        )
