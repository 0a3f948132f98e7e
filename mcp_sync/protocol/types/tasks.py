"""Tasks (2025-11-25, experimental): long-running requests the requestor polls.

In 2026-07-28 tasks moved to the ``io.modelcontextprotocol/tasks`` extension; these types
follow the 2025-11-25 core schema.
"""

from __future__ import annotations

from typing import Literal

from ._base import McpModel, Number
from .common import NotificationParams, PaginatedResult, RequestParams, Result

__all__ = [
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
    #: Milliseconds the task is kept after creation; None means unlimited.
    ttl: Number | None = None
    #: Suggested milliseconds between ``tasks/get`` polls.
    poll_interval: Number | None = None

    @property
    def is_terminal(self) -> bool:
        """True once the task is completed, failed or cancelled."""
        return self.status in ("completed", "failed", "cancelled")


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


