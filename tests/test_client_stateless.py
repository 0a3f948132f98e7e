"""Protocol 2026-07-28 through the client, against a scripted MockServer peer."""

from __future__ import annotations

import pytest

import mcp_sync
from mcp_sync import (
    Client,
    MissingClientCapability,
    NotSupportedInEra,
    ProtocolError,
    RpcError,
    UnsupportedProtocolVersion,
)
from mcp_sync.testing import NO_REPLY, MockServer
from mcp_sync.types import Root
from tests.helpers.support import wait_until

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SUB = "io.modelcontextprotocol/subscriptionId"
TEXT = {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}


def stateless_server(**kwargs):
    kwargs.setdefault(
        "capabilities", {"tools": {}, "resources": {"subscribe": True}, "prompts": {}}
    )
    return MockServer(eras=("stateless",), instructions="hi", **kwargs)


def serve_listen(server):
    """Answer subscriptions/listen as a 2026 server on a stream does: acknowledge, keep it open.
    Returns {listen request id: its filters}, in arrival order."""
    listens = {}

    def listen(params, ctx):
        listens[ctx.request_id] = params["notifications"]
        server.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUB: ctx.request_id}, "notifications": params["notifications"]},
        )
        return NO_REPLY

    server.handle("subscriptions/listen", listen)
    return listens


def test_auto_probes_with_discover_and_goes_stateless():
    server = stateless_server()
    client = server.connect(Client("me", "1.0"))
    try:
        probe = server.received[0]
        assert probe["method"] == "server/discover"
        assert probe["params"]["_meta"] == {
            PV: "2026-07-28",
            CAPS: {},
            INFO: {"name": "me", "version": "1.0"},
        }
        assert (client.era, client.protocol_version) == ("stateless", "2026-07-28")
        assert client.server_info.name == "mock-server"
        assert client.instructions == "hi"
        assert "initialize" not in server.methods()
        assert client.discover().supported_versions == ["2026-07-28"]
    finally:
        client.close()


def test_auto_falls_back_to_initialize_for_a_legacy_server():
    server = MockServer()  # answers server/discover with -32601, as server-everything does
    client = server.connect(Client())
    try:
        assert server.methods()[:2] == ["server/discover", "initialize"]
        assert client.era == "handshake"
        with pytest.raises(NotSupportedInEra):
            client.discover()
    finally:
        client.close()


def test_a_silent_server_falls_back_after_the_probe_timeout():
    server = MockServer()
    server.handle("server/discover", lambda p, c: NO_REPLY)
    client = server.connect(Client(probe_timeout=0.1))
    try:
        assert client.era == "handshake"
    finally:
        client.close()


def test_the_versions_name_the_newest_the_client_speaks_first():
    assert mcp_sync.LATEST == "2026-07-28" == mcp_sync.SUPPORTED[0]
    assert "2024-11-05" in mcp_sync.SUPPORTED


def test_the_old_name_legacy_still_means_handshake_with_a_deprecation_warning():
    server = MockServer(eras=("handshake", "stateless"))
    with pytest.warns(DeprecationWarning, match='protocol="handshake"'):
        client = Client(protocol="legacy")
    with server.connect(client):
        assert server.methods()[0] == "initialize" and client.era == "handshake"


def test_handshake_skips_the_probe_and_a_pinned_version_pins_it():
    server = MockServer(eras=("handshake", "stateless"))
    client = server.connect(Client(protocol="handshake"))
    try:
        assert server.methods()[0] == "initialize" and client.era == "handshake"
    finally:
        client.close()
    server = MockServer(eras=("handshake",))
    with pytest.raises(RpcError) as info:
        server.connect(Client(protocol="2026-07-28"))
    assert info.value.code == -32601  # pinned: no fallback


def test_unsupported_version_error_retries_with_an_advertised_version(monkeypatch):
    server = stateless_server(protocol_version="2026-07-28")
    offered = []

    def discover(params, ctx):
        offered.append(params["_meta"][PV])
        if params["_meta"][PV] != "2026-07-28":
            raise RpcError(
                -32022,
                "Unsupported protocol version",
                {"supported": ["2026-07-28"], "requested": params["_meta"][PV]},
            )
        return server._discover(params, ctx)

    server.handle("server/discover", discover)
    monkeypatch.setattr(
        "mcp_sync.protocol.versions.STATELESS_VERSIONS", ("2027-01-01", "2026-07-28")
    )
    monkeypatch.setattr(
        "mcp_sync.protocol.stateless.STATELESS_VERSIONS", ("2027-01-01", "2026-07-28")
    )
    client = server.connect(Client())
    try:
        assert offered == ["2027-01-01", "2026-07-28"]
        assert client.protocol_version == "2026-07-28"
    finally:
        client.close()


