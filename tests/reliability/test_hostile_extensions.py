"""The tasks and skills extensions and ClientGroup names against servers that follow the
protocol in form and abuse it in substance (issue 30).

The task servers here are scripted (``mcp_sync.testing.MockServer``, 2026 era, in memory):
no real server can be made to answer ``tasks/get`` about another task, send a zero or
infinite poll interval, move a completed task back to working, or ask a new question on
every poll. The skill checks feed ``mcp_sync.skills.load`` content a real server would not
serve (YAML bombs, paths outside the skill). The group tests use real servers: the official SDK's fixture (tests/servers/sdk_server.py)
and mcp-server-time, over stdio.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sync import (
    Client,
    ClientGroup,
    GroupError,
    McpError,
    ProtocolError,
    RequestTimeout,
    SkillVerificationError,
    UnknownName,
)
from mcp_sync.protocol.types import TASKS_EXTENSION, ReadResourceResult, Skill, Task
from mcp_sync.protocol.types import tasks as task_types
from mcp_sync.skills import load, parse_frontmatter
from mcp_sync.testing import MockServer
from mcp_sync.types import ElicitResult
from tests.helpers.support import PYTHON, SERVERS, child_pids, wait_until

pytestmark = pytest.mark.timeout(60)


# -- tasks ------------------------------------------------------------------------------


def elicit(message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


DONE = {"status": "completed", "result": {"content": [{"type": "text", "text": "done"}]}}


class TaskServer:
    """A scripted 2026 server whose tool ``job`` always runs as task ``t1``.

    ``answer(server)`` gives each ``tasks/get`` answer's fields (``taskId`` defaults to t1);
    ``first`` the fields of the task the call creates.
    """

    def __init__(self, answer, first: dict[str, Any] | None = None) -> None:
        self.answer = answer
        self.gets = 0
        self.updates: list[dict[str, Any]] = []
        self.cancelled: list[str] = []
        self.first_get: float | None = None
        self.mock = MockServer(
            eras=("stateless",), capabilities={"tools": {}, "extensions": {TASKS_EXTENSION: {}}}
        )
        created = {"taskId": "t1", "status": "working", "pollIntervalMs": 50, **(first or {})}
        self.mock.handle("tools/call", lambda p, c: {"resultType": "task", **created})
        self.mock.handle("tasks/get", self._get)
        self.mock.handle("tasks/update", self._update)
        self.mock.handle("tasks/cancel", self._cancel)

    def _get(self, params: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        self.gets += 1
        if self.first_get is None:
            self.first_get = time.monotonic()
        fields = {"taskId": "t1", "pollIntervalMs": 50, **self.answer(self)}
        return {"resultType": "complete", **fields}

    def _update(self, params: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        self.updates.append(params["inputResponses"])
        return {"resultType": "complete"}

    def _cancel(self, params: dict[str, Any], _ctx: Any) -> dict[str, Any]:
        self.cancelled.append(params["taskId"])
        return {"resultType": "complete"}

    def client(self, **options: Any) -> Client:
        options.setdefault("request_timeout", 10)
        client = Client("hostile", "1.0", **options)
        client.on_elicitation(lambda p: ElicitResult(action="accept", content={"answer": "Ada"}))
        return self.mock.connect(client)


@pytest.fixture
def task_server():
    """``task_server(answer, first=None)``: a started TaskServer and its connected client."""
    clients: list[Client] = []

    def make(answer, first=None, **options):
        server = TaskServer(answer, first)
        clients.append(server.client(**options))
        return server, clients[-1]

    yield make
    for client in clients:
        client.close()


@pytest.mark.parametrize("value", [0, -5, 1e9, math.inf, -math.inf, math.nan, 1e400, 10**30])
def test_a_poll_interval_is_clamped_to_a_sane_range(value):
    task = Task.from_wire({"taskId": "t", "status": "working", "pollIntervalMs": value})
    seconds = task.poll_seconds
    assert task_types.MIN_POLL_SECONDS <= seconds <= task_types.MAX_POLL_SECONDS
    legacy = Task.from_wire({"taskId": "t", "status": "working", "pollInterval": value})
    assert task_types.MIN_POLL_SECONDS <= legacy.poll_seconds <= task_types.MAX_POLL_SECONDS


def test_a_zero_poll_interval_does_not_flood_the_server(task_server):
    def answer(server):  # working, "poll again at once", for half a second
        if time.monotonic() - (server.first_get or 0) < 0.5:
            return {"status": "working", "pollIntervalMs": 0}
        return DONE

    server, client = task_server(answer, first={"pollIntervalMs": 0})
    task = client.tasks.call_tool("job")
    assert task.wait(timeout=30).status == "completed"
    # at most one poll per MIN_POLL_SECONDS (0.05 s): about 10 in 0.5 s; before: thousands
    assert server.gets <= 0.5 / task_types.MIN_POLL_SECONDS * 3


def test_a_huge_poll_interval_still_ends_a_wait_without_timeout(task_server):
    server, client = task_server(lambda s: DONE, first={"pollIntervalMs": 1e9})
    task = client.tasks.call_tool("job")
    waited = threading.Thread(target=task.wait, daemon=True)
    waited.start()
    # polls after MAX_POLL_SECONDS (10 s) at the latest; before: after 11.6 days
    waited.join(timeout=task_types.MAX_POLL_SECONDS + 20)
    assert not waited.is_alive() and task.status == "completed" and server.gets == 1


@pytest.mark.parametrize("interval", [1e9, math.inf])
def test_a_wait_with_a_timeout_polls_until_it_and_says_how_long_it_waited(task_server, interval):
    server, client = task_server(
        lambda s: {"status": "working"}, first={"pollIntervalMs": interval}
    )
    task = client.tasks.call_tool("job")
    started = time.monotonic()
    with pytest.raises(RequestTimeout) as raised:  # before: at once (1e9), OverflowError (inf)
        task.wait(timeout=2)
    elapsed = time.monotonic() - started
    assert 1.5 <= elapsed < 12
    # it did ask before giving up (the last poll, sent with the time left, may reach the
    # server just after the wait gave up: under load it was counted a moment later)
    wait_until(lambda: server.gets >= 1, timeout=10, message="the task was never polled")
    said = float(re.search(r"after ([0-9.]+) s", str(raised.value)).group(1))
    assert abs(said - elapsed) < 1.0 and "t1" in str(raised.value)


def test_max_input_rounds_bounds_a_task_that_asks_forever(task_server):
    def answer(server):  # every poll, a new question
        number = server.gets
        return {"status": "input_required", "inputRequests": {f"q{number}": elicit(f"#{number}")}}

    server, client = task_server(answer, max_input_rounds=3)
    task = client.tasks.call_tool("job")
    started = time.monotonic()
    with pytest.raises(ProtocolError, match=r"task t1: .*still asks for input after 3 rounds"):
        task.wait(timeout=20)  # before: answered question after question until the timeout
    assert time.monotonic() - started < 10
    assert len(server.updates) == 3


def test_a_waits_timeout_covers_the_handlers_that_answer_a_task():
    """A 2026 task that asks a question nobody answers (the handler watches its signal): the
    wait's timeout reaches the handler and the ``tasks/update``, not only the polls."""
    server = TaskServer(
        lambda s: {"status": "input_required", "inputRequests": {"q": elicit("name?")}}
    )
    fired = []

    def never_answers(params, ctx):
        fired.append(ctx.signal.wait(30))
        ctx.signal.throw_if_aborted()
        return {"action": "cancel"}

    client = Client("hostile", "1.0", request_timeout=30)
    client.on_elicitation(never_answers)
    server.mock.connect(client)
    try:
        task = client.tasks.call_tool("job")
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            task.wait(timeout=1)  # before: the handler ran its full 30 s, then the update
        assert time.monotonic() - started < 10
        assert fired == [True]
        assert server.updates == []
    finally:
        client.close()


