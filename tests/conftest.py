"""Shared fixtures: a MockServer-backed client, and a check that no client thread outlives it."""

from __future__ import annotations

import pytest
from support import client_threads

from mcp_sync import Client
from mcp_sync.testing import MockServer

# The mcp_client fixture (users get it through the pytest11 entry point, which pyproject's
# addopts turns off here so that coverage starts before mcp_sync is imported).
pytest_plugins = ["mcp_sync.pytest_plugin"]


@pytest.fixture
def server():
    return MockServer(
        capabilities={
            "tools": {"listChanged": True},
            "resources": {"subscribe": True},
            "prompts": {},
            "logging": {},
            "completions": {},
        }
    )


@pytest.fixture
def client(server):
    before = set(client_threads())
    c = Client("test-client", "1.0", request_timeout=5.0)
    server.connect(c)
    server.wait_for("notifications/initialized")
    yield c
    c.close()
    server.transport.close()
    leftover = [t for t in client_threads() if t not in before and t.is_alive()]
    assert not leftover, f"threads left after close(): {leftover}"


@pytest.fixture
def clean_env(monkeypatch):
    """No proxy or CA-bundle variables from the environment (HTTP and TLS tests set their own)."""
    for name in (
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "SSL_CERT_FILE",
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


# -- the suite in parallel (pytest-xdist, ``make test``: ``-n 4 --dist loadgroup``) -----------

#: The modules that take longest, measured on a 2-core machine (conformance and Dask: minutes
#: each; the docs pages, the fleets and the soaks: tens of seconds). They are handed out
#: first, so that a run never ends waiting on one of them that started last.
SLOWEST_FIRST = (
    "tests/conformance/test_conformance.py",
    "tests/conformance/test_conformance_auth.py",
    "tests/services/test_dask.py",
    "tests/conformance/test_conformance_loaded.py",
    "tests/docs/test_docs.py",
    "tests/integrations/test_crewai_tools.py",
    "tests/test_functions.py",
    "tests/test_cassette.py",
    "tests/oauth/test_oauth_fleet_chaos.py",
    "tests/oauth/test_oauth_fleet_pressure.py",
    "tests/services/test_ray.py",
    "tests/test_pytest_plugin.py",
    "tests/reliability/test_lattice_soak.py",
    "tests/reliability/test_recovery_pressure.py",
)


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    definitions = getattr(item, "_fixtureinfo", None)
    if definitions is None:
        return False
    return any(
        defs and defs[-1].scope == "module" for defs in definitions.name2fixturedefs.values()
    )


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that shares a module-scoped fixture (a server started once per module) runs on
    the same worker as the rest of its module, so the fixture still starts once; every other
    test goes wherever a worker is free. The slowest modules go first."""
    if config.pluginmanager.hasplugin("xdist"):  # (its marker is unknown without it)
        for item in items:
            if _uses_a_module_fixture(item):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))

    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::", 1)[0]
        return SLOWEST_FIRST.index(module) if module in SLOWEST_FIRST else len(SLOWEST_FIRST)

    items.sort(key=rank)  # stable: the rest keep their order