def test_unsupported_version_with_nothing_shared_is_an_error_not_a_fallback():
    server = MockServer(eras=("handshake", "stateless"))
    server.handle(
        "server/discover",
        lambda p, c: (_ for _ in ()).throw(
            RpcError(-32022, "Unsupported", {"supported": ["2099-01-01"]})
        ),
    )
    with pytest.raises(UnsupportedProtocolVersion):
        server.connect(Client())
    assert "initialize" not in server.methods()


def test_every_request_carries_meta_with_capabilities_only_where_needed():
    server = stateless_server()
    server.handle("tools/list", lambda p, c: {"tools": []})
    server.handle("tools/call", lambda p, c: TEXT)
    client = Client("me", "1.0", roots=["/tmp"])  # a name only: never opened
    client.on_sampling(
        lambda p: {"role": "assistant", "model": "m", "content": {"type": "text", "text": ""}}
    )
    server.connect(client)
    try:
        client.list_tools()
        client.set_logging_level("debug")  # kept: sent in _meta, no request
        client.call_tool("x", {"a": 1})
        listed = server.wait_for("tools/list")["params"]["_meta"]
        called = server.wait_for("tools/call")["params"]["_meta"]
        assert listed[CAPS] == {} and "io.modelcontextprotocol/logLevel" not in listed
        assert called[CAPS] == {"roots": {}, "sampling": {}}
        assert called["io.modelcontextprotocol/logLevel"] == "debug"
        assert called[PV] == "2026-07-28" and called[INFO]["name"] == "me"
        assert "logging/setLevel" not in server.methods()
        client.ping()
        assert server.methods().count("server/discover") == 2  # no ping in 2026
        client.set_roots(["/srv"])
        client.ping()
        assert "notifications/roots/list_changed" not in server.methods()
    finally:
        client.close()


def test_input_required_rounds_are_fulfilled_by_the_handlers():
    server = stateless_server()
    rounds = []

    def call(params, ctx):
        rounds.append(params)
        if "inputResponses" not in params:
            return {
                "resultType": "input_required",
                "requestState": "s1",
                "inputRequests": {
                    "who": {
                        "method": "elicitation/create",
                        "params": {
                            "message": "name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "age": {"type": "integer", "default": 7},
                                },
                            },
                        },
                    },
                    "llm": {
                        "method": "sampling/createMessage",
                        "params": {
                            "messages": [
                                {"role": "user", "content": {"type": "text", "text": "q"}}
                            ],
                            "maxTokens": 5,
                        },
                    },
                    "roots": {"method": "roots/list"},
                },
            }
        if params.get("requestState") == "s1":
            return {"resultType": "input_required", "requestState": "s2"}  # again, no requests
        return {
            "resultType": "complete",
            "content": [{"type": "text", "text": "done"}],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "renamed", "version": "2"}},
        }

    server.handle("tools/call", call)
    client = Client(roots=["file:///r"])
    client.on_elicitation(lambda p: {"action": "accept", "content": {"name": "Ada"}})
    client.on_sampling(
        lambda p: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "a"}}
    )
    server.connect(client)
    try:
        assert client.call_tool("t", {"x": 1}).text == "done"
        assert len(rounds) == 3
        ids = [m["id"] for m in server.received if m.get("method") == "tools/call"]
        assert len(set(ids)) == 3  # every retry is a new request id
        second = rounds[1]
        assert second["arguments"] == {"x": 1} and second["requestState"] == "s1"
        assert second["inputResponses"]["who"] == {
            "action": "accept",
            "content": {"name": "Ada", "age": 7},
        }
        assert second["inputResponses"]["llm"]["content"]["text"] == "a"
        assert second["inputResponses"]["roots"] == {"roots": [{"uri": "file:///r"}]}
        assert rounds[2]["requestState"] == "s2" and rounds[2]["inputResponses"] == {}
        assert client.server_info.name == "renamed"
    finally:
        client.close()


