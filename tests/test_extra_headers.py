"""``mcp_sync.extra_headers``: HTTP headers for the requests of one block of code, against the
official SDK's HTTP server (tests/servers/http_fixture_server.py, whose ``header`` tool answers
with the value of a request header it received)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import mcp_sync
from mcp_sync import BearerToken, Client, extra_headers
from mcp_sync.testing import MockServer
from tests.helpers.support import HttpServer, free_port

pytest.importorskip("mcp.server.mcpserver")
pytestmark = pytest.mark.timeout(60)

SERVER = str(Path(__file__).resolve().parent / "servers" / "http_fixture_server.py")


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServer]:
    port = free_port()
    with HttpServer([sys.executable, SERVER, "streamable-http", str(port)], port) as server:
        yield server


@pytest.fixture(scope="module")
def sse_server() -> Iterator[HttpServer]:
    port = free_port()
    with HttpServer([sys.executable, SERVER, "sse", str(port)], port) as server:
        yield server


def seen(client: Any, name: str) -> str:
    """The value of request header ``name`` as the server received it on a tools/call."""
    return str(client.call_tool("header", {"name": name}).text)


def test_the_calls_inside_the_block_carry_the_headers_and_no_others(
    http_server: HttpServer,
) -> None:
    with mcp_sync.connect(http_server.url(), protocol="handshake") as client:
        assert seen(client, "x-tenant") == ""
        with extra_headers({"X-Tenant": "acme", "X-Request-Id": "r1"}):
            assert seen(client, "x-tenant") == "acme"
            assert seen(client, "x-request-id") == "r1"
            with extra_headers({"x-tenant": "globex"}):  # inner wins, any letter case
                assert seen(client, "x-tenant") == "globex"
                assert seen(client, "x-request-id") == "r1"
            assert seen(client, "x-tenant") == "acme"
        assert seen(client, "x-tenant") == ""


def test_over_the_legacy_sse_transport_too(sse_server: HttpServer) -> None:
    with mcp_sync.connect(mcp_sync.SseTransport(sse_server.url("/sse"))) as client:
        with extra_headers({"X-Tenant": "acme"}):
            assert seen(client, "x-tenant") == "acme"
        assert seen(client, "x-tenant") == ""


def test_each_thread_sends_its_own_on_one_shared_client(http_server: HttpServer) -> None:
    """Sixteen threads share a client, each in its own block: no call carries another
    thread's headers (they follow the code, not the client)."""
    with mcp_sync.connect(http_server.url(), protocol="handshake") as client:
        start = threading.Barrier(16)

        def worker(n: int) -> list[str]:
            start.wait()
            with extra_headers({"X-Tenant": f"t{n}"}):
                return [seen(client, "x-tenant") for _ in range(10)]

        with ThreadPoolExecutor(16) as pool:
            results = list(pool.map(worker, range(16)))
        assert results == [[f"t{n}"] * 10 for n in range(16)]
        assert seen(client, "x-tenant") == ""


def test_they_override_the_transports_headers_not_the_auth_providers(
    http_server: HttpServer,
) -> None:
    transport = mcp_sync.StreamableHttpTransport(
        http_server.url(), headers={"X-Tenant": "static"}, auth=BearerToken("the-real-token")
    )
    with Client(protocol="handshake").connect(transport) as client:
        assert seen(client, "x-tenant") == "static"
        with extra_headers({"X-Tenant": "acme", "Authorization": "Bearer forged"}):
            assert seen(client, "x-tenant") == "acme"
            assert seen(client, "authorization") == "Bearer the-real-token"


def test_without_an_auth_provider_an_authorization_is_for_these_calls_alone(
    http_server: HttpServer,
) -> None:
    with mcp_sync.connect(http_server.url(), protocol="handshake") as client:
        with extra_headers({"Authorization": "Bearer user-42"}):
            assert seen(client, "authorization") == "Bearer user-42"
        assert seen(client, "authorization") == ""


def test_a_value_that_is_not_a_str_is_refused_when_the_block_starts() -> None:
    """(The other refusals are those of every surface that takes headers:
    tests/reliability/test_header_validation.py.)"""
    refused = pytest.raises(ValueError, match="'X-Num' .* its value must be a str, not int")
    with refused, extra_headers({"X-Num": 3}):  # type: ignore[dict-item]
        pytest.fail("the block must not run")


def test_cached_results_are_kept_apart_per_set_of_extra_headers() -> None:
    """A "private" result cached for one tenant's headers is not served to another's
    (2026-07-28 result cache, scripted server: it counts the requests it got)."""
    server = MockServer(eras=("stateless",), capabilities={"tools": {}})
    answered: list[int] = []

    def tools(params: Any, ctx: Any) -> dict[str, Any]:
        answered.append(1)
        return {
            "resultType": "complete",
            "tools": [{"name": f"t{len(answered)}", "inputSchema": {}}],
            "ttlMs": 60_000,
            "cacheScope": "private",
        }

    server.handle("tools/list", tools)
    client = server.connect(Client(cache=True))
    try:
        with extra_headers({"X-Tenant": "a"}):
            assert [t.name for t in client.list_tools()] == ["t1"]
            assert [t.name for t in client.list_tools()] == ["t1"]  # a's, from the cache
        with extra_headers({"X-Tenant": "b"}):
            assert [t.name for t in client.list_tools()] == ["t2"]  # not a's
        with extra_headers({"X-Tenant": "a"}):
            assert [t.name for t in client.list_tools()] == ["t1"]
        assert len(answered) == 2
    finally:
        client.close()


def test_a_langchain_interceptor_sets_headers_for_one_call(http_server: HttpServer) -> None:
    pytest.importorskip("langchain_core")
    from mcp_sync.integrations.langchain import McpToolCall, langchain_tools

    def tenant(call: McpToolCall, call_next: Any) -> Any:
        call.headers["X-Tenant"] = f"for-{call.arguments['name']}"
        return call_next(call)

    with mcp_sync.connect(http_server.url(), protocol="handshake") as client:
        (tool,) = [t for t in langchain_tools(client, interceptors=[tenant]) if t.name == "header"]
        assert tool.invoke({"name": "x-tenant"}) == [{"type": "text", "text": "for-x-tenant"}]
        assert seen(client, "x-tenant") == ""  # that call alone
