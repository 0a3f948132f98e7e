"""OpenTelemetry spans for requests, recorded by opentelemetry-sdk's in-memory exporter, against
real servers: the official SDK's server in-process (its own spans join the client's trace
through _meta), mcp-server-time over stdio, the SDK server over Streamable HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import mcp_sync
from mcp_sync import RpcError
from mcp_sync._connection import hooks as _hooks
from mcp_sync.integrations import tracing
from mcp_sync.testing import MockServer
from tests.helpers.integration_servers import load_server
from tests.helpers.support import SERVERS, HttpServer, free_port

TIME = str(Path(sys.executable).parent / "mcp-server-time")
_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans():
    """The process-wide tracer provider (the SDK server's spans use the global one), set once;
    each test sees only its own spans, and leaves the client uninstrumented."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    tracing.instrument()
    yield _EXPORTER
    tracing.uninstrument()
    _EXPORTER.clear()


def client_spans(exporter):
    return [s for s in exporter.get_finished_spans() if s.instrumentation_scope.name == "mcp_sync"]


def test_server_spans_join_the_clients_trace(spans):
    server = load_server("sdk_server.py").server
    tracer = trace.get_tracer("my-agent")
    with mcp_sync.connect(server) as client, tracer.start_as_current_span("agent step") as step:
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}
    (call,) = [s for s in client_spans(spans) if s.name == "tools/call add"]
    assert call.kind == SpanKind.CLIENT
    assert call.parent.span_id == step.get_span_context().span_id
    assert dict(call.attributes) == {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "mcp.protocol.version": "2026-07-28",
        "mcp_sync.era": "stateless",
        "mcp_sync.server.name": "sdk-fixture",
    }
    assert call.status.status_code == StatusCode.UNSET
    # the SDK server's own SERVER span, a child of ours in the same trace (context via _meta)
    (served,) = [
        s
        for s in spans.get_finished_spans()
        if s.kind == SpanKind.SERVER and s.name == "tools/call add"
    ]
    assert served.context.trace_id == call.context.trace_id == step.get_span_context().trace_id
    assert served.parent.span_id == call.context.span_id


def test_outcomes_tool_error_and_rpc_error(spans):
    with mcp_sync.connect(load_server("sdk_server.py").server, protocol="handshake") as client:
        assert client.call_tool("fail", {}).is_error
        with pytest.raises(RpcError) as caught:
            client.get_prompt("no-such-prompt", {})
        client.read_resource("config://app")
    by_name = {s.name: s for s in client_spans(spans)}
    failed = by_name["tools/call fail"]
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["mcp_sync.era"] == "handshake"
    assert failed.attributes["mcp.protocol.version"] == "2025-11-25"
    rejected = by_name["prompts/get no-such-prompt"]
    assert rejected.attributes["gen_ai.prompt.name"] == "no-such-prompt"
    assert rejected.attributes["error.type"] == str(caught.value.code)
    assert rejected.attributes["rpc.response.status_code"] == str(caught.value.code)
    assert rejected.status.status_code == StatusCode.ERROR
    assert by_name["resources/read"].attributes["mcp.resource.uri"] == "config://app"


def test_stdio_server_attributes(spans):
    with mcp_sync.connect([TIME], request_timeout=20) as client:
        client.list_tools()
        client.call_tool("get_current_time", {"timezone": "UTC"})
    names = [s.name for s in client_spans(spans)]
    assert "tools/list" in names and "tools/call get_current_time" in names
    call = next(s for s in client_spans(spans) if s.name == "tools/call get_current_time")
    assert call.attributes["network.transport"] == "pipe"
    assert call.attributes["mcp_sync.server.name"] == "mcp-time"


def test_trace_context_goes_in_meta_and_a_timeout_is_recorded(spans):
    server = MockServer(capabilities={"tools": {}})
    server.handle("tools/call")(lambda params, ctx: {"content": []})
    client = server.connect(mcp_sync.Client(protocol="handshake"))
    with trace.get_tracer("t").start_as_current_span("outer"):
        client.call_tool("echo", {"x": 1})
    call = client_spans(spans)[-1]
    sent = next(m for m in server.received if m.get("method") == "tools/call")
    ctx = call.context
    assert sent["params"]["_meta"]["traceparent"].startswith(
        f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-"
    )
    assert sent["params"]["arguments"] == {"x": 1}

    from mcp_sync.testing import NO_REPLY

    server.handle("tools/call")(lambda params, ctx: NO_REPLY)
    with pytest.raises(mcp_sync.RequestTimeout):
        client.call_tool("echo", {}, timeout=0.2)
    timed_out = client_spans(spans)[-1]
    assert timed_out.attributes["error.type"] == "RequestTimeout"
    assert timed_out.status.status_code == StatusCode.ERROR
    client.close()


def test_uninstrument_stops_tracing(spans):
    tracing.uninstrument()
    assert _hooks.around_request is None and not tracing.instrumented()
    with mcp_sync.connect(load_server("sdk_server.py").server) as client:
        client.call_tool("add", {"a": 1, "b": 1})
    assert client_spans(spans) == []
    tracing.instrument()
    assert tracing.instrumented()


def test_http_server_address_port_and_session(spans):
    port = free_port()
    argv = [sys.executable, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)]
    with (
        HttpServer(argv, port) as http,
        mcp_sync.connect(http.url(), protocol="handshake") as client,
    ):
        client.call_tool("add", {"a": 2, "b": 2})
    call = next(s for s in client_spans(spans) if s.name == "tools/call add")
    assert call.attributes["network.transport"] == "tcp"
    assert (call.attributes["server.address"], call.attributes["server.port"]) == (
        "127.0.0.1",
        port,
    )
    assert len(call.attributes["mcp.session.id"]) >= 16  # the Mcp-Session-Id the server gave


def test_nothing_optional_is_imported_by_plain_use():
    """Uninstrumented, a client imports no integration and no OpenTelemetry: a program that
    does not ask for them pays nothing for them being installed."""
    import subprocess

    code = f"""
import sys, mcp_sync
with mcp_sync.connect([{TIME!r}], request_timeout=20) as client:
    client.call_tool("get_current_time", {{"timezone": "UTC"}})
loaded = sorted(m for m in sys.modules if m.split(".")[0] in (
    "opentelemetry", "langchain_core", "smolagents", "llama_index", "mcp", "mcp_types", "fastmcp")
    or m.startswith("mcp_sync.integrations"))
print(loaded)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