def test_request_state_is_omitted_when_the_server_gave_none():
    server = stateless_server()
    rounds = []

    def call(params, ctx):
        rounds.append(params)
        if len(rounds) == 1:
            return {
                "resultType": "input_required",
                "inputRequests": {"r": {"method": "roots/list"}},
            }
        return TEXT

    server.handle("tools/call", call)
    client = server.connect(Client(roots=["file:///r"]))
    try:
        client.call_tool("t")
        assert "requestState" not in rounds[1]
    finally:
        client.close()


def test_a_missing_handler_names_the_capability_and_rounds_are_capped():
    server = stateless_server()
    server.handle(
        "tools/call",
        lambda p, c: {
            "resultType": "input_required",
            "inputRequests": {
                "x": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1},
                }
            },
        },
    )
    server.handle(
        "prompts/get", lambda p, c: {"resultType": "input_required", "requestState": "again"}
    )
    server.handle("resources/read", lambda p, c: {"resultType": "weird", "contents": []})
    client = server.connect(Client(max_input_rounds=3))
    try:
        with pytest.raises(MissingClientCapability, match="sampling"):
            client.call_tool("t")
        with pytest.raises(ProtocolError, match="3 rounds"):
            client.get_prompt("p")
        assert server.methods().count("prompts/get") == 4
        with pytest.raises(ProtocolError, match="resultType"):
            client.read_resource("x://y")
    finally:
        client.close()


def test_server_missing_capability_error_is_typed():
    server = stateless_server()
    server.handle(
        "tools/call",
        lambda p, c: (_ for _ in ()).throw(
            RpcError(-32021, "need elicitation", {"requiredCapabilities": {"elicitation": {}}})
        ),
    )
    client = server.connect(Client())
    try:
        with pytest.raises(MissingClientCapability) as info:
            client.call_tool("t")
        assert info.value.required_capabilities == {"elicitation": {}}
    finally:
        client.close()


def test_listen_over_a_stream_transport_demultiplexes_by_subscription_id():
    server = stateless_server()
    listens = serve_listen(server)
    client = server.connect(Client())
    try:
        seen, other = [], []
        sub = client.listen(
            tools_list_changed=True, resource_subscriptions=["file:///a"], callback=seen.append
        )
        ((listen_id, filters),) = listens.items()
        assert filters == {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}
        updates = client.subscribe_resource("file:///b", other.append)
        server.notify("notifications/tools/list_changed", {"_meta": {SUB: listen_id}})
        server.notify(
            "notifications/resources/updated", {"_meta": {SUB: listen_id}, "uri": "file:///a"}
        )
        second_id = max(listens)
        server.notify(
            "notifications/resources/updated", {"_meta": {SUB: second_id}, "uri": "file:///b"}
        )
        wait_until(lambda: len(seen) == 2 and other)
        assert [n.method for n in seen] == [
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        ]
        assert other == ["file:///b"]
        sub.cancel()
        cancel = server.wait_for("notifications/cancelled")
        assert cancel["params"]["requestId"] == listen_id
        updates.cancel()
    finally:
        client.close()


def test_listen_in_the_legacy_era_uses_subscribe_and_list_changed():
    server = MockServer(
        capabilities={"tools": {"listChanged": True}, "resources": {"subscribe": True}}
    )
    server.handle("resources/subscribe", lambda p, c: {})
    server.handle("resources/unsubscribe", lambda p, c: {})
    client = server.connect(Client())
    try:
        seen = []
        sub = client.listen(
            tools_list_changed=True, resource_subscriptions=["file:///a"], callback=seen.append
        )
        assert server.wait_for("resources/subscribe")["params"] == {"uri": "file:///a"}
        server.notify("notifications/tools/list_changed")
        server.notify("notifications/resources/updated", {"uri": "file:///a"})
        wait_until(lambda: len(seen) == 2)
        assert {n.method for n in seen} == {
            "notifications/tools/list_changed",
            "notifications/resources/updated",
        }
        sub.cancel()
        server.wait_for("resources/unsubscribe")
    finally:
        client.close()


