"""Recorded sessions (mcp_sync.cassette): recorded against real servers (server-everything in
the handshake era, the official SDK server in the 2026-07-28 era, over stdio and HTTP), then
replayed with the server command missing."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import mcp_sync
from mcp_sync import Cassette, StdioTransport, StreamableHttpTransport
from mcp_sync.errors import CassetteError, CassetteMismatch, UnencodableValue
from tests.helpers.support import NODE, PEERS, PYTHON, SERVERS, HttpServer, free_port, wait_until

pytest_plugins = ["pytester"]

EVERYTHING = [
    str(NODE),
    str(PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"),
    "stdio",
]
SDK = [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]
#: The official TypeScript SDK, whose ``surrogate`` tool answers text with a lone surrogate
#: (which the Python SDK cannot send).
HOSTILE_TS = [str(NODE), str(SERVERS / "hostile_ts_server.mjs")]
MISSING = ["/nonexistent/mcp-server-that-is-not-installed"]
ROOT = "file:///tmp/cassette-root"


def stdio(argv):
    return lambda: StdioTransport(argv[0], argv[1:], stderr="devnull")


def client_for(cassette, **options):
    client = mcp_sync.Client("cassette-test", "1.0", roots=[ROOT], request_timeout=30, **options)
    client.on_sampling(
        lambda p: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "42"}}
    )
    client.on_elicitation(
        lambda p: {"action": "accept", "content": {"name": "Ada", "age": 36, "check": True}}
    )
    return client.connect(cassette)


def everything_session(client):
    """What a test of server-everything does: tools, resources, prompts, sampling,
    elicitation, roots, progress."""
    progress = []
    prompt = next(
        p for p in client.list_prompts() if not any(a.required for a in p.arguments or ())
    )
    resources = client.list_resources()
    return {
        "era": client.era,
        "tools": sorted(t.name for t in client.list_tools()),
        "echo": client.call_tool("echo", {"message": "hi"}).text,
        "image": [b.type for b in client.call_tool("get-tiny-image").content],
        "sampling": client.call_tool("trigger-sampling-request", {"prompt": "q"}).text,
        "elicitation": client.call_tool("trigger-elicitation-request").text,
        "roots": client.call_tool("get-roots-list").text,
        "long": client.call_tool(
            "trigger-long-running-operation",
            {"duration": 1, "steps": 2},
            on_progress=lambda p: progress.append((p.progress, p.total)),
        ).text,
        "progress": progress,
        "resources": [r.uri for r in resources],
        "read": client.read_resource(resources[0].uri).contents[0].text,
        "prompt": client.get_prompt(prompt.name).to_wire(),
    }


def sdk_session(client):
    """The official SDK server in the 2026-07-28 era: discover, input_required rounds
    (sampling, elicitation, roots), progress, listen."""
    progress, changes = [], []
    changed = threading.Event()

    def on_change(notification):
        changes.append(notification.method)
        changed.set()

    subscription = client.listen(tools_list_changed=True, callback=on_change)
    result = {
        "era": client.era,
        "tools": sorted(t.name for t in client.list_tools()),
        "add": client.call_tool("add", {"a": 20, "b": 22}).structured_content,
        "weather": client.call_tool("weather", {"city": "Oslo"}).structured_content,
        "sampling": client.call_tool("ask_llm", {"question": "6*7?"}).text,
        "elicitation": client.call_tool("ask_name").text,
        "roots": client.call_tool("list_roots").structured_content,
        "slow": client.call_tool(
            "slow", {"steps": 3}, on_progress=lambda p: progress.append((p.progress, p.total))
        ).text,
        "config": client.read_resource("config://app").contents[0].text,
        "prompt": client.get_prompt("review", {"code": "x = 1"}).to_wire(),
        "poke": client.call_tool("poke").text,
    }
    assert changed.wait(10), "no tools list change through listen"
    subscription.cancel()
    result["progress"] = progress
    result["changes"] = changes
    return result


@pytest.mark.parametrize(
    ("server", "session", "era"),
    [(EVERYTHING, everything_session, "handshake"), (SDK, sdk_session, "stateless")],
    ids=["everything", "sdk-2026"],
)
def test_record_then_replay_without_the_server(tmp_path, server, session, era):
    path = tmp_path / "session.jsonl"
    recorder = Cassette(path, stdio(server))
    with client_for(recorder) as client:
        recorded = session(client)
    assert recorder.recording and recorded["era"] == era
    player = Cassette(path, stdio(MISSING))  # mode "once": the file exists, so it replays
    with client_for(player) as client:
        replayed = session(client)
    assert not player.recording
    assert replayed == recorded
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["cassette"] == 1
    directions = {line["direction"] for line in lines[1:]}
    assert directions == {"client->server", "server->client"}
    methods = {line["message"].get("method") for line in lines[1:]}
    if era == "handshake":
        assert {"sampling/createMessage", "elicitation/create", "roots/list"} <= methods
        assert "notifications/progress" in methods
    else:
        assert {"server/discover", "subscriptions/listen", "notifications/progress"} <= methods
        answers = [line["message"].get("result", {}).get("resultType") for line in lines[1:]]
        assert "input_required" in answers


def record_adds(path, pairs, **options):
    with client_for(Cassette(path, stdio(SDK), **options)) as client:
        return [client.call_tool("add", {"a": a, "b": b}).structured_content for a, b in pairs]


def test_a_changed_request_fails_with_a_diff_naming_the_file(tmp_path):
    path = tmp_path / "adds.jsonl"
    record_adds(path, [(1, 2)])
    with client_for(Cassette(path, stdio(MISSING), mode="none")) as client:
        with pytest.raises(CassetteMismatch) as caught:
            client.call_tool("add", {"a": 1, "b": 3})
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    error = caught.value
    assert str(path) in str(error) and error.path == str(path)
    assert '-      "b": 2' in error.diff and '+      "b": 3' in error.diff
    assert error.nearest["params"]["arguments"] == {"a": 1, "b": 2}
    assert error.line is not None and '"b":2' in path.read_text().splitlines()[error.line - 1]


def test_match_accepts_what_the_default_refuses(tmp_path):
    path = tmp_path / "adds.jsonl"
    record_adds(path, [(1, 2)])

    def same_tool(recorded, live):
        return recorded["params"]["name"] == live["params"]["name"]

    with client_for(Cassette(path, mode="none", match=same_tool)) as client:
        assert client.call_tool("add", {"a": 5, "b": 5}).structured_content == {"result": 3}


def test_concurrent_calls_replay_by_content_not_arrival(tmp_path):
    path = tmp_path / "adds.jsonl"
    pairs = [(n, n * 10) for n in range(8)]
    with client_for(Cassette(path, stdio(SDK))) as client, ThreadPoolExecutor(8) as pool:
        recorded = list(pool.map(lambda p: client.call_tool("add", {"a": p[0], "b": p[1]}), pairs))
    assert [r.structured_content["result"] for r in recorded] == [a + b for a, b in pairs]
    with client_for(Cassette(path, mode="none")) as client, ThreadPoolExecutor(8) as pool:
        shuffled = pairs[::-1]
        got = list(pool.map(lambda p: client.call_tool("add", {"a": p[0], "b": p[1]}), shuffled))
    assert [r.structured_content["result"] for r in got] == [a + b for a, b in shuffled]


def test_a_bearer_token_over_http_is_not_in_the_file(tmp_path):
    token = "sekret-token-0123456789"
    path = tmp_path / "http.jsonl"
    port = free_port()
    argv = [PYTHON, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)]
    with HttpServer(argv, port) as server:
        url = server.url()
        auth = {"Authorization": f"Bearer {token}", "X-Api-Key": "another-secret-key-42"}
        cassette = Cassette(path, lambda: StreamableHttpTransport(url, headers=auth))
        with mcp_sync.connect(cassette, request_timeout=30) as client:
            # a token the client holds is redacted wherever it shows (here: an argument)
            echoed = client.call_tool("fail", {"message": token})
    text = path.read_text()
    assert token not in text and "another-secret-key-42" not in text
    header = json.loads(text.splitlines()[0])
    assert header["transport"] == "http" and header["url"] == url
    assert header["headers"]["Authorization"] == "[redacted]"
    assert echoed.is_error
    with mcp_sync.connect(Cassette(path, mode="none"), request_timeout=30) as client:
        replayed = client.call_tool("fail", {"message": "[redacted]"})
    assert replayed.to_wire() == echoed.to_wire()


def test_a_secret_argument_echoed_in_the_reply_is_not_in_the_file(tmp_path):
    """A real server (recording_server.py) whose tool answers with its ``token`` argument: the
    request's argument is masked by its name, and the reply that echoes it is redacted, since
    the argument became a secret when the call sent it."""
    token = "tok-Jx4Rb8Nm2Wq6Zt0Yc"
    path = tmp_path / "record.jsonl"
    env = {"RECORD_TO": str(tmp_path / "ledger")}
    server = StdioTransport(PYTHON, [str(SERVERS / "recording_server.py"), "stdio"], env=env)
    with client_for(Cassette(path, server)) as client:
        assert client.call_tool("record", {"token": token}).text == token  # sent as is
    text = path.read_text()
    assert token not in text
    with client_for(Cassette(path, mode="none")) as client:
        assert client.call_tool("record", {"token": token}).text == "[redacted]"


def test_filter_changes_and_drops_lines(tmp_path):
    path = tmp_path / "filtered.jsonl"

    def scrub(line):
        message = line["message"]
        if message.get("method") == "ping":
            return None
        arguments = (message.get("params") or {}).get("arguments") or {}
        if "city" in arguments:
            arguments["city"] = "CITY"
        return line

    # (the handshake era: the 2026 era has no ping)
    with client_for(Cassette(path, stdio(SDK), filter=scrub), protocol="handshake") as client:
        client.ping()
        recorded = client.call_tool("weather", {"city": "Oslo"}).structured_content
    sent = [line for line in path.read_text().splitlines() if '"client->server"' in line]
    assert not [line for line in sent if '"ping"' in line or "Oslo" in line]
    assert any('"city":"CITY"' in line for line in sent)
    with client_for(Cassette(path, mode="none", filter=scrub), protocol="handshake") as client:
        assert client.call_tool("weather", {"city": "Bergen"}).structured_content == recorded
        started = time.monotonic()
        with pytest.raises(CassetteMismatch, match="the filter drops ping requests"):
            client.ping()  # at once, not at the request timeout
        assert time.monotonic() - started < 10


def test_modes(tmp_path):
    path = tmp_path / "modes.jsonl"
    with pytest.raises(CassetteError, match="does not exist"):
        mcp_sync.connect(Cassette(path, stdio(SDK), mode="none"))
    assert not path.exists()
    assert record_adds(path, [(1, 2)]) == [{"result": 3}]  # once, missing: records
    first = path.read_text()
    assert record_adds(path, [(1, 2)]) == [{"result": 3}]  # once, present: replays
    assert path.read_text() == first
    assert record_adds(path, [(2, 2)], mode="all") == [{"result": 4}]  # all: records anew
    assert '"b":2}' in path.read_text() and '"a":1' not in path.read_text()
    # new_episodes: the recorded call replays, a new one goes to the server and is appended
    assert record_adds(path, [(2, 2), (5, 5)], mode="new_episodes") == [
        {"result": 4},
        {"result": 10},
    ]
    with client_for(Cassette(path, stdio(MISSING), mode="none")) as client:
        assert client.call_tool("add", {"a": 5, "b": 5}).structured_content == {"result": 10}
        assert client.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4}


def test_new_episodes_opens_the_real_server_with_the_recorded_handshake(tmp_path):
    path = tmp_path / "everything.jsonl"
    with client_for(Cassette(path, stdio(EVERYTHING))) as client:
        assert client.call_tool("echo", {"message": "one"}).text == "Echo: one"
    with client_for(Cassette(path, stdio(EVERYTHING), mode="new_episodes")) as client:
        assert client.era == "handshake"
        assert client.call_tool("echo", {"message": "one"}).text == "Echo: one"
        assert client.call_tool("echo", {"message": "two"}).text == "Echo: two"
        assert "42" in client.call_tool("trigger-sampling-request", {"prompt": "q"}).text
    with client_for(Cassette(path, mode="none")) as client:
        assert client.call_tool("echo", {"message": "two"}).text == "Echo: two"
        assert "42" in client.call_tool("trigger-sampling-request", {"prompt": "q"}).text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"cassette":1}\n{"direction":"client->server","message":{"id":1,', r":2: truncated"),
        ('{"cassette":1}\nnot json\n{}\n', r":2: not JSON"),
        ('{"direction":"client->server","message":{}}\n', r":1: not an mcp_sync cassette"),
        ('{"cassette":1}\n{"direction":"sideways","message":{}}\n', r":2: expected"),
        ("", r"empty cassette"),
    ],
    ids=["truncated", "garbage", "no-header", "bad-direction", "empty"],
)
def test_a_broken_file_names_the_file_and_line(tmp_path, content, expected):
    path = tmp_path / "broken.jsonl"
    path.write_text(content)
    started = time.monotonic()
    with pytest.raises(CassetteError, match=expected) as caught:
        mcp_sync.connect(Cassette(path, mode="none"), timeout=30)
    assert str(path) in str(caught.value)
    assert time.monotonic() - started < 10


HEADER = '{"cassette":1}\n'


def client_line(**message):
    return json.dumps({"direction": "client->server", "message": {"jsonrpc": "2.0", **message}})


def server_line(**message):
    return json.dumps({"direction": "server->client", "message": {"jsonrpc": "2.0", **message}})


#: The recorded handshake the hostile lines follow (matched whatever the client sends).
INIT = {"id": 0, "method": "initialize", "params": {}}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["[" * 200_000 + "]" * 200_000], r":2: nested too deeply"),
        ([client_line(id=1, method="tools/call", params="oops")], r':2: "params" must be an'),
        ([client_line(id={"a": 1}, method="tools/list")], r':2: "id" must be a string'),
        (
            [client_line(id=1, method="tools/call", params={"_meta": {"progressToken": [1]}})],
            r':2: "params._meta.progressToken" must be a string or a number',
        ),
        ([client_line(**INIT), server_line(id=[0], result={})], r':3: "id" must be a string'),
        (
            [client_line(**INIT), server_line(method="notifications/progress", params="oops")],
            r':3: "params" must be an object',
        ),
        (
            [
                client_line(**INIT),
                server_line(method="notifications/progress", params={"progressToken": {}}),
            ],
            r':3: "params.progressToken" must be a string or a number',
        ),
        (
            [
                client_line(**INIT),
                server_line(
                    method="notifications/tools/list_changed",
                    params={"_meta": {"io.modelcontextprotocol/subscriptionId": [2]}},
                ),
            ],
            r':3: "params._meta.io.modelcontextprotocol/subscriptionId" must be',
        ),
    ],
    ids=[
        "deep",
        "params",
        "id",
        "progress-token",
        "answer-id",
        "server-params",
        "server-token",
        "subscription-id",
    ],
)
def test_a_hostile_line_is_a_cassette_error_naming_the_file_and_line(tmp_path, lines, expected):
    """Lines of the right shape with hostile contents. Before: a raw RecursionError,
    ValueError or TypeError from deep inside the replay (the last at the first request)."""
    path = tmp_path / "hostile.jsonl"
    path.write_text(HEADER + "\n".join(lines) + "\n")
    started = time.monotonic()
    cassette = Cassette(path, mode="none", match=lambda recorded, live: True)
    with pytest.raises(CassetteError, match=expected) as caught:
        mcp_sync.connect(cassette, timeout=30, protocol="handshake")
    assert str(path) in str(caught.value)
    assert caught.value.path == str(path) and caught.value.line == int(expected.split(":")[1])
    assert time.monotonic() - started < 10


def test_a_reply_with_a_lone_surrogate_is_recorded_and_delivered(tmp_path):
    """``"\\ud800"`` is valid JSON. Before: writing it to the UTF-8 file failed inside the
    delivery, so the reply was lost and the call waited out its timeout, with no answer in
    the file."""
    path = tmp_path / "surrogate.jsonl"
    with mcp_sync.connect(Cassette(path, stdio(HOSTILE_TS)), request_timeout=30) as client:
        started = time.monotonic()
        recorded = client.call_tool("surrogate")
        assert time.monotonic() - started < 10
    assert recorded.text == "lone \ud800 surrogate"
    assert "lone \\ud800 surrogate" in path.read_text(encoding="utf-8")  # the JSON escape
    with mcp_sync.connect(Cassette(path, stdio(MISSING)), request_timeout=30) as client:
        assert client.call_tool("surrogate").to_wire() == recorded.to_wire()


@pytest.mark.parametrize("recorded", [False, True], ids=["live", "recording"])
def test_a_lone_surrogate_in_an_argument_is_refused_naming_it(tmp_path, recorded):
    """Nothing sent, nothing recorded, and the session goes on. Before: a raw
    UnicodeEncodeError from protocol/_json.encode, with or without a cassette."""
    path = tmp_path / "argument.jsonl"
    target = Cassette(path, stdio(SDK)) if recorded else SDK
    with mcp_sync.connect(target, request_timeout=30, protocol="handshake") as client:
        with pytest.raises(UnencodableValue) as caught:
            client.call_tool("weather", {"city": "Oslo\ud800"})
        assert client.call_tool("weather", {"city": "Oslo"}).structured_content
    error = caught.value
    assert isinstance(error, ValueError) and error.path == "/params/arguments/city"
    assert error.method == "tools/call"
    message = str(error)
    assert "/params/arguments/city" in message and "lone surrogate" in message, message
    assert "\\ud800" in message and "\ud800" not in message  # shown escaped, printable
    if recorded:
        assert "Oslo\\ud800" not in path.read_text()


def test_a_recorded_request_whose_answer_was_never_recorded_fails_at_once(tmp_path):
    """The recording stopped (or the call timed out) before the server answered. Before: the
    replay waited the whole request timeout."""
    path = tmp_path / "unanswered.jsonl"
    record_adds(path, [(1, 2)])
    lines = path.read_text().splitlines(keepends=True)
    answer = next(
        n for n, line in enumerate(lines) if '"result":{"content"' in line and '"3"' in line
    )
    path.write_text("".join(lines[:answer] + lines[answer + 1 :]))
    request = next(n for n, line in enumerate(lines, 1) if '"tools/call"' in line)
    with client_for(Cassette(path, mode="none")) as client:
        started = time.monotonic()
        with pytest.raises(CassetteMismatch) as caught:
            client.call_tool("add", {"a": 1, "b": 2})
        assert time.monotonic() - started < 10
    assert caught.value.path == str(path) and caught.value.line == request
    assert f"{path}, line {request}" in str(caught.value)
    assert "no recorded answer" in str(caught.value)
    # new_episodes asks the real server instead, and the answer it records is used from then on
    assert record_adds(path, [(1, 2)], mode="new_episodes") == [{"result": 3}]
    with client_for(Cassette(path, mode="none")) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_bad_mode_and_recording_without_a_transport(tmp_path):
    with pytest.raises(ValueError, match="mode must be one of"):
        Cassette(tmp_path / "x.jsonl", mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(CassetteError, match="recording needs the real transport"):
        mcp_sync.connect(Cassette(tmp_path / "x.jsonl"))


def test_replay_leaves_no_thread_after_close(tmp_path):
    path = tmp_path / "adds.jsonl"
    record_adds(path, [(1, 2)])
    with client_for(Cassette(path, mode="none")) as client:
        client.call_tool("add", {"a": 1, "b": 2})
    wait_until(
        lambda: not [t for t in threading.enumerate() if t.name == "mcp-sync-cassette-reader"],
        timeout=10,
    )


@pytest.mark.timeout(240)
def test_pytest_marker_and_record_switch(pytester, monkeypatch):
    pytester.makepyfile(
        test_marked="""
        import os, sys, pytest

        @pytest.mark.mcp_cassette("adds")
        def test_add(mcp_client):
            client = mcp_client(os.environ["SERVER"].split("|"))
            assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    """
    )
    args = ("-p", "no:cacheprovider", "--strict-markers")
    monkeypatch.setenv("SERVER", "|".join(SDK))
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    recorded = pytester.path / "cassettes" / "adds.jsonl"
    assert '"method":"tools/call"' in recorded.read_text()
    monkeypatch.setenv("SERVER", "|".join(MISSING))
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)  # replayed
    result = pytester.runpytest_subprocess(*args, "--mcp-record")  # records: the server is gone
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ServerStartError*"])
    assert '"method":"tools/call"' in recorded.read_text()  # a failed re-record keeps the old
