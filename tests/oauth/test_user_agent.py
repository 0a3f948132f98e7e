"""Every HTTP request mcp_sync makes names it: ``User-Agent: mcp-sync/<version>`` followed by
requests' own (as httpx-based clients send both), unless the user named an agent. Walked over
every kind of request: Streamable HTTP's POSTs, GET stream and DELETE, the legacy HTTP+SSE
transport's GET and POSTs, and the OAuth requests (metadata, token).

A real server: fastmcp's, with its authorization server and the client credentials grant
(oauth_fastmcp_server), behind an ASGI layer that only writes down each request's
``User-Agent`` (what a server's access log would show).
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.helpers.support import FASTMCP_MISSING

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)

import mcp_sync
from mcp_sync import __version__
from mcp_sync.oauth import ClientCredentialsProvider
from tests.helpers.oauth_fastmcp_server import MachineClient, serve

pytestmark = pytest.mark.timeout(60)

OURS = f"mcp-sync/{__version__} python-requests/{requests.__version__}"


class Agents:
    """ASGI middleware: writes down ``(method, path, User-Agent)`` of each HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, str, str | None]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            agent = headers.get(b"user-agent")
            self.seen.append(
                (scope["method"], scope["path"], agent.decode() if agent is not None else None)
            )
        await self.app(scope, receive, send)


def recorded(transport: str, **provider: Any) -> Any:
    agents: list[Agents] = []

    def wrap(app: Any, _server: Any) -> Agents:
        agents.append(Agents(app))
        return agents[0]

    machines = {"machine": MachineClient(secret="machine-secret")}
    return serve(machine_clients=machines, transport=transport, wrap=wrap), agents


def kinds(seen: list[tuple[str, str, str | None]]) -> set[tuple[str, str]]:
    """Which kinds of request were made: method and the first part of the path."""
    return {(method, "/" + path.strip("/").split("/")[0]) for method, path, _ in seen}


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_every_request_names_mcp_sync_and_requests(transport: str) -> None:
    """Before, each one said only ``python-requests/...``."""
    served, agents = recorded(transport)
    with served as server:
        auth = ClientCredentialsProvider(server.url, "machine", client_secret="machine-secret")
        with mcp_sync.connect(server.url, auth=auth, protocol="handshake") as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    seen = agents[0].seen
    made = kinds(seen)
    assert {("GET", "/.well-known"), ("POST", "/token")} <= made  # the OAuth requests
    if transport == "http":
        assert {("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp")} <= made
    else:
        assert {("GET", "/sse"), ("POST", "/messages")} <= made
    assert {agent for _, _, agent in seen} == {OURS}, seen


def test_an_agent_the_user_names_is_sent_instead() -> None:
    """One named in ``headers=`` goes on every request to the MCP server, one set on the
    provider's session on every OAuth request."""
    served, agents = recorded("http")
    with served as server:
        session = requests.Session()
        session.headers["User-Agent"] = "their-oauth/2"
        auth = ClientCredentialsProvider(
            server.url, "machine", client_secret="machine-secret", session=session
        )
        headers = {"user-agent": "their-app/1"}
        with mcp_sync.connect(server.url, auth=auth, headers=headers, protocol="handshake") as c:
            assert c.call_tool("add", {"a": 1, "b": 2}).text == "3"
    seen = agents[0].seen
    assert {agent for _, path, agent in seen if path == "/mcp"} == {"their-app/1"}, seen
    assert {agent for _, path, agent in seen if path != "/mcp"} == {"their-oauth/2"}, seen


def test_a_session_of_the_users_that_names_no_agent_still_sends_mcp_syncs() -> None:
    served, agents = recorded("http")
    with served as server:
        auth = ClientCredentialsProvider(server.url, "machine", client_secret="machine-secret")
        transport = mcp_sync.StreamableHttpTransport(
            server.url, auth=auth, session=requests.Session()
        )
        with mcp_sync.Client(protocol="handshake").connect(transport) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    seen = agents[0].seen
    assert ("POST", "/mcp") in kinds(seen)
    assert {agent for _, _, agent in seen} == {OURS}, seen


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_an_applications_suffix_follows_ours_on_every_request_to_the_server(transport: str) -> None:
    """``user_agent_suffix=`` names the application after mcp-sync on every request to the MCP
    server: Streamable HTTP's POSTs, GET stream and DELETE, HTTP+SSE's GET and POSTs. An OAuth
    provider's requests carry its own session's agent: ``tls_session(user_agent_suffix=)``."""
    served, agents = recorded(transport)
    with served as server:
        session = mcp_sync.transports.tls_session(user_agent_suffix="my-app/1.2")
        auth = ClientCredentialsProvider(
            server.url, "machine", client_secret="machine-secret", session=session
        )
        with mcp_sync.connect(
            server.url, auth=auth, protocol="handshake", user_agent_suffix="my-app/1.2"
        ) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    seen = agents[0].seen
    assert len(kinds(seen)) >= 4, seen  # the MCP requests and the OAuth ones
    assert {agent for _, _, agent in seen} == {f"{OURS} my-app/1.2"}, seen


def test_the_suffix_follows_ours_through_a_session_of_the_users() -> None:
    served, agents = recorded("http")
    with served as server:
        auth = ClientCredentialsProvider(server.url, "machine", client_secret="machine-secret")
        transport = mcp_sync.StreamableHttpTransport(
            server.url, auth=auth, session=requests.Session(), user_agent_suffix="my-app/1.2"
        )
        with mcp_sync.Client(protocol="handshake").connect(transport) as client:
            assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
    seen = agents[0].seen
    assert {("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp")} <= kinds(seen)
    assert {agent for _, path, agent in seen if path == "/mcp"} == {f"{OURS} my-app/1.2"}, seen


@pytest.mark.parametrize("suffix", ["my-app/1.2\r\nX-Injected: 1", "caf\u00e9/\u2603", 12])
def test_a_suffix_that_cannot_be_sent_is_refused_naming_the_option(suffix: Any) -> None:
    with pytest.raises((ValueError, TypeError), match="user_agent_suffix"):
        mcp_sync.StreamableHttpTransport("http://127.0.0.1:9/mcp", user_agent_suffix=suffix)
    with pytest.raises((ValueError, TypeError), match="user_agent_suffix"):
        mcp_sync.transports.tls_session(user_agent_suffix=suffix)
