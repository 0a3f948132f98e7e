"""What the fleet tests share: the worker processes (tests/oauth/fleet_worker.py) and counts
of what the authorization server was asked for."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.helpers.support import ROOT

WORKER = ROOT / "tests" / "oauth" / "fleet_worker.py"


def counted(server, events: list[tuple[str, float]] | None = None) -> dict[str, int]:
    """Count what the authorization server is asked for: registrations, authorizations,
    code and refresh grants (and note each in ``events`` with its ``time.monotonic()``)."""
    counts = {"register": 0, "authorize": 0, "code": 0, "refresh": 0}
    names = {
        "register": "register_client",
        "authorize": "authorize",
        "code": "exchange_authorization_code",
        "refresh": "exchange_refresh_token",
    }
    for what, name in names.items():
        original = getattr(server.provider, name)

        def wrapper(*args, _what=what, _original=original, **kwargs):  # type: ignore[no-untyped-def]
            counts[_what] += 1
            if events is not None:
                events.append((_what, time.monotonic()))
            return _original(*args, **kwargs)

        setattr(server.provider, name, wrapper)
    return counts


def start_worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