@pytest.mark.parametrize("mismatches", [1, 2])
def test_a_header_mismatch_lists_the_tools_again_and_retries_once(mismatches):
    server = stateless_server()
    tool = {"name": "echo", "inputSchema": {"type": "object"}}
    server.handle("tools/list", lambda p, c: {"tools": [tool]})
    left = [mismatches]

    def call(params, ctx):
        if left[0]:
            left[0] -= 1
            raise RpcError(-32020, "header mismatch")
        return {"content": [{"type": "text", "text": "ok"}]}

    server.handle("tools/call", call)
    client = server.connect(Client())
    try:
        if mismatches == 1:
            assert client.call_tool("echo", {}).text == "ok"
        else:
            with pytest.raises(RpcError) as info:
                client.call_tool("echo", {})
            assert info.value.code == -32020  # once, not forever
        calls = [m for m in server.methods() if m in ("tools/call", "tools/list")]
        assert calls == ["tools/call", "tools/list", "tools/call"]
    finally:
        client.close()


def test_cancelling_a_stateless_request_over_a_stream_sends_cancelled():
    server = stateless_server()
    server.handle("tools/call", lambda p, c: NO_REPLY)
    client = server.connect(Client())
    try:
        with pytest.raises(TimeoutError):
            client.call_tool("slow", timeout=0.05)
        cancel = server.wait_for("notifications/cancelled")
        assert cancel["params"]["reason"] == "Request timed out"
    finally:
        client.close()


def test_a_stateless_server_too_slow_for_the_probe_is_still_found():
    """It misses the probe window, refuses initialize with -32022, then answers the probe."""
    server = stateless_server()
    probe = {}

    def discover(params, ctx):
        probe["ctx"] = ctx
        return NO_REPLY

    def initialize(params, ctx):
        probe["ctx"].reply(server._discover({}, ctx))  # the late answer is on its way...
        raise RpcError(-32022, "serving 2026-07-28; no initialize")

    server.handle("server/discover", discover)
    server.handle("initialize", initialize)
    client = server.connect(Client(probe_timeout=0.05))
    try:
        assert client.era == "stateless"
        assert "notifications/initialized" not in server.methods()
    finally:
        client.close()


def test_opt_in_cache_honours_ttl_and_list_changed():
    server = stateless_server()
    calls = []

    def tools(params, ctx):
        calls.append(params.get("cursor"))
        return {
            "resultType": "complete",
            "tools": [{"name": f"t{len(calls)}", "inputSchema": {}}],
            "ttlMs": 60_000,
            "cacheScope": "private",
        }

    server.handle("tools/list", tools)
    server.handle(
        "resources/read",
        lambda p, c: {
            "resultType": "complete",
            "ttlMs": 0,
            "contents": [{"uri": p["uri"], "text": "x"}],
        },
    )
    cached = server.connect(Client(cache=True))
    try:
        assert [t.name for t in cached.list_tools()] == ["t1"]
        assert [t.name for t in cached.list_tools()] == ["t1"]  # from the cache
        assert len(calls) == 1
        cached.read_resource("x://a")
        cached.read_resource("x://a")
        assert server.methods().count("resources/read") == 2  # ttlMs 0: never kept
        server.notify("notifications/tools/list_changed")
        wait_until(lambda: [t.name for t in cached.list_tools()] == ["t2"])
    finally:
        cached.close()
    uncached = MockServer(eras=("stateless",), capabilities={"tools": {}})
    uncached.handle("tools/list", tools)
    client = uncached.connect(Client())
    try:
        client.list_tools()
        client.list_tools()
        assert uncached.methods().count("tools/list") == 2  # off by default
    finally:
        client.close()


def test_a_dropped_listen_stream_is_listened_again():
    from mcp_sync import TransportError

    server = stateless_server()
    listens = serve_listen(server)
    client = server.connect(Client())
    try:
        seen = []
        sub = client.listen(tools_list_changed=True, callback=seen.append)
        # the HTTP transport reports a dropped response stream as an error for that request
        server.client_transport.emit_error(
            TransportError("response stream failed: reset", request_id=next(iter(listens)))
        )
        wait_until(lambda: len(listens) == 2)
        second = list(listens)[1]
        server.notify("notifications/tools/list_changed", {"_meta": {SUB: second}})
        wait_until(lambda: seen)
        sub.cancel()
        cancel = server.wait_for("notifications/cancelled")
        assert cancel["params"]["requestId"] == second
    finally:
        client.close()


