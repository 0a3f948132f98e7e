"""Types every part of the protocol uses: results, request and notification params,
implementation info, capabilities, the ``initialize`` handshake, roots, progress, logging,
cancellation and pagination.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from ._base import McpModel, MetaModel, Number
from .content import Icon

__all__ = [
    "CacheableResult",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "ClientTasksCapability",
    "CompletionsCapability",
    "ElicitationCapability",
    "EmptyResult",
    "Implementation",
    "InitializeRequestParams",
    "InitializeResult",
    "InputResponseRequestParams",
    "ListRootsResult",
    "LoggingCapability",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressNotificationParams",
    "ProgressToken",
    "PromptsCapability",
    "RequestId",
    "RequestParams",
    "ResourcesCapability",
    "Result",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ServerTasksCapability",
    "SetLevelRequestParams",
    "ToolsCapability",
]

RequestId = str | int
ProgressToken = str | int
LoggingLevel = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]


# -- results and params -------------------------------------------------------------------


class Result(MetaModel):
    """Base of every result.

    ``result_type`` is ``"complete"`` or ``"input_required"`` from 2026-07-28 on; older servers
    omit it, which means ``"complete"``.
    """

    result_type: str | None = None

    @property
    def is_complete(self) -> bool:
        """True unless the server asked for more input (or another, extension-defined step)."""
        return self.result_type is None or self.result_type == "complete"


#: The result of requests that return nothing (``ping``, ``resources/subscribe``, ...).
EmptyResult = Result


class PaginatedResult(Result):
    """A result page; ``next_cursor`` is None (absent or ``null``) on the last page."""

    next_cursor: str | None = None


class CacheableResult(Result):
    """A result the client may cache (2026-07-28): for ``ttl_ms`` milliseconds, in ``cache_scope``.

    ``ttl_ms`` absent or negative means 0; ``cache_scope`` is ``"public"`` or ``"private"``
    (other values are kept; treat them as private).
    """

    ttl_ms: Number | None = None
    cache_scope: str | None = None


class RequestParams(MetaModel):
    """Base of request params: ``_meta`` carries ``progressToken`` and, from 2026-07-28, the
    protocol version, client info and capabilities."""


class NotificationParams(MetaModel):
    """Base of notification params (also the params of the ``*/list_changed`` notifications)."""


class PaginatedRequestParams(RequestParams):
    """Params of the ``*/list`` requests."""

    cursor: str | None = None


class InputResponseRequestParams(RequestParams):
    """Params of a request that may be retried after ``input_required`` (2026-07-28).

    ``input_responses`` maps each key of the server's ``inputRequests`` to the wire form of
    its answer (an ElicitResult, CreateMessageResult or ListRootsResult).
    """

    input_responses: dict[str, dict[str, Any]] | None = None
    request_state: str | None = None


# -- implementation info and capabilities ------------------------------------------------


class Implementation(McpModel):
    """Name and version of an MCP client or server (``clientInfo`` / ``serverInfo``)."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    icons: list[Icon] | None = None
    website_url: str | None = None


class ToolsCapability(McpModel):
    list_changed: StrictBool | None = None


class PromptsCapability(McpModel):
    list_changed: StrictBool | None = None


class ResourcesCapability(McpModel):
    subscribe: StrictBool | None = None
    list_changed: StrictBool | None = None


class LoggingCapability(McpModel):
    """Present when the server can send log messages (a model, so ``{}`` is truthy)."""


class CompletionsCapability(McpModel):
    """Present when the server supports ``completion/complete`` (2025-03-26)."""


class ServerTasksCapability(McpModel):
    """Task support of a 2025-11-25 server; ``requests`` is e.g. ``{"tools": {"call": {}}}``."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None


class ServerCapabilities(McpModel):
    """What the server offers. An absent capability is None; present ones are truthy."""

    experimental: dict[str, dict[str, Any]] | None = None
    logging: LoggingCapability | None = None
    completions: CompletionsCapability | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    #: Extensions by prefixed id, e.g. ``io.modelcontextprotocol/tasks`` (2026-07-28).
    extensions: dict[str, dict[str, Any]] | None = None


class RootsCapability(McpModel):
    list_changed: StrictBool | None = None


class SamplingCapability(McpModel):
    context: dict[str, Any] | None = None
    tools: dict[str, Any] | None = None


class ElicitationCapability(McpModel):
    """``{}`` means form mode only; ``url`` (2025-11-25) enables URL mode."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class ClientTasksCapability(McpModel):
    """Task support of a 2025-11-25 client; ``requests`` is e.g. ``{"sampling": {...}}``."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None


class ClientCapabilities(McpModel):
    """What this client offers the server."""

    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


# -- initialize (handshake era) ------------------------------------------------------------


class InitializeRequestParams(RequestParams):
    protocol_version: str
    capabilities: ClientCapabilities = Field(default_factory=ClientCapabilities)
    client_info: Implementation

    _always_sent = frozenset({"capabilities"})


class InitializeResult(Result):
    protocol_version: str
    capabilities: ServerCapabilities = Field(default_factory=ServerCapabilities)
    server_info: Implementation
    instructions: str | None = None

    _always_sent = frozenset({"capabilities"})


# -- roots ------------------------------------------------------------------------------


class Root(MetaModel):
    """A directory or file the server may work in; ``uri`` is a ``file://`` URI.

    ``Root("file:///home/me/project", "project")`` works as well as keyword arguments.
    """

    uri: str
    name: str | None = None

    def __init__(self, uri: str | None = None, name: str | None = None, **data: Any) -> None:
        if uri is not None:
            data["uri"] = uri
        if name is not None:
            data["name"] = name
        super().__init__(**data)


class ListRootsResult(Result):
    roots: list[Root]


# -- utilities ----------------------------------------------------------------------------


class ProgressNotificationParams(NotificationParams):
    progress_token: ProgressToken
    progress: Number
    total: Number | None = None
    message: str | None = None


class SetLevelRequestParams(RequestParams):
    level: LoggingLevel


class LoggingMessageNotificationParams(NotificationParams):
    level: LoggingLevel
    logger: str | None = None
    data: Any = None

    _always_sent = frozenset({"data"})


class CancelledNotificationParams(NotificationParams):
    """``request_id`` is required except for task cancellation in 2025-11-25."""

    request_id: RequestId | None = None
    reason: str | None = None
