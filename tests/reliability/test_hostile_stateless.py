"""The 2026-07-28 era against hostile servers: the result cache, a call's deadline across input
rounds and handlers, and the text of a failed version negotiation (issue #30).

The hostile servers here are scripted (``mcp_sync.testing.MockServer`` in the 2026 era): they
follow the protocol in form and abuse it in substance (an answer that needed one caller's input
offered for caching, absurd ``ttlMs``, endless ``input_required`` rounds, a thousand input
requests in one result, versions nobody speaks), which no real server can be made to do. The
cache's happy path and its per-identity rule run against the official Python SDK server
(``tests/servers/sdk_cache_server.py``) over Streamable HTTP.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync import (
    Client,
    ProtocolError,
    RequestTimeout,
    RpcError,
    StreamableHttpTransport,
    UnsupportedProtocolVersion,
)
from mcp_sync._connection.cache import MAX_ENTRIES, ResultCache
from mcp_sync._session.server_requests import MAX_INPUT_REQUESTS
from mcp_sync.auth import AuthProvider
from mcp_sync.testing import MockServer
from tests.helpers.support import free_port, wait_listening

SERVERS = Path(__file__).resolve().parent.parent / "servers"
ASK_NAME = {
    "method": "elicitation/create",
    "params": {
        "message": "who are you?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def stateless_server() -> MockServer:
    return MockServer(eras=("stateless",), capabilities={"resources": {}, "tools": {}})


def _cache(client: Client) -> ResultCache:
    cache = client._connection.stateless.cache
    assert cache is not None
    return cache


# -- the cache never crosses callers ----------------------------------------------------------


def test_a_read_that_needed_one_callers_input_is_never_served_to_another():
    server = stateless_server()
    asked: list[str] = []

    def read(params, ctx):
        answer = (params.get("inputResponses") or {}).get("who")
        if answer is None:
            return {"resultType": "input_required", "inputRequests": {"who": ASK_NAME}}
        name = answer["content"]["name"]
        return {
            "resultType": "complete",
            "contents": [{"uri": params["uri"], "text": f"secret of {name}"}],
            "ttlMs": 60_000,
            "cacheScope": "private",
        }

    server.handle("resources/read", read)
    user = threading.local()
    client = Client(cache=True)

    def elicit(params):
        asked.append(user.name)
        return {"action": "accept", "content": {"name": user.name}}

    client.on_elicitation(elicit)
    server.connect(client)
    seen: dict[str, str] = {}

    def worker(name: str) -> None:
        user.name = name
        seen[name] = client.read_resource("secret://mine").contents[0].text

    try:
        for name in ("alice", "bob"):  # one after the other: bob's read is the second
            thread = threading.Thread(target=worker, args=(name,))
            thread.start()
            thread.join(30)
        assert seen == {"alice": "secret of alice", "bob": "secret of bob"}
        assert asked == ["alice", "bob"]  # bob was asked, not served alice's answer
    finally:
        client.close()


def test_a_call_with_other_meta_is_not_served_from_the_cache():
    server = stateless_server()
    reads: list[object] = []

    def read(params, ctx):
        reads.append(params["_meta"].get("com.example/tenant"))
        return {
            "resultType": "complete",
            "contents": [{"uri": params["uri"], "text": f"read {len(reads)}"}],
            "ttlMs": 60_000,
            "cacheScope": "private",
        }

    server.handle("resources/read", read)
    client = server.connect(Client(cache=True))
    try:
        for tenant in ("a", "b", "a"):
            client.request(
                "resources/read", {"uri": "x://r", "_meta": {"com.example/tenant": tenant}}
            )
        assert reads == ["a", "b"]  # the third is the first's, from the cache
    finally:
        client.close()


class SwitchableToken(AuthProvider):
    """A provider whose token the test changes: another user on the same client."""

    def __init__(self, token: str) -> None:
        self.current = token

    def token(self) -> str | None:
        return self.current


@contextlib.contextmanager
def sdk_cache_server(scope: str):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "sdk_cache_server.py"), str(port), scope],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_listening(process, port, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        assert process.stderr is not None
        process.stderr.close()


def _counter(client: Client) -> str:
    return client.read_resource("counter://reads").contents[0].text


def test_private_results_are_kept_per_authorization_context_public_ones_shared():
    for scope, expected in (("private", ["1", "1", "2", "1"]), ("public", ["1", "1", "1", "1"])):
        with sdk_cache_server(scope) as url:
            auth = SwitchableToken("alice-token")
            client = Client(cache=True)
            client.connect(StreamableHttpTransport(url, auth=auth))
            try:
                assert client.era == "stateless"
                seen = [_counter(client), _counter(client)]  # the second from the cache
                auth.current = "bob-token"
                seen.append(_counter(client))
                auth.current = "alice-token"
                seen.append(_counter(client))  # alice's entry is still hers
                assert seen == expected, scope
            finally:
                client.close()


@pytest.mark.parametrize("ttl", [float("nan"), float("inf"), 1e300, -5, True, "60000"])
def test_a_non_finite_or_absurd_ttl_is_not_cached(ttl):
    server = stateless_server()
    reads = []

    def read(params, ctx):
        reads.append(1)
        return {
            "resultType": "complete",
            "contents": [{"uri": params["uri"], "text": "x"}],
            "ttlMs": ttl,
            "cacheScope": "public",
        }

    server.handle("resources/read", read)
    client = server.connect(Client(cache=True))
    try:
        client.read_resource("x://r")
        client.read_resource("x://r")
        assert len(reads) == 2
        assert len(_cache(client)) == 0
    finally:
        client.close()


def test_the_cache_is_bounded_in_size():
    server = stateless_server()
    server.handle(
        "resources/read",
        lambda p, c: {
            "resultType": "complete",
            "contents": [{"uri": p["uri"], "text": "x"}],
            "ttlMs": 60_000,
            "cacheScope": "public",
        },
    )
    client = server.connect(Client(cache=True))
    try:
        for n in range(5_000):
            client.read_resource(f"x://r/{n}")
        assert len(_cache(client)) <= MAX_ENTRIES
        # the newest are the ones kept
        before = server.methods().count("resources/read")
        client.read_resource("x://r/4999")
        assert server.methods().count("resources/read") == before
    finally:
        client.close()


def test_the_cache_is_bounded_in_bytes_not_only_in_entries():
    """Ten cacheable reads of 7 MB each: what is kept weighs at most 64 MiB (the oldest go
    first), and a 9 MB result (over an eighth of that) is not kept at all. Before, 512
    entries of any size were kept: a server could make the client hold gigabytes."""
    server = stateless_server()
    size = {"x://big": 9_000_000}
    server.handle(
        "resources/read",
        lambda p, c: {
            "resultType": "complete",
            "contents": [{"uri": p["uri"], "text": "x" * size.get(p["uri"], 7_000_000)}],
            "ttlMs": 60_000,
            "cacheScope": "public",
        },
    )
    client = server.connect(Client(cache=True))

    def reads() -> int:
        return server.methods().count("resources/read")

    try:
        for n in range(10):
            client.read_resource(f"x://r/{n}")
        assert reads() == 10
        client.read_resource("x://r/9")  # the newest: kept
        assert reads() == 10
        client.read_resource("x://r/0")  # the oldest: pushed out by the byte budget
        assert reads() == 11
        client.read_resource("x://big")
        client.read_resource("x://big")
        assert reads() == 13
    finally:
        client.close()


def test_expired_entries_are_swept_without_being_read_again():
    now = [1000.0]
    cache = ResultCache(clock=lambda: now[0])
    for n in range(500):
        cache.put("resources/read", {"uri": f"x://{n}"}, {"ttlMs": 1_000, "contents": []}, "")
    assert len(cache) == 500
    now[0] += 2.0  # every entry expired; none is read again
    cache.put("resources/read", {"uri": "x://new"}, {"ttlMs": 1_000, "contents": []}, "")
    assert len(cache) == 1


# -- a timeout caps the whole call -------------------------------------------------------------


def test_a_timeout_caps_every_input_round_of_a_call():
    server = stateless_server()
    rounds = []

    def call(params, ctx):
        rounds.append(1)
        return {"resultType": "input_required", "requestState": f"s{len(rounds)}"}

    server.handle("tools/call", call)
    client = server.connect(Client(max_input_rounds=10**9))
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("nag", timeout=2)
        assert time.monotonic() - started < 10
        assert len(rounds) > 1
    finally:
        client.close()


def test_progress_renews_the_calls_deadline_across_its_rounds():
    server = stateless_server()
    rounds = []
    pause = threading.Event()  # never set: the server works 1 s between its messages

    def call(params, ctx):
        rounds.append(1)
        for step in (1, 2):
            pause.wait(1.0)
            ctx.progress(step, 3)
        pause.wait(0.5)
        if len(rounds) < 3:
            return {"resultType": "input_required", "requestState": f"s{len(rounds)}"}
        return {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}

    server.handle("tools/call", call, threaded=True)
    client = server.connect(Client())
    try:
        seen = []
        # 7.5 s in all, never 4 s without news: the call lives as one request would
        result = client.call_tool("busy", timeout=4, on_progress=seen.append)
        assert result.text == "done" and len(rounds) == 3 and len(seen) == 6
    finally:
        client.close()
    rounds.clear()
    capped = stateless_server()
    capped.handle("tools/call", call, threaded=True)
    client = capped.connect(Client(max_total_timeout=3))
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="after 3 s"):
            client.call_tool("busy", timeout=4, on_progress=lambda p: None)
        assert time.monotonic() - started < 6  # max_total_timeout caps the call, not a round
    finally:
        client.close()


def test_a_timeout_caps_the_handlers_of_one_round():
    server = stateless_server()
    calls = []
    server.handle(
        "tools/call",
        lambda p, c: {
            "resultType": "input_required",
            "inputRequests": {f"r{n}": {"method": "roots/list"} for n in range(50)},
        },
    )
    slow = threading.Event()  # never set: each roots callback takes its full 0.3 s

    def roots():
        calls.append(1)
        slow.wait(0.3)
        return ["file:///r"]

    client = server.connect(Client(roots=roots))
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("roots", timeout=1)
        assert time.monotonic() - started < 8  # not 50 x 0.3 s
        assert len(calls) < 50
    finally:
        client.close()


def test_a_handler_still_running_at_the_deadline_sees_its_signal_fire():
    server = stateless_server()
    server.handle(
        "tools/call",
        lambda p, c: {"resultType": "input_required", "inputRequests": {"who": ASK_NAME}},
    )
    fired = []

    def elicit(params, ctx):  # a human who never answers; a careful handler watches its signal
        fired.append(ctx.signal.wait(30))
        ctx.signal.throw_if_aborted()  # gives up: the call still says it timed out
        return {"action": "cancel"}

    client = Client()
    client.on_elicitation(elicit)
    server.connect(client)
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            client.call_tool("ask", timeout=1)
        assert time.monotonic() - started < 10
        assert fired == [True]
        assert not [t for t in threading.enumerate() if t.name == "mcp-sync-call-deadline"]
    finally:
        client.close()


def test_one_result_may_carry_only_so_many_input_requests():
    server = stateless_server()
    sampled = []
    server.handle(
        "tools/call",
        lambda p, c: {
            "resultType": "input_required",
            "inputRequests": {
                f"s{n}": {
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1},
                }
                for n in range(1_000)
            },
        },
    )
    client = Client()
    client.on_sampling(
        lambda p: (
            sampled.append(1)
            or {"role": "assistant", "model": "m", "content": {"type": "text", "text": "a"}}
        )
    )
    server.connect(client)
    try:
        started = time.monotonic()
        with pytest.raises(ProtocolError, match=f"1000 .*at most {MAX_INPUT_REQUESTS}"):
            client.call_tool("flood", timeout=30)
        assert time.monotonic() - started < 10
        assert sampled == []  # refused whole, before any handler ran
        assert server.methods().count("tools/call") == 1
    finally:
        client.close()


# -- error text --------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["error -32022", "discover result"])
def test_a_pinned_version_the_server_refuses_names_each_sides_versions(how):
    server = stateless_server()

    def discover(params, ctx):
        if how == "error -32022":
            raise RpcError(-32022, "Unsupported", {"supported": ["2099-01-01", "banana"]})
        result = server._discover(params, ctx)
        result["supportedVersions"] = ["2099-01-01", "banana"]
        return result

    server.handle("server/discover", discover)
    with pytest.raises(UnsupportedProtocolVersion) as raised:
        server.connect(Client(protocol="2026-07-28"))
    text = str(raised.value)
    assert "the server speaks 2099-01-01, banana" in text
    assert "this client speaks 2026-07-28" in text
    assert "client speaks 2099" not in text
    assert raised.value.server_versions == ("2099-01-01", "banana")


def test_auto_mode_with_no_common_version_says_so_and_lists_both_sides():
    server = MockServer(eras=("stateless",), capabilities={"tools": {}})

    def discover(params, ctx):
        result = server._discover(params, ctx)
        result["supportedVersions"] = ["2099-01-01", "banana"]
        return result

    server.handle("server/discover", discover)
    server.handle(
        "initialize", lambda p, c: (_ for _ in ()).throw(RpcError(-32601, "no initialize"))
    )
    with pytest.raises(UnsupportedProtocolVersion) as raised:
        server.connect(Client())
    text = str(raised.value)
    assert "no common protocol version" in text
    assert "the server speaks 2099-01-01, banana" in text
    assert "2026-07-28" in text and "2025-11-25" in text  # the client's side
    assert "no initialize" not in text.split(";")[0]
    assert mcp_sync.LATEST in raised.value.supported


def test_a_caller_changing_its_result_does_not_change_what_the_next_one_gets():
    server = stateless_server()
    server.handle(
        "resources/read",
        lambda p, c: {
            "resultType": "complete",
            "contents": [{"uri": p["uri"], "text": "original"}],
            "ttlMs": 60_000,
            "cacheScope": "public",
        },
    )
    client = server.connect(Client(cache=True))
    try:
        first = client.request("resources/read", {"uri": "x://r"})
        first["contents"][0]["text"] = "changed by the first caller"
        second = client.request("resources/read", {"uri": "x://r"})
        assert second["contents"][0]["text"] == "original"
        second["contents"].clear()
        assert client.read_resource("x://r").contents[0].text == "original"
        assert server.methods().count("resources/read") == 1
    finally:
        client.close()
