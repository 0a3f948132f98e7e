"""A pytest plugin for testing MCP servers with plain pytest (no asyncio plugin needed).

Installed with mcp_sync and registered through the ``pytest11`` entry point, it gives the
``mcp_client`` fixture: a factory that connects a client to a server and closes it when the
test ends, pass or fail. When a test fails, the end of what the server wrote to stderr (64 KiB,
escaped by :func:`mcp_sync.terminal.safe`) is attached to the report (a section named
``mcp server stderr``)::

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

Recorded sessions (:mod:`mcp_sync.cassette`): a test marked
``@pytest.mark.mcp_cassette("name")`` gets its ``mcp_client`` clients through the cassette
``cassettes/name.jsonl`` next to the test's file (recorded on the first run, replayed after:
mode ``"once"``; the marker takes ``mode=``, ``match=`` and ``filter=`` too; a second client
of the same test gets ``name-2.jsonl``). ``pytest --mcp-record`` records them all anew (mode
``"all"``).
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .terminal import safe

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._client.targets import ConnectOptions, Target
    from .client import Client
    from .config import Config
    from .transports.base import Transport

__all__ = ["McpClientFactory", "mcp_client", "mcp_client_module", "mcp_client_session"]

_STDERR_KEY = pytest.StashKey[list[tuple[str, Callable[[], str]]]]()
#: How much of a server's stderr a failing test's report shows (its end).
_STDERR_TAIL_CHARS = 64 * 1024


class McpClientFactory:
    """The ``mcp_client`` fixture's value: call it to get a connected client."""

    def __init__(self, node: pytest.Item | pytest.Collector | Any) -> None:
        self._node = node
        self.clients: list[Client] = []
        self._cassettes = 0

    def __call__(
        self,
        target: Target,
        *,
        timeout: float | None = None,
        config: Config | str | os.PathLike[str] | Mapping[str, Any] | None = None,
        **options: Unpack[ConnectOptions],
    ) -> Client:
        """Connect to ``target`` as :func:`mcp_sync.connect` does (a command, a URL, a server
        object, or a server name with ``config=``); the client is closed with the fixture."""
        from ._client.connect import connect, resolve_target
        from ._client.targets import split_options

        stderr = _StderrTail(options.get("on_stderr"))
        options["on_stderr"] = stderr.write
        # Kept before connecting, so that a server failing to start shows its stderr too.
        self._node.stash.setdefault(_STDERR_KEY, []).append((_label(target), stderr.text))
        target = resolve_target(target, config)
        cassette = self._cassette(target, options)
        if cassette is None:
            client = connect(target, timeout=timeout, **options)
        else:  # (the cassette reaches the target: the client's options are what is left)
            client = connect(cassette, timeout=timeout, **split_options(options)[0])
        self.clients.append(client)
        return client

    def close(self) -> None:
        for client in self.clients:
            client.close()

    def _cassette(self, target: Target, options: ConnectOptions) -> Transport | None:
        """The cassette of the test's ``mcp_cassette`` marker, recording or replaying
        ``target`` reached with ``options``, if the test has one."""
        get_marker = getattr(self._node, "get_closest_marker", None)
        marker = get_marker("mcp_cassette") if get_marker is not None else None
        if marker is None:
            return None
        from ._client.targets import split_options, transport_for
        from .cassette import Cassette

        if not marker.args or not isinstance(marker.args[0], str):
            raise pytest.UsageError('mcp_cassette needs the cassette\'s name: mcp_cassette("name")')
        self._cassettes += 1
        name = marker.args[0] + (f"-{self._cassettes}" if self._cassettes > 1 else "")
        path = Path(str(self._node.path)).parent / "cassettes" / f"{name}.jsonl"
        settings = dict(marker.kwargs)
        if self._node.config.getoption("mcp_record", False):
            settings["mode"] = "all"
        client_options, reach = split_options(options)

        def make() -> Transport:
            return transport_for(target, roots=client_options.get("roots"), **reach)

        return Cassette(path, make, **settings)


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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--mcp-record",
        action="store_true",
        dest="mcp_record",
        help="record the mcp_cassette tests' sessions anew (mcp_sync.cassette mode 'all')",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_cassette(name, mode='once', match=None, filter=None): the mcp_client fixture's "
        "clients record to / replay from cassettes/<name>.jsonl next to the test",
    )


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
            if text:  # the server wrote it: escaped, as everything a person reads
                heading = f"mcp server stderr: {safe(label)}"
                report.sections.append((heading, safe(text, lines=True, limit=_STDERR_TAIL_CHARS)))
    return report
