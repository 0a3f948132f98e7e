"""Every 2025-11-25 feature through the client, against a scripted MockServer peer."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mcp_sync import (
    CapabilityError,
    Client,
    OutputValidationError,
    RpcError,
    UrlElicitationRequired,
)
from mcp_sync._connection.negotiation import ServerState
from mcp_sync.testing import NO_REPLY, MockServer
from mcp_sync.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    PromptReference,
    ResourceTemplateReference,
    ServerCapabilities,
    TextContent,
)
from tests.helpers.support import wait_until

ALL_CAPS = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}


@pytest.fixture
def full():
    server = MockServer(capabilities=ALL_CAPS)
    client = server.connect(Client(request_timeout=5))
    server.wait_for("notifications/initialized")
    yield server, client
    client.close()


def connect_with(server, **handlers):
    client = Client(request_timeout=5)
    for name, value in handlers.items():
        if name == "sampling":
            handler, tools = value
            client.on_sampling(handler, tools=tools)
        elif name == "form":
            client.on_elicitation(value)
        elif name == "url":
            client.on_elicitation(value, mode="url")
    return server.connect(client)


# -- resources -------------------------------------------------------------------------


def test_resources_templates_and_read(full):
    server, client = full
    server.handle(
        "resources/list",
        lambda p, c: {
            "resources": [{"uri": "file:///a", "name": "a"}]
            if not p.get("cursor")
            else [{"uri": "file:///b", "name": "b", "mimeType": "text/plain"}],
            **({"nextCursor": "2"} if not p.get("cursor") else {}),
        },
    )
    server.handle(
        "resources/templates/list",
        lambda p, c: {"resourceTemplates": [{"uriTemplate": "file:///{name}", "name": "files"}]},
    )
    server.handle(
        "resources/read",
        lambda p, c: {
            "contents": [
                {"uri": p["uri"], "text": "hello", "mimeType": "text/plain"},
                {"uri": p["uri"], "blob": "AAE=", "mimeType": "application/octet-stream"},
            ]
        },
    )
    assert [r.uri for r in client.list_resources()] == ["file:///a", "file:///b"]
    assert client.list_resources_page().next_cursor == "2"
    assert client.list_resource_templates()[0].uri_template == "file:///{name}"
    assert client.list_resource_templates_page().resource_templates[0].name == "files"
    contents = client.read_resource("file:///a").contents
    assert contents[0].text == "hello" and contents[1].blob == "AAE="


def test_subscriptions_route_updates_to_the_right_callbacks(full):
    server, client = full
    server.handle("resources/subscribe", lambda p, c: {})
    server.handle("resources/unsubscribe", lambda p, c: {})
    a, b = [], []
    sub_a = client.subscribe_resource("file:///a", a.append)
    client.subscribe_resource("file:///b", b.append)
    server.notify("notifications/resources/updated", {"uri": "file:///a"})
    server.notify("notifications/resources/updated", {"uri": "file:///b"})
    wait_until(lambda: a and b)
    assert a == ["file:///a"] and b == ["file:///b"]
    sub_a.cancel()
    assert server.wait_for("resources/unsubscribe")["params"] == {"uri": "file:///a"}
    server.notify("notifications/resources/updated", {"uri": "file:///a"})
    client.ping()
    assert a == ["file:///a"]
    assert server.methods().count("resources/subscribe") == 2


def test_list_changed_listeners(full):
    server, client = full
    seen = []
    client.on_list_changed("resources", lambda: seen.append("resources"))
    client.on_list_changed("tools", lambda: seen.append("tools"))
    server.notify("notifications/tools/list_changed")
    server.notify("notifications/resources/list_changed")
    wait_until(lambda: len(seen) == 2)
    assert sorted(seen) == ["resources", "tools"]


# -- prompts, completion, logging ------------------------------------------------------


def test_prompts_and_completion(full):
    server, client = full
    server.handle(
        "prompts/list",
        lambda p, c: {
            "prompts": [{"name": "greet", "arguments": [{"name": "who", "required": True}]}]
        },
    )
    server.handle(
        "prompts/get",
        lambda p, c: {
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": f"hi {p['arguments']['who']}"}}
            ],
        },
    )
    server.handle(
        "completion/complete",
        lambda p, c: {
            "completion": {"values": [p["argument"]["value"] + "x"], "total": 1, "hasMore": False}
        },
    )
    assert client.list_prompts()[0].arguments[0].name == "who"
    assert client.list_prompts_page().prompts[0].name == "greet"
    message = client.get_prompt("greet", {"who": "bob"}).messages[0]
    assert message.content.text == "hi bob"
    done = client.complete(PromptReference(name="greet"), "who", "bo", context={"x": "1"})
    assert done.completion.values == ["box"]
    sent = server.wait_for("completion/complete")["params"]
    assert sent == {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "who", "value": "bo"},
        "context": {"arguments": {"x": "1"}},
    }
    client.complete(ResourceTemplateReference(uri="file:///{name}"), "name", "")
    assert server.received[-1]["params"]["ref"] == {"type": "ref/resource", "uri": "file:///{name}"}


def test_logging_level_and_typed_log_messages(full):
    server, client = full
    server.handle("logging/setLevel", lambda p, c: {})
    logs = []
    client.on_log(logs.append)
    client.set_logging_level("warning")
    assert server.wait_for("logging/setLevel")["params"] == {"level": "warning"}
    server.notify("notifications/message", {"level": "error", "logger": "db", "data": {"x": 1}})
    wait_until(lambda: logs)
    assert (logs[0].level, logs[0].logger, logs[0].data) == ("error", "db", {"x": 1})


# -- tools: structured output and validation -------------------------------------------


def test_structured_content_and_output_validation(full):
    server, client = full
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.handle(
        "tools/list",
        lambda p, c: {
            "tools": [{"name": "count", "inputSchema": {"type": "object"}, "outputSchema": schema}]
        },
    )
    replies = iter([{"n": 3}, {"n": "three"}, {"n": "three"}])
    server.handle("tools/call", lambda p, c: {"content": [], "structuredContent": next(replies)})
    assert client.call_tool("count", validate=True).structured_content == {"n": 3}
    with pytest.raises(OutputValidationError, match="/n") as info:
        client.call_tool("count", validate=True)
    assert info.value.path == "/n"
    assert client.call_tool("count").structured_content == {"n": "three"}  # off by default


def test_output_validation_follows_a_changed_tool_list(full):
    server, client = full
    schemas = iter([{"type": "integer"}, {"type": "string"}])

    def tools(_p, _c):
        schema = {"type": "object", "properties": {"n": next(schemas)}, "required": ["n"]}
        return {
            "tools": [{"name": "count", "inputSchema": {"type": "object"}, "outputSchema": schema}]
        }

    server.handle("tools/list", tools)
    replies = iter([{"n": 3}, {"n": "three"}])
    server.handle("tools/call", lambda p, c: {"content": [], "structuredContent": next(replies)})
    changed = threading.Event()
    client.on_list_changed("tools", changed.set)
    assert client.call_tool("count", validate=True).structured_content == {"n": 3}
    server.notify("notifications/tools/list_changed")  # "n" is now a string
    assert changed.wait(5)
    assert client.call_tool("count", validate=True).structured_content == {"n": "three"}


# -- tasks -----------------------------------------------------------------------------


def test_task_augmented_call_and_task_methods(full):
    server, client = full
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": 1000,
        "pollInterval": 10,
    }
    states = iter(["working", "completed"])
    server.handle("tools/call", lambda p, c: {"task": task})
    server.handle("tasks/get", lambda p, c: {**task, "status": next(states)})
    server.handle("tasks/result", lambda p, c: {"content": [{"type": "text", "text": "done"}]})
    server.handle("tasks/list", lambda p, c: {"tasks": [task]})
    server.handle("tasks/cancel", lambda p, c: {**task, "status": "cancelled"})
    statuses = []
    client.tasks.on_status(statuses.append)
    handle = client.tasks.call_tool("job", {"a": 1}, ttl=1000)
    assert server.wait_for("tools/call")["params"]["task"] == {"ttl": 1000}
    assert handle.task_id == "t1" and handle.status == "working"
    assert handle.wait(timeout=5).status == "completed"
    assert handle.result().text == "done"
    assert [t.task_id for t in client.tasks.list()] == ["t1"]
    # by id: the handle, completed, keeps its state (a finished task's status cannot change)
    assert client.tasks.cancel("t1").status == "cancelled"
    server.notify("notifications/tasks/status", {**task, "status": "failed"})
    wait_until(lambda: statuses)
    assert statuses[0].status == "failed"


def test_the_old_names_of_the_task_methods_still_work_and_say_where_they_went(full):
    server, client = full
    task = {"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z"}
    server.handle("tasks/list", lambda p, c: {"tasks": [task]})
    server.handle("tasks/get", lambda p, c: {**task, "lastUpdatedAt": "2026-01-01T00:00:01Z"})
    with pytest.warns(DeprecationWarning, match=r"client\.list_tasks is now client\.tasks\.list"):
        assert [t.task_id for t in client.list_tasks()] == ["t1"]
    with pytest.warns(DeprecationWarning, match=r"client\.get_task is now client\.tasks\.get"):
        assert client.get_task("t1").last_updated_at == "2026-01-01T00:00:01Z"
    server.handle("tools/call", lambda p, c: {"task": task})
    with pytest.warns(DeprecationWarning, match=r"client\.tasks\.call_tool"):
        handle = client.call_tool("job", task={"ttl": 500})  # the 0.1.0 spelling
    assert server.wait_for("tools/call")["params"]["task"] == {"ttl": 500}
    assert handle.task_id == "t1"
    assert "client.tasks.on_status" in (Client.on_task_status.__doc__ or "")
    assert "client.skills.load" in (Client.load_skill.__doc__ or "")


def test_task_call_needs_the_server_capability():
    server = MockServer(capabilities={"tools": {}})
    client = server.connect(Client())
    try:
        with pytest.raises(CapabilityError, match="tasks.requests.tools.call"):
            client.tasks.call_tool("job")
    finally:
        client.close()


# -- capabilities ----------------------------------------------------------------------


def test_a_capability_is_declared_when_present_and_neither_null_nor_false_at_any_depth():
    """The per-call check reads a set of paths made once per negotiation; it must say what
    walking the server's capabilities path by path said."""
    wire = {
        "tools": {},
        "resources": {"subscribe": False, "listChanged": True},
        "logging": None,
        "experimental": {"a.b": {}, "x": {"deep": {"zero": 0, "empty": ""}}},
    }
    state = ServerState("2025-11-25", ServerCapabilities.from_wire(wire), None, None)

    def walked(path: str) -> bool:
        caps: Any = wire
        for part in path.split("."):
            caps = caps.get(part) if isinstance(caps, dict) else None
        return caps not in (None, False)

    paths = [
        "tools",
        "tools.listChanged",
        "resources",
        "resources.subscribe",
        "resources.listChanged",
        "logging",
        "prompts",
        "experimental.x.deep",
        "experimental.x.deep.zero",
        "experimental.x.deep.empty",
        "experimental.a",
        "experimental.a.b",
    ]
    assert {path: state.has(path) for path in paths} == {path: walked(path) for path in paths}
    assert state.has("resources.listChanged") and not state.has("resources.subscribe")


