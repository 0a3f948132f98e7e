"""Stand-ins that docs pages import in hidden ``<!-- test -->`` setup.

``demo_server()`` is a MockServer that answers every request the client and features pages
show (tools with progress and tasks, resources, templates, subscriptions, prompts,
completion, logging), so that their examples run unchanged.
"""

from __future__ import annotations

from typing import Any

from mcp_sync.testing import MockServer

CAPABILITIES = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {},
    "completions": {},
    "logging": {},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}
WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "outputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}},
    },
}
TASK = {
    "taskId": "task-1",
    "status": "working",
    "pollInterval": 10,
    "createdAt": "2026-11-30T00:00:00Z",
    "lastUpdatedAt": "2026-11-30T00:00:00Z",
}


def demo_server() -> MockServer:
    server = MockServer(name="demo", capabilities=CAPABILITIES, instructions="A demo server.")
    state = {"polls": 0}

    @server.handle("tools/list")
    def tools(params: dict[str, Any], ctx: Any) -> Any:
        return {
            "tools": [
                WEATHER,
                {"name": "long_job", "inputSchema": {"type": "object"}},
                {"name": "x", "inputSchema": {"type": "object"}},
            ]
        }

    @server.handle("tools/call", threaded=True)
    def call(params: dict[str, Any], ctx: Any) -> Any:
        if "task" in params:
            return {"task": TASK}
        if (params.get("_meta") or {}).get("progressToken") is not None:
            for step in (1, 2):
                ctx.progress(step, 2, f"step {step}")
        if params["name"] == "weather":
            city = params["arguments"].get("city", "?")
            data = {"city": city, "temperature": 21.5}
            return {
                "content": [{"type": "text", "text": f"{city}: 21.5 C"}],
                "structuredContent": data,
            }
        return {"content": [{"type": "text", "text": f"{params['name']} done"}]}

    @server.handle("tasks/get")
    def get_task(params: dict[str, Any], ctx: Any) -> Any:
        state["polls"] += 1
        return {**TASK, "status": "completed" if state["polls"] > 1 else "working"}

    server.handle("tasks/result", lambda p, c: {"content": [{"type": "text", "text": "job done"}]})
    server.handle("tasks/cancel", lambda p, c: {**TASK, "status": "cancelled"})
    server.handle("tasks/list", lambda p, c: {"tasks": [TASK]})
    server.handle(
        "resources/list",
        lambda p, c: {
            "resources": [
                {"uri": "config://app", "name": "app_config", "mimeType": "application/json"}
            ]
        },
    )
    server.handle(
        "resources/templates/list",
        lambda p, c: {
            "resourceTemplates": [{"uriTemplate": "greeting://{name}", "name": "greeting"}]
        },
    )
    server.handle(
        "resources/read",
        lambda p, c: {
            "contents": [
                {"uri": p["uri"], "mimeType": "application/json", "text": '{"debug": true}'}
            ]
        },
    )
    server.handle("resources/subscribe", lambda p, c: {})
    server.handle("resources/unsubscribe", lambda p, c: {})
    server.handle(
        "prompts/list",
        lambda p, c: {
            "prompts": [{"name": "review", "arguments": [{"name": "code", "required": True}]}]
        },
    )
    server.handle(
        "prompts/get",
        lambda p, c: {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": f"Review: {p['arguments']['code']}"},
                }
            ]
        },
    )
    server.handle("completion/complete", lambda p, c: {"completion": {"values": ["python"]}})
    server.handle("logging/setLevel", lambda p, c: {})
    server.handle("vendor/method", lambda p, c: {"ok": True})
    return server


def demo_transport() -> Any:
    """A started demo server's client-side transport."""
    server = demo_server()
    server.start()
    return server.client_transport
