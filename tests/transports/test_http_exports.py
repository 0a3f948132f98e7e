"""The HTTP names are exported lazily: ``import mcp_sync`` does not import ``requests``."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import mcp_sync, mcp_sync.transports
assert "requests" not in sys.modules, "requests imported eagerly"
from mcp_sync import (
    AuthProvider, BearerToken, ReconnectOptions, SseTransport, StreamableHttpTransport,
    UnauthorizedContext,
)
from mcp_sync.transports import ReconnectOptions as R, SseTransport as S, fallback_to_sse
from mcp_sync.auth import BearerToken as B
from mcp_sync.transports.http import fallback_to_sse as f
assert B is BearerToken and f is fallback_to_sse and R is ReconnectOptions and S is SseTransport
assert "requests" in sys.modules
for module in (mcp_sync, mcp_sync.transports):
    for name in module.__all__:
        getattr(module, name)
print("ok")
"""


def test_lazy_http_exports() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