def test_unadvertised_methods_raise_before_sending_unless_not_strict():
    server = MockServer(capabilities={})
    server.handle("resources/list", lambda p, c: {"resources": []})
    client = server.connect(Client())
    try:
        count = len(server.received)
        for call in (
            client.list_tools,
            client.list_resources,
            client.list_prompts,
            lambda: client.set_logging_level("info"),
            lambda: client.complete(PromptReference(name="p"), "a", ""),
        ):
            with pytest.raises(CapabilityError):
                call()
        assert len(server.received) == count
    finally:
        client.close()
    lenient = server_client = MockServer(capabilities={})
    lenient.handle("resources/list", lambda p, c: {"resources": []})
    client = server_client.connect(Client(strict_capabilities=False))
    try:
        assert client.list_resources() == []
    finally:
        client.close()


def test_fields_of_older_versions_are_optional_and_newer_fields_kept():
    server = MockServer(protocol_version="2024-11-05", capabilities={"tools": {}})
    server.handle(
        "tools/list",
        lambda p, c: {
            "tools": [{"name": "old", "inputSchema": {"type": "object"}, "futureField": {"x": 1}}]
        },
    )
    client = server.connect(Client())
    try:
        tool = client.list_tools()[0]
        assert tool.title is None and tool.output_schema is None
        assert tool.to_wire()["futureField"] == {"x": 1}
    finally:
        client.close()


