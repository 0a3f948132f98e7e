"""Test helpers shared by the suite (importable as `support`)."""

from __future__ import annotations

import threading
import time


def client_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcp-sync")]


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.005):
    """Poll ``predicate`` until it is truthy (returning it) or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {predicate}")
        time.sleep(interval)