def _record_options(transport):
    """Record ``(method, options)`` of every message the client hands ``transport`` (an
    answer to a server request: method None)."""
    sent = []
    send = transport.send

    def spy(message, **kwargs):
        sent.append((message.get("method"), kwargs.get("options")))
        return send(message, **kwargs)

    transport.send = spy
    return sent


def test_each_message_tells_the_transport_its_version_and_a_tool_call_its_param_headers():
    """What a transport does differently for a message comes with the message (options), not
    from reading params._meta or calling back into the client: every stateless-era message
    carries its version, a tools/call of a tool with x-mcp-header its Mcp-Param-* headers."""
    server = stateless_server()
    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    server.handle(
        "tools/list",
        lambda p, c: {
            "tools": [
                {"name": "weather", "inputSchema": schema},
                {"name": "plain", "inputSchema": {"type": "object"}},
            ]
        },
    )
    server.handle("tools/call", lambda p, c: TEXT)
    sent = _record_options(server.client_transport)
    client = server.connect(Client())
    try:
        client.list_tools()
        client.call_tool("weather", {"region": "eu-west"})
        client.call_tool("plain", {})
        client.notify("notifications/custom")
        assert [method for method, _ in sent] == [
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "notifications/custom",
        ]
        assert all(o is not None and o.version == "2026-07-28" and o.standalone for _, o in sent)
        assert dict(sent[2][1].headers) == {"Mcp-Param-Region": "eu-west"}
        assert [dict(o.headers) for _, o in sent[3:]] == [{}, {}]
        assert not hasattr(server.client_transport, "header_provider")  # no callback up
    finally:
        client.close()


def test_the_handshake_tells_the_transport_which_message_opens_the_session_and_its_version():
    """``initialize`` goes at no version; every message after it, at the negotiated one: the
    initialized notification, requests, notifications and answers to the server's requests
    (HTTP's ``MCP-Protocol-Version`` header comes from there)."""
    server = MockServer(protocol_version="2025-06-18")
    sent = _record_options(server.client_transport)
    client = server.connect(Client(protocol="handshake", roots=[Root(uri="file:///tmp")]))
    try:
        client.ping()
        client.notify("notifications/custom")
        assert server.request("roots/list")["roots"][0]["uri"] == "file:///tmp"
        opened = [method for method, o in sent if o is not None and o.opens_session]
        assert opened == ["notifications/initialized"]
        (first, first_options), *later = sent
        assert first == "initialize" and first_options.version is None
        assert [method for method, _ in later] == [
            "notifications/initialized",
            "ping",
            "notifications/custom",
            None,  # the answer to roots/list
        ]
        assert all(o.version == "2025-06-18" and not o.standalone for _, o in later), later
    finally:
        client.close()


@pytest.mark.parametrize("protocol", ["handshake", "auto"])
def test_a_request_asking_for_progress_tells_the_transport_so(protocol):
    """A transport learns that an answer may stream progress for long from the options (HTTP
    reads such an answer on a worker), never by looking for ``_meta.progressToken``."""
    server = MockServer(eras=("handshake", "stateless"))
    server.handle("tools/list", lambda p, c: {"tools": []})
    sent = _record_options(server.client_transport)
    client = server.connect(Client(protocol=protocol))
    try:
        client.list_tools(on_progress=lambda progress: None)
        client.list_tools()
        listed = [o for method, o in sent if method == "tools/list"]
        assert listed[0] is not None and listed[0].streams_progress
        assert listed[1] is None or not listed[1].streams_progress
        era = ("2025-11-25", False) if protocol == "handshake" else ("2026-07-28", True)
        # the era's options, with the progress flag
        assert (listed[0].version, listed[0].standalone) == era
    finally:
        client.close()


def test_a_stateless_client_dropped_unclosed_is_closed_at_once_not_at_the_next_gc():
    """Nothing in the client makes a reference cycle: dropping the last reference runs its
    finaliser right away (the warning, the shutdown), without waiting for a garbage collection
    that a quiet program may not run for a long time."""
    import gc
    import warnings

    server = stateless_server()
    client = server.connect(Client())
    gc.disable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            del client
        assert any("unclosed" in str(w.message) for w in caught)
    finally:
        gc.enable()