def test_a_new_question_under_an_answered_key_is_answered(task_server):
    def answer(server):
        if not server.updates:
            return {"status": "input_required", "inputRequests": {"q": elicit("name?")}}
        if len(server.updates) == 1 and server.gets == 2:  # lagging: the answered question
            return {"status": "input_required", "inputRequests": {"q": elicit("name?")}}
        if len(server.updates) == 1:  # a new question under the same key
            return {"status": "input_required", "inputRequests": {"q": elicit("age?")}}
        return DONE

    server, client = task_server(answer)
    task = client.tasks.call_tool("job")
    assert task.wait(timeout=20).status == "completed"  # before: stalled until the timeout
    assert len(server.updates) == 2  # the repeated question was not answered twice


def test_an_answer_about_another_task_is_refused(task_server):
    server, client = task_server(lambda s: {"taskId": "somebody-elses-task", **DONE})
    task = client.tasks.call_tool("job")
    with pytest.raises(ProtocolError, match="t1.*somebody-elses-task"):
        task.wait(timeout=10)
    assert task.task_id == "t1" and task.status == "working"
    with pytest.raises(ProtocolError, match="somebody-elses-task"):
        task.result(timeout=10)
    with pytest.raises(ProtocolError, match="somebody-elses-task"):
        client.tasks.get("t1")
    with pytest.raises(ProtocolError):
        task.cancel()
    assert server.cancelled == ["t1"]  # before: sent to somebody-elses-task


