"""tests/services: mcp_sync inside real long-lived services (gunicorn, a worker pool)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for extra in (HERE.parent, HERE.parent / "servers", HERE.parent / "reliability"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))
