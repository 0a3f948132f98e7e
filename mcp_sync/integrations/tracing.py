"""OpenTelemetry spans for every MCP request a client sends (extra ``tracing``).

::

    from mcp_sync.integrations import tracing

    tracing.instrument()                 # every Client in this process, from now on
    client.call_tool("add", {"a": 1})    # a CLIENT span "tools/call add"
    tracing.uninstrument()

Spans follow the OpenTelemetry semantic conventions for MCP (development status, in the GenAI
conventions): the name is ``{mcp.method.name} {target}`` (the tool or prompt name, when
there is one), the kind is CLIENT, and the attributes are ``mcp.method.name``,
``mcp.protocol.version``, ``gen_ai.operation.name`` (``execute_tool``) and ``gen_ai.tool.name``
for ``tools/call``, ``gen_ai.prompt.name`` for ``prompts/get``, ``mcp.resource.uri`` for the
resource methods, ``mcp.session.id`` (Streamable HTTP), ``network.transport`` (``pipe`` for
stdio, ``tcp`` for HTTP), ``server.address`` / ``server.port`` (HTTP), and on failure
``error.type`` with the span status ERROR: the JSON-RPC error code (also in
``rpc.response.status_code``), ``tool_error`` for a tool result with ``isError``, or the
exception's class name (a timeout, a closed connection). Two attributes are mcp_sync's own,
for what the conventions do not name: ``mcp_sync.server.name`` (the server's ``serverInfo``
name) and ``mcp_sync.era`` (``handshake`` or ``stateless``). The JSON-RPC request id is not
recorded: ids are assigned below the layer that traces.

The current trace context is injected into each request's ``params._meta`` as W3C
``traceparent`` / ``tracestate`` (and ``baggage``), the keys SEP-414 reserves, through the
globally configured propagator: a server that extracts them (the official Python SDK's does)
puts its spans in the client's trace.

Requests made before the handshake completes (``initialize``, ``server/discover``) are not
traced. Uninstrumented, the request path pays one None check (``mcp_sync._connection.hooks``); this
module and OpenTelemetry are imported only by whoever calls :func:`instrument`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, StatusCode

from .._connection import hooks as _hooks
from ..errors import RpcError
from ..protocol import methods

if TYPE_CHECKING:
    from .._connection.negotiation import ServerState
    from .._session.outgoing import Outgoing
    from ..transports.base import Transport

__all__ = ["instrument", "instrumented", "uninstrument"]

TRACER_NAME = "mcp_sync"
_NETWORK_TRANSPORT = {"stdio": "pipe", "pipe": "pipe", "http": "tcp", "sse": "tcp"}


def instrument(tracer_provider: trace.TracerProvider | None = None) -> None:
    """Trace every request of every client in this process, with a tracer from
    ``tracer_provider`` (by default the global one). Calling it again replaces the tracer."""
    tracer = trace.get_tracer(TRACER_NAME, tracer_provider=tracer_provider)
    _hooks.around_request = functools.partial(_traced, tracer)


def uninstrument() -> None:
    """Stop tracing requests (the request path is back to its untraced cost)."""
    _hooks.around_request = None


def instrumented() -> bool:
    """Whether :func:`instrument` is in effect."""
    return _hooks.around_request is not None


def _traced(
    tracer: trace.Tracer,
    server: ServerState | None,
    transport: Transport | None,
    outgoing: Outgoing,
    send: Callable[[Outgoing], Any],
) -> Any:
    method, row, params = outgoing.method, outgoing.row, outgoing.params
    target = _target(row, params)
    with tracer.start_as_current_span(
        f"{method} {target}" if target else method,
        kind=SpanKind.CLIENT,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        if span.is_recording():
            span.set_attributes(_attributes(server, transport, row, method, params, target))
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        if carrier:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), **carrier}
            outgoing = outgoing.with_params(params)
        try:
            result = send(outgoing)
        except RpcError as exc:
            code = str(exc.code)
            span.set_attributes({"error.type": code, "rpc.response.status_code": code})
            span.set_status(StatusCode.ERROR, exc.message)
            raise
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            span.record_exception(exc)
            span.set_status(StatusCode.ERROR, str(exc))
            raise
        if (
            row.span_operation == "execute_tool"
            and isinstance(result, dict)
            and result.get("isError") is True
        ):
            span.set_attribute("error.type", "tool_error")
            span.set_status(StatusCode.ERROR)
        return result


def _target(row: methods.Method[Any], params: dict[str, Any] | None) -> str | None:
    if row.span_target is not None and params:
        name = params.get(row.span_target)
        return name if isinstance(name, str) else None
    return None


def _attributes(
    server: ServerState | None,
    transport: Transport | None,
    row: methods.Method[Any],
    method: str,
    params: dict[str, Any] | None,
    target: str | None,
) -> dict[str, Any]:
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if target is not None and row.span_operation is not None:
        attributes["gen_ai.operation.name"] = row.span_operation
    for param, attribute in row.span_params if params else ():
        value = params.get(param) if params else None
        if isinstance(value, str):
            attributes[attribute] = value
    info = None
    if server is not None:  # None for a request of the handshake itself
        attributes["mcp.protocol.version"] = server.protocol_version
        attributes["mcp_sync.era"] = server.era
        info = server.server_info
    if info is not None:
        attributes["mcp_sync.server.name"] = info.name
    if transport is not None:
        network = _NETWORK_TRANSPORT.get(transport.kind)
        if network is not None:
            attributes["network.transport"] = network
        url = getattr(transport, "url", None)
        if isinstance(url, str):
            parts = urlsplit(url)
            if parts.hostname:
                attributes["server.address"] = parts.hostname
            if parts.port:
                attributes["server.port"] = parts.port
        session_id = getattr(transport, "session_id", None)
        if isinstance(session_id, str):
            attributes["mcp.session.id"] = session_id
    return attributes
