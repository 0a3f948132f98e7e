"""A pytest plugin for testing MCP servers with plain pytest (no asyncio plugin needed).

Installed with mcp_sync and registered through the ``pytest11`` entry point, it gives the
``mcp_client`` fixture: a factory that connects a client to a server and closes it when the
test ends, pass or fail. When a test fails, what the server wrote to stderr is attached to the
report (a section named ``mcp server stderr``)::

    def test_add(mcp_client):
        client = mcp_client(["python", "server.py"])        # or a URL
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}

The factory takes what :func:`mcp_sync.connect` takes, and connects the same way: a command,
a URL, a Python server object (served in-process), ``env``, ``cwd``, ``on_stderr``,
``headers``, ``timeout``, ``config`` (then the target is a server name) and
:class:`~mcp_sync.Client` options such as ``request_timeout``.

``mcp_client`` is function-scoped, so a fixture of a wider scope cannot use it (pytest raises
``ScopeMismatch``). For one client shared by a module's or a session's tests, use
``mcp_client_module`` or ``mcp_client_session``: the same factory, whose clients are closed when
the module's (or the session's) last test is done::

    @pytest.fixture(scope="session")
    def server(mcp_client_session):
        return mcp_client_session(["python", "server.py"])
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._targets import ClientOptions, Target
    from .auth import AuthProvider
    from .client import Client
    from .config import Config
    from .transports._http.options import ClientCert, Verify
    from .transports.sandbox import Sandbox

__all__ = ["McpClientFactory", "mcp_client", "mcp_client_module", "mcp_client_session"]

_STDERR_KEY = pytest.StashKey[list[tuple[str, Callable[[], str]]]]()
#: How much of a server's stderr a failing test's report shows (its end).
_STDERR_TAIL_CHARS = 64 * 1024


class McpClientFactory:
    """The ``mcp_client`` fixture's value: call it to get a connected client."""

    def __init__(self, node: pytest.Item | pytest.Collector | Any) -> None:
        self._node = node
        self.clients: list[Client] = []

    def __call__(
        self,
        target: Target,
        *,
        headers: Mapping[str, str] | None = None,
        auth: AuthProvider | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[str], None] | None = None,
        timeout: float | None = None,
        config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        sandbox: Sandbox | bool | None = None,
        verify: Verify | None = None,
        cert: ClientCert | None = None,
        proxy: str | None = None,
        **client_options: Unpack[ClientOptions],
    ) -> Client:
        """Connect to ``target`` as :func:`mcp_sync.connect` does (a command, a URL, a server
        object, or a server name with ``config=``); the client is closed with the fixture."""
        from ._connect import connect

        stderr = _StderrTail(on_stderr)
        # Kept before connecting, so that a server failing to start shows its stderr too.
        self._node.stash.setdefault(_STDERR_KEY, []).append((_label(target), stderr.text))
        client = connect(
            target,
            headers=headers,
            auth=auth,
            env=env,
            cwd=cwd,
            on_stderr=stderr.write,
            timeout=timeout,
            config=config,
            sandbox=sandbox,
            verify=verify,
            cert=cert,
            proxy=proxy,
            **client_options,
        )
        self.clients.append(client)
        return client

    def close(self) -> None:
        for client in self.clients:
            client.close()


class _StderrTail:
    """The end of what a server wrote to stderr, also passed on to the test's ``on_stderr``."""

    def __init__(self, listener: Callable[[str], None] | None) -> None:
        self._listener = listener
        self._lock = threading.Lock()
        self._tail = ""

    def write(self, text: str) -> None:
        with self._lock:
            self._tail = (self._tail + text)[-_STDERR_TAIL_CHARS:]
        if self._listener is not None:
            self._listener(text)

    def text(self) -> str:
        with self._lock:
            return self._tail


def _label(target: object) -> str:
    """The report heading's name for a target: the command, URL or server name as given."""
    if isinstance(target, str):
        return target
    if isinstance(target, Sequence):
        return shlex.join(str(arg) for arg in target)
    name = getattr(target, "name", None)
    return name if isinstance(name, str) else type(target).__name__


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
