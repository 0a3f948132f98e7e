"""Every fact the client knows about an MCP request method, in one table (:data:`METHODS`).

Everything that depends on which method a message carries is decided from its row here: the
model its result is parsed into, what the server must declare for it, the field of a list's
items, whether it may be sent twice, which param goes in ``Mcp-Name``, whether its result may be
cached, whether it may come back ``input_required``, its tracing span, and whether it stays
open until the client ends it. Nothing else in the package keeps a list of method names: the
session reads the row and tells the transport what it needs
(:class:`~mcp_sync.transports.base.MessageOptions`), so no transport reads a method
(``tests/test_architecture.py`` checks that no module under ``transports/`` names one).

A row is typed by its result: ``TOOLS_LIST`` is a ``Method[ListToolsResult]``, so the typed API
(``mcp_sync._client.calls``) sends the row and returns its model, with nothing to declare twice. To
add a method: one row below, then the facade method that sends it (``docs/contributing.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pydantic

from .types import (
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
from .types.skills import SKILLS_EXTENSION

__all__ = ["CACHEABLE", "METHODS", "MRTR_METHODS", "NAME_FIELDS", "Method", "method"]

_Result = TypeVar("_Result", bound=pydantic.BaseModel)


@dataclass(frozen=True)
class Method(Generic[_Result]):
    """One MCP request method, as the client sends it; typed by its result's model."""

    name: str
    #: The model its result is parsed into by the typed API (None: the caller parses it, or
    #: the result is empty).
    result: type[_Result] | None = None
    #: The capability (a dotted path) the server must declare; None when the caller checks,
    #: because what is needed depends on the era or the version.
    capability: str | None = None
    #: Or the extension it must declare.
    extension: str | None = None
    #: For a paginated list: the result's field that holds the items.
    items: str = ""
    #: It only reads: sending it twice changes nothing on the server, so a transport may send
    #: it again after a reset even when it may have arrived (``MessageOptions.safe_to_resend``).
    reads_only: bool = False
    #: The param whose value goes in the ``Mcp-Name`` header (2026-07-28 routing).
    name_field: str | None = None
    #: Its result may carry ``ttlMs`` and be kept by the opt-in cache.
    cacheable: bool = False
    #: Its 2026 result may be ``input_required`` (the multi round-trip retry).
    input_required: bool = False
    #: It opens a (new) session: sent without a session id (``MessageOptions.begins_session``).
    begins_session: bool = False
    #: The param whose value ends the span name (``"tools/call add"``).
    span_target: str | None = None
    #: Span attributes taken from string params: ``(param, attribute)`` pairs.
    span_params: tuple[tuple[str, str], ...] = ()
    #: ``gen_ai.operation.name`` of its span, when the conventions name one.
    span_operation: str | None = None
    #: It stays open until the client ends it: its answer may never come (a recording of
    #: one rightly holds none).
    open_ended: bool = False


_TABLE: dict[str, Method[Any]] = {}


def _row(method: Method[_Result]) -> Method[_Result]:
    """``method``, added to the table (one row per name)."""
    if method.name in _TABLE:
        raise ValueError(f"{method.name} has a row already")
    _TABLE[method.name] = method
    return method


# -- the table: a row the typed API sends is named, and typed by its result's model -------------

