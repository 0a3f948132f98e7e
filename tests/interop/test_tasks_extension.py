"""Tasks, one API in both eras: the 2026 extension (`io.modelcontextprotocol/tasks`) against
fastmcp with fastmcp-tasks (tests/servers/fastmcp_tasks_server.py, run from its own venv,
tests/peers/tasks-venv, since fastmcp-tasks pins an older fastmcp), and 2025-11-25 core tasks
against server-everything."""

from __future__ import annotations

import threading

import pytest

from mcp_sync import (
    AbortController,
    Aborted,
    Client,
    ProtocolError,
    RequestTimeout,
    RpcError,
    StdioTransport,
    TaskCancelled,
)
from mcp_sync.protocol import headers
from mcp_sync.types import CallToolResult, ElicitResult
from tests.helpers.support import PEERS, SERVERS

TASKS_PYTHON = PEERS.parent / "tasks-venv" / "bin" / "python"


@pytest.fixture
def client():
    if not TASKS_PYTHON.exists():
        pytest.fail(f"{TASKS_PYTHON} is missing: run `make test` (it installs fastmcp-tasks)")
    c = Client("tasks", "1.0", request_timeout=20)
    c.on_elicitation(lambda params: ElicitResult(action="accept", content={"name": "Ada"}))
    c.connect(StdioTransport(str(TASKS_PYTHON), [str(SERVERS / "fastmcp_tasks_server.py")]))
    yield c
    c.close()


def run_as_task(client: Client, name: str, arguments: dict) -> tuple[str, CallToolResult]:
    """What a user writes, whatever the era: start, wait, read."""
    task = client.tasks.call_tool(name, arguments)
    task.wait(timeout=60)
    return task.status, task.result(timeout=60)


def test_one_way_to_run_a_tool_as_a_task_in_both_eras(client, everything_cmd):
    assert client.era == "stateless"
    status, result = run_as_task(client, "crunch", {"n": 2})
    assert (status, result.text) == ("completed", "crunched 2")
    legacy = Client("tasks", "1.0", request_timeout=30)
    with legacy.connect(StdioTransport(everything_cmd[0], everything_cmd[1:])):
        assert legacy.era == "handshake"
        status, result = run_as_task(legacy, "simulate-research-query", {"topic": "mcp"})
        assert status == "completed" and "Research Report" in result.text


def test_a_2026_task_is_polled_listed_and_read(client):
    task = client.tasks.call_tool("crunch", {"n": 3})
    assert task.extension and task.task_id and task.status == "working"
    assert task.task.poll_interval_ms == 50 and task.task.poll_seconds == 0.05
    assert task.result(timeout=60).text == "crunched 3"
    assert task.done and task.status == "completed"
    state = client.tasks.get(task.task_id)
    assert state.status == "completed" and state.result["content"][0]["text"] == "crunched 3"
    assert client.tasks.result(task.task_id).text == "crunched 3"
    listed = client.tasks.list()  # no tasks/list in 2026: the tasks this client started
    assert [t.task_id for t in listed] == [task.task_id]


def test_waiting_has_a_timeout_an_abort_and_a_cancel(client):
    task = client.tasks.call_tool("forever")
    with pytest.raises(RequestTimeout):
        task.wait(timeout=0.3)
    controller = AbortController()
    threading.Timer(0.2, controller.abort, args=("user gave up",)).start()
    with pytest.raises(Aborted):
        task.wait(timeout=60, signal=controller.signal)
    assert not task.done
    task.cancel()
    assert task.wait(timeout=30).status == "cancelled"
    with pytest.raises(TaskCancelled, match=task.task_id):
        task.result(timeout=30)
    assert client.tasks.cancel(task.task_id).status == "cancelled"


def test_a_task_that_needs_input_is_answered_with_the_client_handlers(client):
    task = client.tasks.call_tool("ask_name")
    assert task.result(timeout=60).text == "hello Ada"  # elicitation via tasks/update


def test_a_tool_error_completes_the_task_as_an_error_result(client):
    task = client.tasks.call_tool("broken")
    result = task.result(timeout=60)
    assert task.status == "completed" and result.is_error and "crunching failed" in result.text


def test_a_protocol_error_fails_the_task_and_result_raises_it(client):
    task = client.tasks.call_tool("protocol_error")
    with pytest.raises(RpcError, match="no such dataset") as failed:
        task.result(timeout=60)
    assert failed.value.code == -32602 and task.status == "failed"


def test_the_server_may_answer_at_once_and_plain_calls_never_get_tasks(client):
    at_once = client.tasks.call_tool("add", {"a": 1, "b": 2})
    assert at_once.done and at_once.task_id == "" and at_once.result().text == "3"
    assert at_once.cancel().status == "completed"  # nothing to cancel
    # a plain call_tool does not declare the extension: the server must answer
    assert client.call_tool("crunch", {"n": 1}).text == "crunched 1"


def test_result_type_knows_the_task_discriminator():
    # the request path returns a "task" result only to a request that declared the extension
    from mcp_sync.protocol import stateless

    assert stateless.result_type({"resultType": "task"}) == "task"
    assert not stateless.declares_extension({"name": "x"}, "io.modelcontextprotocol/tasks")
    with pytest.raises(ProtocolError, match="unknown resultType"):
        stateless.result_type({"resultType": "later"})


def test_task_requests_are_routed_by_task_id_over_http():
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        message = {"method": method, "params": {"taskId": "t-1"}}
        assert headers.standard_headers(message, "2026-07-28")["Mcp-Name"] == "t-1"
