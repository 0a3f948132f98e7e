"""Shared fixtures: a MockServer-backed client, and a check that no client thread outlives it."""

from __future__ import annotations

import signal

import pytest

from mcp_sync import Client
from mcp_sync.testing import MockServer
from tests.helpers.support import client_threads

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


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C raises KeyboardInterrupt here, however the suite was started: one started in the
    background of a non-interactive shell (``make test &``, a job runner) inherits SIGINT
    ignored (POSIX), Python then installs no handler, and every test that presses Ctrl-C waits
    out its timeout (two loaded runs lost 2 and 7 tests that way, by the order of the modules:
    a notebook test's kernel client puts Python's handler back)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _ctrl_c_left_as_found():
    """A test that leaves Ctrl-C's handler changed would make the Ctrl-C tests after it in the
    same worker fail far from the cause: it fails itself, naming the change, and the handler
    is put back."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before and before is not None:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left SIGINT's handler changed: {before!r} -> {after!r}")


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


# -- the suite in parallel (pytest-xdist: ``make test`` runs two workers a core, ``--dist loadscope``) ------

#: What takes longest, measured on a 2-core machine (the conformance suite, the CLI's docs page
#: and Dask: minutes; the other docs pages, the fleets and the soaks: tens of seconds): node ids
#: or their beginnings (a module). They are handed out first, in this order, so that a run never
#: ends waiting on one of them that started last.
SLOWEST_FIRST = (
    "tests/docs/test_docs.py::test_page[cli.md]",
    "tests/conformance/test_conformance.py",
    "tests/conformance/test_conformance_auth.py",
    "tests/docs/test_docs.py::test_page[pytest.md]",
    "tests/services/test_dask.py",
    "tests/services/test_ray.py",
    "tests/test_cassette.py",
    "tests/test_functions.py",
    "tests/docs/test_walkthroughs.py",
    "tests/integrations/test_crewai_tools.py",
    "tests/test_bench_smoke.py",
    "tests/docs/test_docs.py",
    "tests/conformance/test_conformance_loaded.py",
    "tests/reliability/test_recovery_pressure.py",
    "tests/reliability/test_long_lived.py",
    "tests/oauth/test_oauth_fleet_pressure.py",
    "tests/oauth/test_oauth_device.py",
    "tests/reliability/test_one_deadline.py",
)
#: Modules whose tests share nothing that is made once per module (no module-scoped fixture),
#: and are long: their tests are handed out one by one, like any other module's would be if a
#: module-scoped fixture did not need its tests kept together on one worker.
SPREAD = frozenset({"tests/docs/test_docs.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest modules first (a stable sort: the rest keep their order)."""

    def rank(item: pytest.Item) -> int:
        found = (i for i, first in enumerate(SLOWEST_FIRST) if item.nodeid.startswith(first))
        return next(found, len(SLOWEST_FIRST))

    items.sort(key=rank)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # (a lane without xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """With ``--dist loadscope``: a module's tests run on one worker, so that a module-scoped
    fixture (a server started once for the module) starts once; the modules of
    :data:`SPREAD` are handed out test by test. Modules go out in collection order (slowest
    first), not xdist's order by size."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return nodeid if module in SPREAD else module

    config.option.loadscopereorder = False
    return ByModule(config, log)