# -- sampling --------------------------------------------------------------------------


def test_sampling_handler_gets_typed_params_and_capability_is_declared():
    server = MockServer()
    seen = []

    def sample(params: CreateMessageRequestParams):
        seen.append(params)
        return CreateMessageResult(role="assistant", content=TextContent(text="42"), model="m")

    client = connect_with(server, sampling=(sample, False))
    try:
        assert server.wait_for("initialize")["params"]["capabilities"]["sampling"] == {}
        result = server.request(
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
                "maxTokens": 10,
            },
        )
        assert result == {
            "role": "assistant",
            "content": {"type": "text", "text": "42"},
            "model": "m",
        }
        assert seen[0].max_tokens == 10
        with pytest.raises(RpcError, match="tools") as info:
            server.request(
                "sampling/createMessage",
                {"messages": [], "maxTokens": 1, "tools": [{"name": "t", "inputSchema": {}}]},
            )
        assert info.value.code == -32602
    finally:
        client.close()


def test_sampling_with_tools_declares_it():
    server = MockServer()
    client = connect_with(
        server,
        sampling=(
            lambda p: {"role": "assistant", "model": "m", "content": {"type": "text", "text": ""}},
            True,
        ),
    )
    try:
        assert server.wait_for("initialize")["params"]["capabilities"]["sampling"] == {"tools": {}}
        server.request(
            "sampling/createMessage",
            {"messages": [], "maxTokens": 1, "tools": [{"name": "t", "inputSchema": {}}]},
        )
    finally:
        client.close()


