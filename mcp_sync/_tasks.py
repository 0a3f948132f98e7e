"""Task handles for task-augmented tool calls (protocol 2025-11-25, experimental)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .abort import AbortSignal
from .errors import RequestTimeout
from .protocol.types import CallToolResult, Task

if TYPE_CHECKING:
    from .client import Client

__all__ = ["TERMINAL_STATUSES", "ToolTask"]

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})


class ToolTask:
    """A tool call running as a task on the server. ``task`` is the last known state."""

    def __init__(self, client: Client, task: Task) -> None:
        self._client = client
        self.task = task

    @property
    def task_id(self) -> str:
        return self.task.task_id

    @property
    def status(self) -> str:
        """The last known status: working, input_required, completed, failed or cancelled."""
        return self.task.status

    @property
    def done(self) -> bool:
        return self.task.status in TERMINAL_STATUSES

    def refresh(self, *, timeout: float | None = None) -> Task:
        """Ask the server for the task's current state (``tasks/get``)."""
        self.task = self._client.get_task(self.task_id, timeout=timeout)
        return self.task

    def wait(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Poll ``tasks/get`` (honouring the server's ``pollInterval``) until the task ends
        or needs input. Raises :class:`RequestTimeout` after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.task.status not in TERMINAL_STATUSES | {"input_required"}:
            interval = (self.task.poll_interval or 500) / 1000
            if deadline is not None and time.monotonic() + interval > deadline:
                raise RequestTimeout("tasks/get", timeout or 0.0)
            if signal is not None:
                if signal.wait(interval):
                    signal.throw_if_aborted()
            else:
                time.sleep(interval)
            self.refresh()
        return self.task

    def result(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until the task ends and return the tool's result (``tasks/result``)."""
        return self._client.get_task_result(self.task_id, timeout=timeout, signal=signal)

    def cancel(self, *, timeout: float | None = None) -> Task:
        """Ask the server to cancel the task (``tasks/cancel``)."""
        self.task = self._client.cancel_task(self.task_id, timeout=timeout)
        return self.task

    def __repr__(self) -> str:
        return f"<ToolTask {self.task_id} {self.status}>"
