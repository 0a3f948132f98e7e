"""tests/reliability: every test is bounded, and may ask for a leak check (``leaks``)."""

from __future__ import annotations

import pytest
from reliability_support import Leaks, fault_peer


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
