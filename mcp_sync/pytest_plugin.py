"""A pytest plugin for testing MCP servers with plain pytest (no asyncio plugin needed).

Installed with mcp_sync and registered through the ``pytest11`` entry point, it gives the
``mcp_client`` fixture: a factory that connects a client to a server and closes it when the
test ends, pass or fail. When a test fails, what the server wrote to stderr is attached to the
report (a section named ``mcp server stderr``)::

    def test_add(mcp_client):
        client = mcp_client(["python", "server.py"])        # or a URL
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}

The factory takes what :func:`mcp_sync.connect` takes: ``env``, ``cwd``, ``headers``,
``timeout``, ``config`` (then the target is a server name) and :class:`~mcp_sync.Client`
options such as ``request_timeout``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .client import Client

__all__ = ["McpClientFactory", "mcp_client"]

_STDERR_KEY = pytest.StashKey[list[tuple[str, Callable[[], str]]]]()


class McpClientFactory:
    """The ``mcp_client`` fixture's value: call it to get a connected client."""

    def __init__(self, node: pytest.Item | Any) -> None:
        self._node = node
        self.clients: list[Client] = []

    def __call__(
        self,
        target: str | Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        config: Any = None,
        **options: Any,
    ) -> Client:
        """Connect to ``target`` (a command, a URL, or a server name with ``config=``)."""
        from . import connect
        from .transports.stdio import StdioTransport

        if config is not None or (
            isinstance(target, str) and target.startswith(("http://", "https://"))
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
        for label, tail in item.stash.get(_STDERR_KEY, []):
            try:
                text = tail()
            except Exception as exc:  # the report must not fail because of this
                text = f"(stderr unavailable: {exc})"
            if text:
                report.sections.append((f"mcp server stderr: {label}", text))
    return report