_row(Method("initialize", begins_session=True))
_row(Method("ping", reads_only=True))
SERVER_DISCOVER = _row(Method("server/discover", DiscoverResult, reads_only=True, cacheable=True))
_row(Method("logging/setLevel", capability="logging"))
TOOLS_LIST = _row(
    Method("tools/list", ListToolsResult, "tools", items="tools", reads_only=True, cacheable=True)
)
# "tools", or a task capability: checked by the caller
TOOLS_CALL = _row(
    Method(
        "tools/call",
        CallToolResult,
        name_field="name",
        input_required=True,
        span_target="name",
        span_params=(("name", "gen_ai.tool.name"),),
        span_operation="execute_tool",
    )
)
RESOURCES_LIST = _row(
    Method(
        "resources/list",
        ListResourcesResult,
        "resources",
        items="resources",
        reads_only=True,
        cacheable=True,
    )
)
RESOURCES_TEMPLATES_LIST = _row(
    Method(
        "resources/templates/list",
        ListResourceTemplatesResult,
        "resources",
        items="resource_templates",
        reads_only=True,
        cacheable=True,
    )
)
RESOURCES_READ = _row(
    Method(
        "resources/read",
        ReadResourceResult,
        "resources",
        reads_only=True,
        name_field="uri",
        cacheable=True,
        input_required=True,
        span_params=(("uri", "mcp.resource.uri"),),
    )
)
_row(Method("resources/subscribe", span_params=(("uri", "mcp.resource.uri"),)))
_row(Method("resources/unsubscribe", span_params=(("uri", "mcp.resource.uri"),)))
PROMPTS_LIST = _row(
    Method(
        "prompts/list",
        ListPromptsResult,
        "prompts",
        items="prompts",
        reads_only=True,
        cacheable=True,
    )
)
PROMPTS_GET = _row(
    Method(
        "prompts/get",
        GetPromptResult,
        "prompts",
        reads_only=True,
        name_field="name",
        input_required=True,
        span_target="name",
        span_params=(("name", "gen_ai.prompt.name"),),
    )
)
# declared from 2025-03-26 on: checked by the caller
COMPLETION_COMPLETE = _row(Method("completion/complete", CompleteResult, reads_only=True))
SKILLS_LIST = _row(
    Method(
        "skills/list", ListSkillsResult, extension=SKILLS_EXTENSION, items="skills", reads_only=True
    )
)
SKILLS_GET = _row(Method("skills/get", GetSkillResult, extension=SKILLS_EXTENSION))
# Tasks: the 2025-11-25 core needs the capabilities below; the 2026 extension is checked by
# the caller. The tasks extension routes a task's requests by its id.
TASKS_GET = _row(Method("tasks/get", GetTaskResult, reads_only=True, name_field="taskId"))
TASKS_RESULT = _row(Method("tasks/result", CallToolResult, reads_only=True))
TASKS_LIST = _row(
    Method("tasks/list", ListTasksResult, "tasks.list", items="tasks", reads_only=True)
)
TASKS_CANCEL = _row(Method("tasks/cancel", CancelTaskResult, "tasks.cancel", name_field="taskId"))
_row(Method("tasks/update", name_field="taskId"))
_row(Method("subscriptions/listen", open_ended=True))

# -- end of the table ---------------------------------------------------------------------------

#: A task-augmented ``tools/call`` (2025-11-25 core), as the typed API sends it: its own result
#: and capability. Not a row: the method's facts are ``TOOLS_CALL``'s.
TOOLS_CALL_AS_TASK = Method("tools/call", CreateTaskResult, "tasks.requests.tools.call")

#: Every method the client sends, by name.
METHODS: Mapping[str, Method[Any]] = _TABLE
#: A method the table does not know: none of the facts hold (never resent, no header, no
#: cache, no input rounds).
_UNKNOWN: Method[Any] = Method("")

#: Methods whose results may carry ``ttlMs``.
CACHEABLE = frozenset(row.name for row in _TABLE.values() if row.cacheable)
#: Requests whose result may be ``input_required``.
MRTR_METHODS = frozenset(row.name for row in _TABLE.values() if row.input_required)
#: The param that names each method's target in ``Mcp-Name``.
NAME_FIELDS: Mapping[str, str] = {
    row.name: row.name_field for row in _TABLE.values() if row.name_field
}


def method(name: object) -> Method[Any]:
    """The row of ``name``; for a method not in the table, a row where no fact holds."""
    return METHODS.get(name, _UNKNOWN) if isinstance(name, str) else _UNKNOWN
