"""A tool call running as a task, the same handle in both generations of tasks.

- **2025-11-25 core tasks** (experimental): the client asks for a task (``params.task``);
  ``tasks/get`` polls, ``tasks/result`` blocks for the result, ``tasks/cancel`` returns the
  task, ``tasks/list`` lists.
- **2026 tasks extension** (``io.modelcontextprotocol/tasks``, SEP-2663): the client says it
  supports tasks in the request's capabilities and the *server* decides whether to answer with
  a task (``resultType: "task"``) or the result at once. ``tasks/get`` carries the result or
  error once the task ends, and the server's questions while it is ``input_required``; the
  client answers those with ``tasks/update``. There is no ``tasks/result`` and no
  ``tasks/list``: :meth:`Client.list_tasks` lists the tasks this client started.

:class:`ToolTask` hides the difference: ``wait()`` polls at the server's interval (answering
its questions with the client's handlers in the 2026 era), ``result()`` returns the
:class:`CallToolResult`, ``cancel()`` asks the server to stop.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from .abort import AbortSignal
from .errors import RequestTimeout, RpcError, TaskCancelled
from .protocol import meta as meta_keys
from .protocol.types import TASKS_EXTENSION, CallToolResult, GetTaskResult, Task

if TYPE_CHECKING:
    from .client import Client

__all__ = ["TERMINAL_STATUSES", "ToolTask", "extension_meta", "started_tasks"]

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})

#: The 2026 tasks each client started (task id -> None, in order): what list_tasks() lists
#: there, since the extension has no tasks/list.
_started: weakref.WeakKeyDictionary[Client, dict[str, None]] = weakref.WeakKeyDictionary()
_started_lock = threading.Lock()


def extension_meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A 2026 request's ``_meta`` declaring the tasks extension besides ``capabilities``."""
    extensions = dict(capabilities.get("extensions") or {})
    extensions[TASKS_EXTENSION] = {}
    return {meta_keys.CLIENT_CAPABILITIES: {**capabilities, "extensions": extensions}}


def started_tasks(client: Client) -> list[str]:
    """The ids of the 2026 tasks ``client`` started, oldest first."""
    with _started_lock:
        return list(_started.get(client, {}))


def remember(client: Client, task_id: str) -> None:
    with _started_lock:
        _started.setdefault(client, {})[task_id] = None


def forget(client: Client, task_id: str) -> None:
    with _started_lock:
        _started.get(client, {}).pop(task_id, None)


class ToolTask:
    """A tool call running as a task on the server. ``task`` is the last known state.

    In the 2026 era a server may also answer a task-enabled call at once: the handle is then
    already ``done``, its ``task_id`` empty, and :meth:`result` returns that answer.
    """

    def __init__(self, client: Client, task: Task, *, extension: bool = False) -> None:
        self._client = client
        self.task = task
        #: True for a task of the 2026 tasks extension, False for a 2025-11-25 core task.
        self.extension = extension
        self._answered: set[str] = set()

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

    def refresh(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Ask the server for the task's current state (``tasks/get``)."""
        if self.task_id:
            self.task = self._client.get_task(self.task_id, timeout=timeout, signal=signal)
        return self.task

    def wait(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Poll ``tasks/get`` at the server's suggested interval until the task ends.

        A 2026 task that needs input is answered with the client's handlers (elicitation,
        sampling, roots) through ``tasks/update``, and polling goes on; a 2025-11-25 task
        that needs input stops the wait (its questions come through ``tasks/result``).
        Raises :class:`RequestTimeout` after ``timeout`` seconds, :class:`Aborted` when
        ``signal`` fires.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.done:
            if self.task.status == "input_required":
                if not self.extension:
                    break
                self._answer(signal)
            interval = self.task.poll_seconds
            if deadline is not None and time.monotonic() + interval > deadline:
                raise RequestTimeout("tasks/get", timeout or 0.0)
            if signal is not None:
                if signal.wait(interval):
                    signal.throw_if_aborted()
            else:
                threading.Event().wait(interval)
            left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            self.refresh(timeout=left, signal=signal)
        return self.task

    def result(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until the task ends and return the tool's result (a tool that failed is a
        result with ``is_error``). A task that failed raises the :class:`RpcError` it failed
        with; a cancelled one raises :class:`TaskCancelled`."""
        if not self.extension:
            return self._client.get_task_result(self.task_id, timeout=timeout, signal=signal)
        self.wait(timeout=timeout, signal=signal)
        if self.task.status == "completed":
            return CallToolResult.from_wire(self.task.result or {})
        if self.task.status == "failed":
            error = self.task.error or {}
            raise RpcError(
                int(error.get("code", -32603)),
                str(error.get("message", self.task.status_message or "the task failed")),
                error.get("data"),
            )
        raise TaskCancelled(self.task_id, self.task.status_message)

    def cancel(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Ask the server to cancel the task (``tasks/cancel``); returns the state it reports
        (in the 2026 era cancelling is cooperative: the task may still finish)."""
        if self.task_id:  # empty when the server answered at once: nothing to cancel
            self.task = self._client.cancel_task(self.task_id, timeout=timeout, signal=signal)
        return self.task

    def _answer(self, signal: AbortSignal | None) -> None:
        """Answer the questions of an input_required 2026 task we have not answered yet."""
        asked = self.task.input_requests or {}
        fresh = {key: request for key, request in asked.items() if key not in self._answered}
        if not fresh:
            return
        responses = self._client.answer_input_requests(fresh, signal=signal)
        self._client.update_task(self.task_id, responses, signal=signal)
        self._answered.update(fresh)

    def __repr__(self) -> str:
        return f"<ToolTask {self.task_id or '(answered at once)'} {self.status}>"


def completed_at_once(raw: dict[str, Any]) -> GetTaskResult:
    """The state of a 2026 task-enabled call the server answered with its result at once."""
    return GetTaskResult(task_id="", status="completed", result=raw)
