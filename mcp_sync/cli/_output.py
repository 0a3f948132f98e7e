"""The CLI's stdout and stderr when their reader stops reading: ``mcp-sync --json tools | head``.

A well-behaved Unix tool ends quietly then. The CLI exits 0 (as ``git`` does), not 141
(killed by SIGPIPE, as ``cat`` is): whether a write finds the pipe closed depends on whether
the output fitted in the pipe before the reader left, which the user cannot see, and 0 is the
status in both cases.
"""

from __future__ import annotations

import contextlib
import os
from typing import IO, Any, NoReturn, cast

__all__ = ["OutputClosed", "closed", "guarded"]


class OutputClosed(Exception):
    """The reader of the CLI's output is gone (EPIPE): end the command, saying nothing."""


def guarded(stream: IO[str]) -> IO[str]:
    """``stream``, raising :class:`OutputClosed` where a write or flush meets a closed pipe."""
    return cast(IO[str], _Guarded(stream))


def closed(stream: IO[str]) -> NoReturn:
    """Point ``stream``'s descriptor at the null device, so that what is still buffered and
    later writes (a log line from another thread, the interpreter's flush at exit) go nowhere
    instead of failing again; raise :class:`OutputClosed`."""
    with contextlib.suppress(OSError, ValueError):  # a stream without a descriptor
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)
    raise OutputClosed


class _Guarded:
    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            closed(self._stream)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            closed(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
