"""Typed requests over a :class:`~mcp_sync._connection.Connection`: the MCP methods the typed API
sends, each described once (:class:`Call`: its name, its result's model, what the server must
declare for it, the field holding a list's items), and three ways to send one: a result parsed
into its model, one page of a paginated list, every item of one. The connection itself deals
in raw results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic

from ._connection import Connection, ProgressHandler
from ._pending import SHARED_DEADLINE, SharedDeadline
from .abort import AbortSignal
from .errors import RequestTimeout
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
from .protocol.types.skills import SKILLS_EXTENSION
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


TOOLS = Call("tools/list", ListToolsResult, "tools", items="tools")
CALL_TOOL = Call("tools/call", CallToolResult)  # "tools", or a task capability: by the caller
RESOURCES = Call("resources/list", ListResourcesResult, "resources", items="resources")
TEMPLATES = Call(
    "resources/templates/list", ListResourceTemplatesResult, "resources", items="resource_templates"
)
READ_RESOURCE = Call("resources/read", ReadResourceResult, "resources")
PROMPTS = Call("prompts/list", ListPromptsResult, "prompts", items="prompts")
GET_PROMPT = Call("prompts/get", GetPromptResult, "prompts")
COMPLETE = Call("completion/complete", CompleteResult)  # declared from 2025-03-26 on
SKILLS = Call("skills/list", ListSkillsResult, extension=SKILLS_EXTENSION, items="skills")
GET_SKILL = Call("skills/get", GetSkillResult, extension=SKILLS_EXTENSION)
DISCOVER = Call("server/discover", DiscoverResult)
# Tasks: the 2025-11-25 core needs the capabilities below; the 2026 extension is checked by
# the caller.
CREATE_TASK = Call("tools/call", CreateTaskResult, "tasks.requests.tools.call")
GET_TASK = Call("tasks/get", GetTaskResult)
TASK_RESULT = Call("tasks/result", CallToolResult)
LIST_TASKS = Call("tasks/list", ListTasksResult, "tasks.list", items="tasks")
CANCEL_TASK = Call("tasks/cancel", CancelTaskResult, "tasks.cancel")


def call(
    connection: Connection,
    spec: Call[_Model],
    params: Mapping[str, Any] | None,
    timeout: float | None,
    signal: AbortSignal | None,
    on_progress: ProgressHandler | None = None,
) -> _Model:
    """Send ``spec``'s request with ``params`` and parse its result."""
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
    shared = SharedDeadline(limit, connection.max_total_timeout)
    answered = 0

    def fetch(cursor: str | None) -> _Model:
        if answered and shared.expired():  # not sent only to be cancelled
            capped = shared.deadline >= shared.total_deadline
            spent = connection.max_total_timeout if capped else limit
            raise RequestTimeout(spec.method, spent or 0.0, shared.describe())
        return page(connection, spec, cursor, timeout, signal, on_progress)

    items: list[Any] = []
    reset = SHARED_DEADLINE.set(shared)
    try:
        for each in follow_cursors(spec.method, fetch, lambda p: getattr(p, "next_cursor", None)):
            items += getattr(each, spec.items)
            answered += 1
            shared.progress = f"{answered} page{'s' if answered > 1 else ''} answered"
    finally:
        SHARED_DEADLINE.reset(reset)
    return items
