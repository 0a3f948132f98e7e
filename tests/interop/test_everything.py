"""The reference feature set: @modelcontextprotocol/server-everything, over stdio and over
Streamable HTTP (where its sampling, elicitation and roots requests come on the POST and GET
streams)."""

from __future__ import annotations

import threading
import time

import pytest

from mcp_sync import AbortController, Aborted, Client, StdioTransport, StreamableHttpTransport
from tests.helpers.support import HttpServer, free_port, wait_until


@pytest.fixture(params=["stdio", "http"])
def transport(request, everything_cmd):
    if request.param == "stdio":
        yield StdioTransport(everything_cmd[0], everything_cmd[1:], stderr="devnull")
        return
    port = free_port()
    argv = [everything_cmd[0], everything_cmd[1], "streamableHttp"]
    with HttpServer(argv, port, env={"PORT": str(port)}) as server:
        yield StreamableHttpTransport(server.url())


@pytest.fixture
def client(transport, tmp_path):
    c = Client("interop", "1.0", roots=[tmp_path], request_timeout=30)
    c.on_sampling(
        lambda p: {
            "role": "assistant",
            "model": "m",
            "content": {"type": "text", "text": "sampled answer"},
        }
    )
    c.on_elicitation(lambda p: {"action": "accept", "content": {"name": "Ada", "check": True}})
    c.notifications = []
    c.on_notification(None, lambda n: c.notifications.append(n.method))
    c.connect(transport)
    assert c.era == "handshake"  # TypeScript SDK 1.x: the discover probe falls back
    yield c
    c.close()


def test_tools_and_content_kinds(client):
    names = {tool.name for tool in client.list_tools()}
    assert {"echo", "get-sum", "get-tiny-image", "trigger-sampling-request"} <= names
    assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
    assert client.call_tool("get-sum", {"a": 2, "b": 3}).text == "The sum of 2 and 3 is 5."
    image = client.call_tool("get-tiny-image")
    assert [b.type for b in image.content] == ["text", "image", "text"]
    llm = image.to_llm_content()
    assert llm[1]["type"] == "image" and llm[1]["mimeType"] == "image/png"
    links = client.call_tool("get-resource-links", {"count": 2}).content
    assert [b.type for b in links][1:] == ["resource_link", "resource_link"]
    embedded = client.call_tool("get-resource-reference").content[1]
    assert embedded.type == "resource" and embedded.resource.uri.startswith("demo://")
    structured = client.call_tool("get-structured-content", {"location": "Chicago"})
    assert set(structured.structured_content) == {"temperature", "conditions", "humidity"}


def test_server_requests_sampling_elicitation_roots(client, tmp_path):
    assert "sampled answer" in client.call_tool("trigger-sampling-request", {"prompt": "q"}).text
    assert "Ada" in client.call_tool("trigger-elicitation-request").text
    assert tmp_path.resolve().as_uri() in client.call_tool("get-roots-list").text


def test_cancelling_a_long_running_tool(client):
    progress = []
    controller = AbortController()
    first_progress = threading.Event()

    def on_progress(p):
        progress.append(p)
        first_progress.set()

    threading.Thread(
        target=lambda: first_progress.wait(10) and controller.abort("enough"), daemon=True
    ).start()
    started = time.monotonic()
    with pytest.raises(Aborted, match="enough"):
        client.call_tool(
            "trigger-long-running-operation",
            {"duration": 20, "steps": 20},
            on_progress=on_progress,
            signal=controller.signal,
        )
    assert time.monotonic() - started < 10
    assert progress and progress[0].total == 20
    assert client.call_tool("echo", {"message": "still usable"}).text == "Echo: still usable"


def test_tasks(client):
    task = client.tasks.call_tool("simulate-research-query", {"topic": "mcp"})
    assert task.status == "working"
    assert task.wait(timeout=60).status == "completed"
    assert "Research Report" in task.result().text
    assert task.task_id in [t.task_id for t in client.tasks.list()]
    wait_until(lambda: "notifications/tasks/status" in client.notifications)


def test_resources_subscriptions_prompts_completion(client):
    resources = client.list_resources()
    assert resources and all(r.uri.startswith("demo://") for r in resources)
    templates = [t.uri_template for t in client.list_resource_templates()]
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    assert client.read_resource(resources[0].uri).contents[0].text
    updated = threading.Event()
    client.call_tool("toggle-subscriber-updates")
    subscription = client.subscribe_resource(resources[0].uri, lambda uri: updated.set())
    assert updated.wait(20)
    subscription.cancel()
    prompts = {p.name for p in client.list_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= prompts
    assert client.get_prompt("simple-prompt").messages
    completable = next(p for p in client.list_prompts() if p.name == "completable-prompt")
    argument = completable.arguments[0].name
    values = client.complete(
        {"type": "ref/prompt", "name": "completable-prompt"}, argument, ""
    ).completion.values
    assert values


def test_logging_and_list_changed_burst(client, transport):
    logs = []
    client.on_log(logs.append)
    client.set_logging_level("debug")
    client.call_tool("toggle-simulated-logging")
    wait_until(lambda: logs, timeout=30)
    assert logs[0].level in {
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    }
    if transport.kind == "stdio":
        # Over HTTP the burst goes to a GET stream that may not be open yet when the server
        # sends it right after initialization (it keeps no event store to replay it).
        wait_until(lambda: "notifications/tools/list_changed" in client.notifications)