def test_a_finished_task_does_not_go_back_to_working(task_server):
    _, client = task_server(lambda s: DONE if s.gets == 1 else {"status": "working"})
    task = client.tasks.call_tool("job")
    assert task.wait(timeout=10).status == "completed"
    with pytest.raises(ProtocolError, match="t1 was completed.*working"):
        task.refresh()
    assert task.done and task.status == "completed" and task.result().text == "done"


@pytest.mark.parametrize("code", ["boom", 1.5, True, None, [1]])
def test_a_failed_task_with_a_malformed_error_code_raises_a_typed_error(task_server, code):
    error = {"message": "it broke"} if code is None else {"code": code, "message": "it broke"}
    _, client = task_server(lambda s: {"status": "failed", "error": error})
    task = client.tasks.call_tool("job")
    with pytest.raises(McpError, match="it broke") as raised:  # before: ValueError, TypeError
        task.result(timeout=10)
    if code is None:  # no code at all: the task failed, internally
        assert raised.value.code == -32603
    else:
        assert isinstance(raised.value, ProtocolError) and "t1" in str(raised.value)


def test_the_tasks_a_client_tracks_are_bounded(task_server):
    from mcp_sync._client import tasks as _tasks

    calls = iter(range(10**6))
    server, client = task_server(lambda s: DONE)
    server.mock.handle(
        "tools/call",
        lambda p, c: {"resultType": "task", "taskId": f"t{next(calls)}", "status": "working"},
    )
    for _ in range(_tasks.MAX_TRACKED_TASKS + 200):
        client.tasks.call_tool("job")
    tracked = client.tasks._started  # what a long-lived client keeps: before, every id
    assert len(tracked) == _tasks.MAX_TRACKED_TASKS
    assert "t0" not in tracked and f"t{_tasks.MAX_TRACKED_TASKS + 199}" in tracked


def test_tasks_past_their_ttl_are_no_longer_tracked(task_server):
    calls = iter(range(10**6))
    server, client = task_server(lambda s: DONE)
    server.mock.handle(
        "tools/call",
        lambda p, c: {
            "resultType": "task",
            "taskId": f"t{next(calls)}",
            "status": "working",
            "ttlMs": 1,
        },
    )
    first = client.tasks.call_tool("job")

    def pruned() -> bool:  # each task started sweeps those whose ttl has passed
        client.tasks.call_tool("job")
        return first.task_id not in client.tasks._started

    wait_until(pruned, timeout=5, message="an expired task is still tracked")


# -- skills -----------------------------------------------------------------------------


def skill_entry(text: str, frontmatter: dict[str, Any], extra_files=()) -> Skill:
    """An entry with SKILL.md's correct size and digest (what a hostile server can always
    publish), listing ``extra_files`` (uris) as well."""
    data = text.encode()
    listed = [
        {
            "uri": "skill://s/SKILL.md",
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }
    ]
    listed += [{"uri": uri, "digest": "sha256:" + "0" * 64, "size": 1} for uri in extra_files]
    return Skill.from_wire(
        {"uri": "skill://s/SKILL.md", "frontmatter": frontmatter, "resources": listed}
    )


def serve(text: str):
    def read(uri: str) -> ReadResourceResult:
        return ReadResourceResult.from_wire({"contents": [{"uri": uri, "text": text}]})

    return read


def alias_bomb(levels: int) -> str:
    """Each level a list of nine aliases of the one before: 9**levels nodes when expanded."""
    lines = ["---", "name: s", 'a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join([*lines, "---", "body", ""])


@pytest.mark.parametrize("levels", [6, 9, 25])
def test_a_yaml_alias_bomb_fails_verification_at_once(levels):
    text = alias_bomb(levels)
    assert len(text) < 2048  # a small file
    started = time.monotonic()
    with pytest.raises(SkillVerificationError, match="SKILL.md: .*alias"):
        load(skill_entry(text, {"name": "s"}), "x", serve(text), allow_dynamic=False)
    # before: 6 levels expanded 531,441 nodes and failed on the comparison, 9 never ended
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("frontmatter", "reason"),
    [
        ("name: &a [*a]", "alias"),  # before: RecursionError
        ("name: &a {x: *a}", "alias"),
        ("name: " + "[" * 5000 + "]" * 5000, "nested"),  # before: RecursionError
        ("name: s\ndescription: " + "x" * 70_000, "larger than"),
    ],
    ids=["self-alias-list", "self-alias-map", "deep", "huge"],
)
def test_hostile_frontmatter_raises_a_verification_error(frontmatter, reason):
    text = f"---\n{frontmatter}\n---\nbody\n"
    with pytest.raises(SkillVerificationError, match=reason):
        load(skill_entry(text, {"name": "s"}), "x", serve(text), allow_dynamic=False)
    with pytest.raises(SkillVerificationError, match=reason):
        parse_frontmatter(text)


