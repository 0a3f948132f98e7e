"""tests/reliability: every test is bounded, and may ask for a leak check (``leaks``) or the
mcp_sync loggers' records (``records``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.helpers.reliability_support import Leaks, fault_peer


@pytest.fixture(scope="session", autouse=True)
def _warm_up() -> None:
    """Start one server first: the process-wide watchdog (one pipe, kept for the process's
    lifetime by design) must not count as a leak of the first test that starts a server."""
    transport = fault_peer("echo")
    transport.start()
    transport.close()


@pytest.fixture
def leaks():
    """Fails the test if client threads, fds or child processes outlive it."""
    snapshot = Leaks()
    yield snapshot
    snapshot.check()


@pytest.fixture
def records() -> Iterator[list[logging.LogRecord]]:
    """Every record the mcp_sync loggers emit during the test, at DEBUG."""
    caught: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    handler = Keep(logging.DEBUG)
    root = logging.getLogger("mcp_sync")
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield caught
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