def test_a_handler_cancelled_by_the_server_sees_its_signal():
    server = MockServer()
    started, cancelled = threading.Event(), threading.Event()

    def sample(params, ctx):
        started.set()
        if ctx.signal.wait(5):
            cancelled.set()
        return {"role": "assistant", "model": "m", "content": {"type": "text", "text": ""}}

    client = connect_with(server, sampling=(sample, False))
    try:
        server.transport.send(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "sampling/createMessage",
                "params": {"messages": [], "maxTokens": 1},
            }
        )
        assert started.wait(5)
        server.notify("notifications/cancelled", {"requestId": 99, "reason": "changed my mind"})
        assert cancelled.wait(5)
        client.ping()
        assert not any(m.get("id") == 99 for m in server.received)  # no answer once cancelled
    finally:
        client.close()


# -- elicitation -----------------------------------------------------------------------


def test_elicitation_modes_are_declared_only_when_given_a_handler():
    server = MockServer()
    client = connect_with(server, form=lambda p: {"action": "decline"})
    try:
        assert server.wait_for("initialize")["params"]["capabilities"]["elicitation"] == {
            "form": {}
        }
        with pytest.raises(RpcError) as info:
            server.request(
                "elicitation/create",
                {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"},
            )
        assert info.value.code == -32602
    finally:
        client.close()


def test_form_defaults_are_applied_when_the_handler_accepts_without_them():
    server = MockServer()
    seen = []

    def form(params: ElicitRequestFormParams):
        seen.append(params)
        return ElicitResult(action="accept", content={"name": "bob"})

    client = connect_with(server, form=form)
    try:
        result = server.request(
            "elicitation/create",
            {
                "message": "who?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "age": {"type": "integer", "default": 30},
                        "color": {"type": "string", "enum": ["r", "g"], "default": "g"},
                    },
                },
            },
        )
        assert result == {"action": "accept", "content": {"name": "bob", "age": 30, "color": "g"}}
        assert seen[0].mode == "form" and seen[0].message == "who?"
    finally:
        client.close()


def test_url_elicitation_and_completion_notification():
    server = MockServer()
    urls, completed = [], []

    def url(params: ElicitRequestURLParams):
        urls.append(params.url)
        return {"action": "accept"}

    client = connect_with(server, url=url)
    client.on_notification(
        "notifications/elicitation/complete", lambda n: completed.append(n.params["elicitationId"])
    )
    try:
        assert server.wait_for("initialize")["params"]["capabilities"]["elicitation"] == {"url": {}}
        assert server.request(
            "elicitation/create",
            {
                "mode": "url",
                "message": "sign in",
                "url": "https://auth.example/x",
                "elicitationId": "e1",
            },
        ) == {"action": "accept"}
        server.notify("notifications/elicitation/complete", {"elicitationId": "e1"})
        wait_until(lambda: completed)
        assert urls == ["https://auth.example/x"] and completed == ["e1"]
    finally:
        client.close()


def test_url_elicitation_required_error_is_typed(full):
    server, client = full
    data = {
        "elicitations": [
            {
                "mode": "url",
                "url": "https://auth.example/a",
                "message": "sign in",
                "elicitationId": "e9",
            }
        ]
    }

    def need_url(params, ctx):
        raise RpcError(-32042, "URL elicitation required", data)

    server.handle("tools/call", need_url)
    with pytest.raises(UrlElicitationRequired) as info:
        client.call_tool("x")
    assert info.value.urls == ["https://auth.example/a"]
    assert info.value.elicitations[0]["elicitationId"] == "e9"


def test_handlers_must_be_registered_before_connect(full):
    _server, client = full
    with pytest.raises(Exception, match="before connect"):
        client.on_sampling(lambda p: None)


def test_unknown_notifications_are_harmless(full):
    server, client = full
    server.notify("notifications/something_new", {"x": 1})
    server.handle("tools/call", lambda p, c: NO_REPLY if False else {"content": []})
    assert client.call_tool("x").content == []