def test_ordinary_frontmatter_with_an_alias_still_parses():
    text = "---\nname: s\ntags: &t [a, b]\nalso: *t\n---\nbody\n"
    assert parse_frontmatter(text) == {"name": "s", "tags": ["a", "b"], "also": ["a", "b"]}


PLAIN = "---\nname: s\n---\nbody\n"


@pytest.mark.parametrize(
    "path",
    [
        "skill://s/../other/SKILL.md",  # before: passed the check
        "skill://s/refs/../../other/x",
        "skill://s/./SKILL.md",
        "skill://s/refs/%2e%2e/%2E%2E/other/x",
        "skill://s/refs/a\x00b.md",  # before: passed the check
        "refs/a\x00b.md",  # before: passed the check
        "../other/SKILL.md",
        "/etc/passwd",
        "skill://other/SKILL.md",
    ],
)
def test_a_path_that_leaves_the_skill_or_holds_a_nul_is_refused(path):
    loaded = load(skill_entry(PLAIN, {"name": "s"}), "x", serve(PLAIN), allow_dynamic=False)
    with pytest.raises(
        SkillVerificationError, match="leaves the skill|not a file of the skill|control character"
    ):
        loaded.resolve(path)
    with pytest.raises(SkillVerificationError):
        loaded.read(path)
    assert loaded.resolve("refs/./a.md") == "skill://s/refs/a.md"  # inside: still resolved


@pytest.mark.parametrize(
    "listed", ["skill://s/../../etc/shadow", "skill://other/x.md", "skill://s/a\x00.md"]
)
def test_an_entry_listing_a_file_outside_the_skill_is_refused(listed):
    entry = skill_entry(PLAIN, {"name": "s"}, extra_files=[listed])
    reads: list[str] = []

    def read(uri: str) -> ReadResourceResult:
        reads.append(uri)
        return serve(PLAIN)(uri)

    with pytest.raises(SkillVerificationError, match="outside the skill"):
        load(entry, "x", read, allow_dynamic=False)  # before: loaded, files had "../../etc/shadow"
    assert reads == []  # refused before reading anything


# -- groups -----------------------------------------------------------------------------

SDK = [PYTHON, str(SERVERS / "sdk_server.py")]
TIME = [str(Path(sys.executable).parent / "mcp-server-time")]


def test_server_names_that_sanitise_alike_are_refused():
    with ClientGroup() as group:
        sdk = group.add("my.srv", SDK, request_timeout=20)
        running = child_pids()
        with pytest.raises(GroupError, match=r"'my_srv'.*'my\.srv'"):
            group.add("my_srv", TIME, request_timeout=20)  # before: accepted
        assert child_pids() == running  # refused before anything was started
        with pytest.raises(GroupError, match="'a__b' once made safe"):
            group.add("a._b", TIME)  # the separator, once sanitised
        assert list(group) == ["my.srv"]
        assert "my_srv__add" in [t.name for t in group.list_tools()]
        assert group.route("my_srv__add") == ("my.srv", "add")
        with pytest.raises(GroupError, match="'my_srv'.*'my.srv'"):
            ClientGroup({"my.srv": sdk, "my_srv": sdk})
        assert sdk.state == "connected"  # a refused group closes nothing of yours


def test_a_prefixed_name_stays_bound_to_its_server():
    # names this long cut to the same 64 characters: every tool of both servers wants one
    # name, so which gets the plain one and which a suffix was down to the order they came in
    long = "x" * 62
    with ClientGroup() as group:
        group.add(long, SDK, request_timeout=20)
        group.add(long + "_", TIME, request_timeout=20)
        names = {group.route(t.name): t.name for t in group.list_tools()}
        add = names[(long, "add")]
        assert len(set(names.values())) == len(names)
        group.remove(long)
        after = {t.name: group.route(t.name) for t in group.list_tools()}
        assert add not in after  # before: the time server's first tool took it
        with pytest.raises(UnknownName, match="left the group"):
            group.call_tool(add, {"a": 2, "b": 3})
        group.add(long, SDK, request_timeout=20)  # now second in the group's order
        again = {group.route(t.name): t.name for t in group.list_tools()}
        assert again == names  # every name reaches what it reached before
        assert group.call_tool(add, {"a": 2, "b": 3}).structured_content == {"result": 5}
