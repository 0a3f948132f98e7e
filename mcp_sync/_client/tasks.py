"""A tool call running as a task, the same handle in both generations of tasks.

- **2025-11-25 core tasks** (experimental): the client asks for a task (``params.task``);
  ``tasks/get`` polls, ``tasks/result`` blocks for the result, ``tasks/cancel`` returns the
  task, ``tasks/list`` lists.
- **2026 tasks extension** (``io.modelcontextprotocol/tasks``, SEP-2663): the client says it
  supports tasks in the request's capabilities and the *server* decides whether to answer with
  a task (``resultType: "task"``) or the result at once. ``tasks/get`` carries the result or
  error once the task ends, and the server's questions while it is ``input_required``; the
  client answers those with ``tasks/update``. There is no ``tasks/result`` and no
  ``tasks/list``: :meth:`Tasks.list` lists the tasks this client started.

:class:`Tasks` holds one client's task operations (``client.tasks``, as the official SDKs
keep theirs beside the core methods). :class:`ToolTask` hides the difference: ``wait()``
polls at the server's interval (answering its questions with the client's handlers in the
2026 era), ``result()`` returns the :class:`CallToolResult`, ``cancel()`` asks the server to
stop.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .._connection.connection import Connection, ProgressHandler
from .._rules.deadline import call_deadline
from .._rules.numbers import call_timeout, whole
from ..abort import AbortSignal
from ..errors import ProtocolError, RequestTimeout, RpcError, TaskCancelled
from ..protocol import meta as meta_keys
from ..protocol import methods, stateless
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from ..protocol.types import (
    TASKS_EXTENSION,
    CallToolResult,
    CancelTaskResult,
    GetTaskResult,
    Task,
    TaskStatusNotificationParams,
)
from ..protocol.validation import parse_result
from . import calls as _calls

__all__ = ["MAX_TRACKED_TASKS", "TERMINAL_STATUSES", "Tasks", "ToolTask", "extension_meta"]

_T = TypeVar("_T", bound=Task)

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
#: How many 2026 tasks a client remembers for :meth:`Tasks.list` (the most recent); a task
#: is also forgotten once its ``ttlMs`` has passed. A long-lived client stays small.
MAX_TRACKED_TASKS = 1000


def extension_meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A 2026 request's ``_meta`` declaring the tasks extension besides ``capabilities``."""
    extensions = dict(capabilities.get("extensions") or {})
    extensions[TASKS_EXTENSION] = {}
    return {meta_keys.CLIENT_CAPABILITIES: {**capabilities, "extensions": extensions}}


