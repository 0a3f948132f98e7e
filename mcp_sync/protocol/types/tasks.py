"""Tasks: long-running tool calls the client polls.

Two generations share these types: the 2025-11-25 core (experimental; ``ttl``,
``pollInterval``, ``tasks/result``, ``tasks/list``) and, from 2026-07-28, the
``io.modelcontextprotocol/tasks`` extension (SEP-2663; ``ttlMs``, ``pollIntervalMs``, the
result or error inlined in ``tasks/get``, input through ``tasks/update``). A field one
generation does not send is None.
"""

from __future__ import annotations

from typing import Literal

from ._base import JsonObject, McpModel, Number
from .common import NotificationParams, PaginatedResult, RequestParams, Result

__all__ = [
    "TASKS_EXTENSION",
    "DEFAULT_POLL_SECONDS",
    "MAX_POLL_SECONDS",
    "MIN_POLL_SECONDS",
    "CancelTaskResult",
    "CreateTaskResult",
    "GetTaskResult",
    "ListTasksResult",
    "RelatedTaskMetadata",
    "Task",
    "TaskMetadata",
    "TaskRequestParams",
    "TaskStatus",
    "TaskStatusNotificationParams",
]

#: The 2026 tasks extension's identifier in ``capabilities.extensions``.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

#: The range a server's suggested poll interval is clamped to, in seconds: a server cannot
#: make a client poll it more than 20 times a second, nor go quiet for longer than 10 s.
MIN_POLL_SECONDS = 0.05
MAX_POLL_SECONDS = 10.0
#: The interval when the server suggests none (or one that is not a number, or negative).
DEFAULT_POLL_SECONDS = 0.5

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class TaskMetadata(McpModel):
    """Sent as ``params.task`` to run a request as a task; ``ttl`` in milliseconds."""

    ttl: Number | None = None


class RelatedTaskMetadata(McpModel):
    """The value of ``_meta["io.modelcontextprotocol/related-task"]``."""

    task_id: str


class Task(McpModel):
    """The state of a task. Timestamps are ISO 8601 strings as the receiver sent them."""

    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    #: Milliseconds the task is kept after creation; None means unlimited (2025-11-25).
    ttl: Number | None = None
    #: Suggested milliseconds between ``tasks/get`` polls (2025-11-25).
    poll_interval: Number | None = None
    #: ``ttl`` and ``poll_interval`` as the 2026 tasks extension names them.
    ttl_ms: Number | None = None
    poll_interval_ms: Number | None = None
    #: The tasks extension inlines these in ``tasks/get``: the tool's result once completed,
    #: the JSON-RPC error once failed, the server's requests while input_required.
    result: JsonObject | None = None
    error: JsonObject | None = None
    input_requests: JsonObject | None = None

    @property
    def is_terminal(self) -> bool:
        """True once the task is completed, failed or cancelled."""
        return self.status in ("completed", "failed", "cancelled")

    @property
    def poll_seconds(self) -> float:
        """How long to wait before the next poll: the server's suggestion, clamped to
        [:data:`MIN_POLL_SECONDS`, :data:`MAX_POLL_SECONDS`]; 0.5 s when it suggests none,
        a negative one, or NaN."""
        interval = (
            self.poll_interval_ms if self.poll_interval_ms is not None else self.poll_interval
        )
        if interval is None or isinstance(interval, bool):
            return DEFAULT_POLL_SECONDS
        if interval != interval or interval < 0:  # NaN, and no float() of a huge int
            return DEFAULT_POLL_SECONDS
        if interval > MAX_POLL_SECONDS * 1000:  # before dividing: an int past 1e308 overflows
            return MAX_POLL_SECONDS
        return max(interval / 1000, MIN_POLL_SECONDS)


class TaskRequestParams(RequestParams):
    """Params of ``tasks/get``, ``tasks/result`` and ``tasks/cancel``."""

    task_id: str


class CreateTaskResult(Result):
    """What a task-augmented request returns at once instead of its result."""

    task: Task


class GetTaskResult(Result, Task):
    """The result of ``tasks/get``: the task's fields at the top level."""


class CancelTaskResult(Result, Task):
    """The result of ``tasks/cancel``: the task's fields at the top level."""


class ListTasksResult(PaginatedResult):
    tasks: list[Task]


class TaskStatusNotificationParams(NotificationParams, Task):
    """Params of ``notifications/tasks/status``: the task's fields plus ``_meta``."""
