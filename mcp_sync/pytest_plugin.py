"""A pytest plugin for testing MCP servers with plain pytest (no asyncio plugin needed).

Installed with mcp_sync and registered through the ``pytest11`` entry point, it gives the
``mcp_client`` fixture: a factory that connects a client to a server and closes it when the
test ends, pass or fail. When a test fails, what the server wrote to stderr is attached to the
report (a section named ``mcp server stderr``)::

    def test_add(mcp_client):
        client = mcp_client(["python", "server.py"])        # or a URL
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}

The factory takes what :func:`mcp_sync.connect` takes: a command, a URL, a Python server
object (served in-process), ``env``, ``cwd``, ``headers``, ``timeout``, ``config`` (then the
target is a server name) and :class:`~mcp_sync.Client` options such as ``request_timeout``.

``mcp_client`` is function-scoped, so a fixture of a wider scope cannot use it (pytest raises
``ScopeMismatch``). For one client shared by a module's or a session's tests, use
``mcp_client_module`` or ``mcp_client_session``: the same factory, whose clients are closed when
the module's (or the session's) last test is done::

    @pytest.fixture(scope="session")
    def server(mcp_client_session):
        return mcp_client_session(["python", "server.py"])
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .client import Client

__all__ = ["McpClientFactory", "mcp_client", "mcp_client_module", "mcp_client_session"]

_STDERR_KEY = pytest.StashKey[list[tuple[str, Callable[[], str]]]]()


class McpClientFactory:
    """The ``mcp_client`` fixture's value: call it to get a connected client."""

    def __init__(self, node: pytest.Item | pytest.Collector | Any) -> None:
        self._node = node
        self.clients: list[Client] = []

    def __call__(
        self,
        target: str | Sequence[str] | object,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        config: Any = None,
        **options: Any,
    ) -> Client:
        """Connect to ``target`` (a command, a URL, a server object, or a server name with
        ``config=``)."""
        from . import connect
        from .transports.stdio import StdioTransport

        if (
            config is not None
            or not isinstance(target, (str, Sequence))
            or (isinstance(target, str) and target.startswith(("http://", "https://")))
        ):
            client = connect(target, config=config, **options)
            self.clients.append(client)
            return client
        argv = shlex.split(target) if isinstance(target, str) else [str(a) for a in target]
        if not argv:
            raise ValueError("mcp_client() needs a command or a URL")
        transport = StdioTransport(argv[0], argv[1:], env=env, cwd=cwd)
        label = shlex.join(argv)
        self._node.stash.setdefault(_STDERR_KEY, []).append(
            (label, lambda: transport.stderr_tail)
        )
        client = connect(transport, **options)
        self.clients.append(client)
        return client

    def close(self) -> None:
        for client in self.clients:
            client.close()


@pytest.fixture
def mcp_client(request: pytest.FixtureRequest) -> Iterator[McpClientFactory]:
    """A factory of connected MCP clients, each closed when the test ends."""
    yield from _factory(request)


@pytest.fixture(scope="module")
def mcp_client_module(request: pytest.FixtureRequest) -> Iterator[McpClientFactory]:
    """``mcp_client`` for module-scoped fixtures: clients closed after the module's tests."""
    yield from _factory(request)


@pytest.fixture(scope="session")
def mcp_client_session(request: pytest.FixtureRequest) -> Iterator[McpClientFactory]:
    """``mcp_client`` for session-scoped fixtures: clients closed at the end of the run."""
    yield from _factory(request)


def _factory(request: pytest.FixtureRequest) -> Iterator[McpClientFactory]:
    # request.node is the test, the module or the session: where the stderr sources are kept
    factory = McpClientFactory(request.node)
    try:
        yield factory
    finally:
        factory.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        chain = item.listchain()  # the session, the module, ..., the test: each may hold some
        for label, tail in [source for node in chain for source in node.stash.get(_STDERR_KEY, [])]:
            try:
                text = tail()
            except Exception as exc:  # the report must not fail because of this
                text = f"(stderr unavailable: {exc})"
            if text:
                report.sections.append((f"mcp server stderr: {label}", text))
    return report
