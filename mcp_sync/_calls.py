"""Typed requests over a :class:`~mcp_sync._connection.Connection`: the MCP methods the typed API
sends (:class:`Call`, made from the method's row in :mod:`mcp_sync.protocol.methods`: its name,
its result's model, what the server must declare for it, the field holding a list's items), and
three ways to send one: a result parsed
into its model, one page of a paginated list, every item of one. The connection itself deals
in raw results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic

from ._connection import Connection, ProgressHandler
from ._deadline import call_deadline, under
from ._numbers import call_timeout
from .abort import AbortSignal
from .protocol import methods
from .protocol.pagination import follow_cursors
from .protocol.types import (
    CallToolResult,
    CancelTaskResult,
    CompleteResult,
    CreateTaskResult,
    DiscoverResult,
    GetPromptResult,
    GetSkillResult,
    GetTaskResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListSkillsResult,
    ListTasksResult,
    ListToolsResult,
    ReadResourceResult,
)
from .protocol.validation import parse_result

__all__ = ["Call", "call", "every", "page"]

_Model = TypeVar("_Model", bound=pydantic.BaseModel)


@dataclass(frozen=True)
class Call(Generic[_Model]):
    """One MCP method as the typed API sends it."""

    method: str
    result: type[_Model]
    #: The capability (a dotted path) the server must declare; None when the caller checks,
    #: because what is needed depends on the era or the version.
    capability: str | None = None
    #: Or the extension it must declare.
    extension: str | None = None
    #: For a paginated list: the result's field that holds the items.
    items: str = ""

    def check(self, connection: Connection) -> None:
        """Raise :class:`~mcp_sync.errors.CapabilityError` if the server did not declare
        what this method needs (and the client checks capabilities)."""
        if self.capability is not None:
            connection.require(self.method, self.capability)
        elif self.extension is not None:
            connection.require_extension(self.method, self.extension)

    @classmethod
    def of(cls, name: str) -> Call[Any]:
        """The call of the method ``name`` as its row in the table describes it."""
        row = methods.METHODS[name]
        assert row.result is not None, f"{name} has no result model"
        return Call(row.name, row.result, row.capability, row.extension, row.items)


TOOLS: Call[ListToolsResult] = Call.of("tools/list")
CALL_TOOL: Call[CallToolResult] = Call.of("tools/call")
RESOURCES: Call[ListResourcesResult] = Call.of("resources/list")
TEMPLATES: Call[ListResourceTemplatesResult] = Call.of("resources/templates/list")
READ_RESOURCE: Call[ReadResourceResult] = Call.of("resources/read")
PROMPTS: Call[ListPromptsResult] = Call.of("prompts/list")
GET_PROMPT: Call[GetPromptResult] = Call.of("prompts/get")
COMPLETE: Call[CompleteResult] = Call.of("completion/complete")
SKILLS: Call[ListSkillsResult] = Call.of("skills/list")
GET_SKILL: Call[GetSkillResult] = Call.of("skills/get")
DISCOVER: Call[DiscoverResult] = Call.of("server/discover")
#: A task-augmented ``tools/call`` (2025-11-25 core): its own result and capability.
CREATE_TASK = Call("tools/call", CreateTaskResult, "tasks.requests.tools.call")
GET_TASK: Call[GetTaskResult] = Call.of("tasks/get")
TASK_RESULT: Call[CallToolResult] = Call.of("tasks/result")
LIST_TASKS: Call[ListTasksResult] = Call.of("tasks/list")
CANCEL_TASK: Call[CancelTaskResult] = Call.of("tasks/cancel")


def call(
    connection: Connection,
    spec: Call[_Model],
    params: Mapping[str, Any] | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """Send ``spec``'s request with ``params`` and parse its result."""
    timeout = call_timeout(timeout, spec.method)  # before the capability: a caller's mistake
    spec.check(connection)
    raw = connection.request(
        spec.method, params, timeout=timeout, signal=signal, on_progress=on_progress
    )
    return parse_result(spec.method, spec.result, raw)


def page(
    connection: Connection,
    spec: Call[_Model],
    cursor: str | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """One page of a paginated list (the first for ``cursor`` None)."""
    params = {"cursor": cursor} if cursor else None
    return call(connection, spec, params, timeout, signal, on_progress)


def every(
    connection: Connection,
    spec: Call[_Model],
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> list[Any]:
    """The items of every page of a paginated list. ``timeout`` (default the connection's
    ``request_timeout``) bounds the whole listing: each page gets what is left of it, and
    progress on a page renews it (never past ``max_total_timeout``)."""
    limit = connection.request_timeout if timeout is None else timeout
    deadline = call_deadline(limit, connection.max_total_timeout, what=spec.method)
    outer_note = deadline.note
    answered = 0

    def fetch(cursor: str | None) -> _Model:
        if answered:  # not sent only to be cancelled
            deadline.check(spec.method)
        return page(connection, spec, cursor, timeout, signal, on_progress)

    items: list[Any] = []
    deadline.note = "the timeout bounds the whole listing"
    try:
        with under(deadline):
            for each in follow_cursors(spec.method, fetch, _next_cursor):
                items += getattr(each, spec.items)
                answered += 1
                pages = f"{answered} page{'s' if answered > 1 else ''} answered"
                deadline.note = f"the timeout bounds the whole listing; {pages}"
    finally:
        deadline.note = outer_note
    return items


def _next_cursor(result: Any) -> str | None:
    return getattr(result, "next_cursor", None)