class Tasks:
    """The task operations of one client (``client.tasks``), in either era.

    :meth:`call_tool` starts a task and returns its :class:`ToolTask` handle; the other
    methods reach tasks by id.
    """

    def __init__(
        self,
        connection: Connection,
        before_call: Callable[[str, float | None, AbortSignal | None], None] | None = None,
    ) -> None:
        self._connection = connection
        #: Run before a tool call is sent (the client's pin check, ``Client(pin=)``).
        self._before_call = before_call
        #: The 2026 tasks this client started (id -> when its ttl ends, monotonic, or None),
        #: oldest first: what :meth:`list` lists there, since the extension has no
        #: tasks/list. At most MAX_TRACKED_TASKS; expired ones are swept as tasks start.
        self._started: dict[str, float | None] = {}
        self._started_lock = threading.Lock()

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ToolTask:
        """Call a tool as a task: returns its :class:`ToolTask` handle as soon as the server
        has taken the call.

        2025-11-25: a core task; the server must advertise ``tasks.requests.tools.call``, and
        ``ttl`` (milliseconds to keep the task) is asked for. 2026: a task of the tasks
        extension, where the *server* decides: it may answer at once, and the handle is then
        already done, with an empty ``task_id`` (``ttl`` is not sent).
        """
        connection = self._connection
        if ttl is not None:
            whole(ttl, "call_tool: ttl")
        if self._before_call is not None:  # a changed tool is stopped before anything is sent
            self._before_call(name, timeout, signal)
        connection.require("tools/call", "tools")
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        if not connection.is_stateless:
            params["task"] = {} if ttl is None else {"ttl": ttl}
            row = methods.TOOLS_CALL_AS_TASK
            created = _calls.call(connection, row, params, timeout, signal, on_progress)
            return ToolTask(self, created.task)
        connection.require_extension("tools/call", TASKS_EXTENSION)
        params["_meta"] = extension_meta(connection.stateless.capabilities_for("tools/call"))
        raw = connection.request(
            "tools/call", params, timeout=timeout, signal=signal, on_progress=on_progress
        )
        if stateless.result_type(raw) != "task":
            return ToolTask(self, _completed_at_once(raw), extension=True)
        state = parse_result("tools/call", GetTaskResult, raw)
        self._track(state)
        return ToolTask(self, state, extension=True)

    def _track(self, state: Task) -> None:
        ttl = state.ttl_ms
        now = time.monotonic()
        # a ttl no float can hold (or NaN) is "no known end": the size bound still applies
        ends = now + ttl / 1000 if isinstance(ttl, (int, float)) and 0 <= ttl < 1e15 else None
        with self._started_lock:
            started = self._started
            for task_id in [t for t, end in started.items() if end is not None and end < now]:
                del started[task_id]
            started.pop(state.task_id, None)
            started[state.task_id] = ends
            while len(started) > MAX_TRACKED_TASKS:
                del started[next(iter(started))]

    def get(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> GetTaskResult:
        """The current state of a task (``tasks/get``); from the 2026 extension, with the
        result or error once it ended and the server's questions while it needs input."""
        params: dict[str, Any] = {"taskId": task_id}
        if self._connection.is_stateless:
            params["_meta"] = extension_meta({})
        state = _calls.call(self._connection, methods.TASKS_GET, params, timeout, signal)
        return _same_task("tasks/get", task_id, state)

    def result(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until a tool task ends and return its result (``tasks/result``; in the
        2026 era, polling ``tasks/get``, with ``timeout`` for the whole wait)."""
        if self._connection.is_stateless:
            task = ToolTask(self, self.get(task_id, timeout=timeout, signal=signal), extension=True)
            return task.result(timeout=timeout, signal=signal)
        params = {"taskId": task_id}
        return _calls.call(self._connection, methods.TASKS_RESULT, params, timeout, signal)

    def list(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> builtins.list[Task]:
        """Every task the server knows for this client (``tasks/list``, all pages). The 2026
        extension has no ``tasks/list``: there, the tasks this client started that the
        server still knows, each as ``tasks/get`` reports it. ``timeout`` bounds the whole
        listing, all pages together; progress renews it."""
        connection = self._connection
        if not connection.is_stateless:
            return _calls.every(connection, methods.TASKS_LIST, timeout, signal, on_progress)
        with self._started_lock:
            started = builtins.list(self._started)
        tasks: builtins.list[Task] = []
        for task_id in started:
            try:
                tasks.append(self.get(task_id, timeout=timeout, signal=signal))
            except RpcError as exc:
                if exc.code != INVALID_PARAMS:
                    raise
                with self._started_lock:  # expired or purged by the server
                    self._started.pop(task_id, None)
        return tasks

    def cancel(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CancelTaskResult:
        """Ask the server to cancel a task (``tasks/cancel``) and return its state. In the
        2026 era cancelling is cooperative: the state may still say working."""
        connection = self._connection
        params: dict[str, Any] = {"taskId": task_id}
        if not connection.is_stateless:
            cancelled = _calls.call(connection, methods.TASKS_CANCEL, params, timeout, signal)
            return _same_task("tasks/cancel", task_id, cancelled)
        params["_meta"] = extension_meta({})
        connection.request("tasks/cancel", params, timeout=timeout, signal=signal)
        state = self.get(task_id, timeout=timeout, signal=signal)
        return CancelTaskResult.from_wire(state.to_wire())

    def update(
        self,
        task_id: str,
        input_responses: Mapping[str, Any],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        """Answer an input_required 2026 task's questions (``tasks/update``); the keys are
        those of its ``input_requests``. :meth:`ToolTask.wait` does this by itself."""
        timeout = call_timeout(timeout, "tasks/update")
        self._connection.require_era("stateless", "tasks/update (the 2026 tasks extension)")
        params = {
            "taskId": task_id,
            "inputResponses": dict(input_responses),
            "_meta": extension_meta({}),
        }
        self._connection.request("tasks/update", params, timeout=timeout, signal=signal)

    def answer_input_requests(
        self,
        input_requests: Mapping[str, Any],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> dict[str, Any]:
        """Answer a 2026 ``inputRequests`` map (sampling, elicitation, roots requests by key)
        with this client's handlers; returns the ``inputResponses`` to send back. Past
        ``timeout`` no handler starts, and a running one sees its ``ctx.signal`` fire."""
        connection = self._connection
        timeout = call_timeout(timeout, "answer_input_requests")
        deadline = call_deadline(timeout)  # (None: a person may take as long as they need)
        session = connection.connected_session(deadline if timeout else None)
        return connection.stateless.fulfil_input_requests(
            session, dict(input_requests), signal, deadline, "tasks/update"
        )

    def on_status(
        self, callback: Callable[[TaskStatusNotificationParams], None]
    ) -> Callable[[], None]:
        """Call ``callback(status)`` for each ``notifications/tasks/status`` (2025-11-25;
        2026 servers send task status only on a ``subscriptions/listen`` stream, which this
        client does not request: poll with :meth:`ToolTask.wait`). Returns a remover."""
        return self._connection.on_notification(
            "notifications/tasks/status",
            lambda n: callback(TaskStatusNotificationParams.from_wire(n.params or {})),
        )


class ToolTask:
    """A tool call running as a task on the server. ``task`` is the last known state.

    In the 2026 era a server may also answer a task-enabled call at once: the handle is then
    already ``done``, its ``task_id`` empty, and :meth:`result` returns that answer.
    """

    def __init__(self, tasks: Tasks, task: Task, *, extension: bool = False) -> None:
        self._tasks = tasks
        self.task = task
        #: True for a task of the 2026 tasks extension, False for a 2025-11-25 core task.
        self.extension = extension
        #: The questions answered so far, by key, and how many rounds that took.
        self._answered: dict[str, Any] = {}
        self._rounds = 0

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
        """Ask the server for the task's current state (``tasks/get``).

        Raises :class:`ProtocolError` when the answer is about another task, or moves a
        finished task to another status (the handle keeps its state).
        """
        timeout = call_timeout(timeout, "refresh")
        if self.task_id:
            self._move_to(self._tasks.get(self.task_id, timeout=timeout, signal=signal))
        return self.task

    def wait(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Poll ``tasks/get`` at the server's suggested interval until the task ends.

        The interval is clamped to 0.05-10 s whatever the server suggests, and polling goes on
        until ``timeout``, then raises :class:`RequestTimeout` saying how long it waited.
        A 2026 task that needs input is answered with the client's handlers (elicitation,
        sampling, roots) through ``tasks/update``, at most the client's
        ``max_input_rounds`` times (then :class:`ProtocolError`), and polling goes on; a
        2025-11-25 task that needs input stops the wait (its questions come through
        ``tasks/result``). Raises :class:`Aborted` when ``signal`` fires.
        """
        started = time.monotonic()
        timeout = call_timeout(timeout, "wait")
        deadline = None if timeout is None else started + timeout
        while not self.done:
            if self.task.status == "input_required":
                if not self.extension:
                    break
                self._answer(signal, deadline)
            interval = self.task.poll_seconds
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None:
                if left <= 0:
                    raise self._timed_out(timeout, started)
                interval = min(interval, left)
            if signal is not None:
                if signal.wait(interval):
                    signal.throw_if_aborted()
            else:
                threading.Event().wait(interval)
            left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            try:
                self.refresh(timeout=left, signal=signal)
            except RequestTimeout as exc:
                if deadline is None:
                    raise
                raise self._timed_out(timeout, started) from exc
        return self.task

    def result(
        self, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until the task ends and return the tool's result (a tool that failed is a
        result with ``is_error``). A task that failed raises the :class:`RpcError` it failed
        with (:class:`ProtocolError` when that error is malformed); a cancelled one raises
        :class:`TaskCancelled`."""
        if not self.extension:
            return self._tasks.result(self.task_id, timeout=timeout, signal=signal)
        self.wait(timeout=timeout, signal=signal)
        if self.task.status == "completed":
            return CallToolResult.from_wire(self.task.result or {})
        if self.task.status == "failed":
            error = self.task.error or {}
            code = error.get("code", INTERNAL_ERROR)
            message = str(error.get("message", self.task.status_message or "the task failed"))
            if not isinstance(code, int) or isinstance(code, bool):
                raise ProtocolError(
                    f"task {self.task_id} failed with an error code that is not an integer"
                    f" ({code!r}): {message}"
                )
            raise RpcError(code, message, error.get("data"))
        raise TaskCancelled(self.task_id, self.task.status_message)

    def cancel(self, *, timeout: float | None = None, signal: AbortSignal | None = None) -> Task:
        """Ask the server to cancel the task (``tasks/cancel``); returns the state it reports
        (in the 2026 era cancelling is cooperative: the task may still finish). A finished
        task, or one the server answered at once, has nothing to cancel: its state is
        returned and nothing is sent."""
        timeout = call_timeout(timeout, "cancel")
        if self.task_id and not self.done:
            self._move_to(self._tasks.cancel(self.task_id, timeout=timeout, signal=signal))
        return self.task

    def _move_to(self, state: Task) -> None:
        """Take ``state`` as the task's new state; a finished task stays as it finished."""
        if self.done:
            if state.status != self.task.status:
                raise ProtocolError(
                    f"task {self.task_id} was {self.task.status} and is now reported"
                    f" {state.status}: a finished task's status cannot change"
                )
            return  # nor its result or error
        self.task = state

    def _timed_out(self, timeout: float | None, started: float) -> RequestTimeout:
        waited = time.monotonic() - started
        return RequestTimeout(
            "tasks/get",
            timeout or 0.0,
            f"task {self.task_id} still {self.task.status} after {waited:.1f} s of waiting",
        )

    def _answer(self, signal: AbortSignal | None, deadline: float | None) -> None:
        """Answer the questions of an input_required 2026 task not answered yet: a key not
        seen, or a new question under a key answered before (the same question again is
        the server not having taken the answer in yet)."""
        asked = self.task.input_requests or {}
        fresh = {key: asked[key] for key in asked if self._answered.get(key, _UNSEEN) != asked[key]}
        if not fresh:
            return
        limit = self._tasks._connection.stateless.max_input_rounds
        if self._rounds >= limit:
            raise ProtocolError(
                f"task {self.task_id}: the server still asks for input after {limit} rounds"
                " (the client's max_input_rounds)"
            )
        self._rounds += 1
        # the wait's deadline covers the handlers and the update, not only the polls
        left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        responses = self._tasks.answer_input_requests(fresh, timeout=left, signal=signal)
        left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        self._tasks.update(self.task_id, responses, timeout=left, signal=signal)
        self._answered.update(fresh)

    def __repr__(self) -> str:
        return f"<ToolTask {self.task_id or '(answered at once)'} {self.status}>"


_UNSEEN = object()


def _same_task(method: str, task_id: str, state: _T) -> _T:
    """``state``, unless the server answered about another task than ``task_id``."""
    if state.task_id != task_id:
        raise ProtocolError(f"{method} for task {task_id} was answered about task {state.task_id}")
    return state


def _completed_at_once(raw: dict[str, Any]) -> GetTaskResult:
    """The state of a 2026 task-enabled call the server answered with its result at once."""
    return GetTaskResult(task_id="", status="completed", result=raw)
