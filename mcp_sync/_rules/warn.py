"""Warnings that point at the user's line: the one home of ``stacklevel``, and of deprecations.

A warning mcp_sync raises is about something the user's code did (a deprecated spelling, a
changed pinned tool, hidden characters in a tool it offers a model), so it names the first
line of the call stack outside mcp_sync, however deep in the library it was raised. A count of
frames written at each ``warnings.warn`` broke whenever a layer moved (a deadline's ``with``
block, a helper split out); this walk does not.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["REMOVED_IN", "deprecated", "warn"]

#: The release that removes every deprecated spelling (docs/api.md, "Deprecations", argues it).
REMOVED_IN = "0.2.0"


def warn(message: str | Warning, category: type[Warning] | None = None) -> None:
    """``warnings.warn(message, category)``, attributed to the first frame outside mcp_sync."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _inside(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level + 1)


def _inside(module: str) -> bool:
    return module == "mcp_sync" or module.startswith("mcp_sync.")


def deprecated(message: str) -> None:
    """Warn that a spelling is deprecated: ``message`` says what replaces it."""
    warn(f"{message} (the old spelling goes in {REMOVED_IN})", DeprecationWarning)
