"""The client's methods for tasks (2025-11-25 core and the 2026 extension) and skills (the
skills extension): a base of :class:`~mcp_sync.Client`, kept apart so that client.py holds the
core features. Behaviour in :mod:`mcp_sync._tasks` and :mod:`mcp_sync.skills`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from . import _tasks
from ._core import ClientCore, ProgressHandler
from ._tasks import ToolTask
from .abort import AbortSignal
from .errors import CapabilityError, RpcError
from .protocol import stateless
from .protocol.jsonrpc import INVALID_PARAMS
from .protocol.types import (
    CallToolResult,
    CancelTaskResult,
    GetSkillResult,
    GetTaskResult,
    ListSkillsResult,
    ListTasksResult,
    ReadResourceResult,
    Skill,
    Task,
    TaskStatusNotificationParams,
)
from .protocol.types.skills import SKILLS_EXTENSION
from .protocol.types.tasks import TASKS_EXTENSION
from .protocol.validation import parse_result
from .skills import LoadedSkill

if TYPE_CHECKING:
    from .client import Client

__all__ = ["TasksAndSkills"]


class TasksAndSkills(ClientCore):
    """Tasks and skills, as methods of :class:`~mcp_sync.Client`."""

    def _as_client(self) -> Client:
        return cast("Client", self)

    def _call_tool_as_task(
        self,
        params: dict[str, Any],
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
    ) -> ToolTask:
        self._require_extension("tools/call", TASKS_EXTENSION)
        params["_meta"] = _tasks.extension_meta(self._stateless_capabilities("tools/call"))
        raw = self.request(
            "tools/call", params, timeout=timeout, signal=signal, on_progress=on_progress
        )
        if stateless.result_type(raw) != "task":
            return ToolTask(self._as_client(), _tasks.completed_at_once(raw), extension=True)
        state = parse_result("tools/call", GetTaskResult, raw)
        _tasks.remember(self._as_client(), state.task_id)
        return ToolTask(self._as_client(), state, extension=True)

    # -- skills (extension io.modelcontextprotocol/skills) ------------------------------

    def list_skills(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Skill]:
        """Every skill the server lists (all pages): entries only, no file is read.

        A listing may be partial; :meth:`get_skill` reaches any skill by URI.
        """
        self._require_extension("skills/list", SKILLS_EXTENSION)
        return list(
            self._all_pages("skills/list", ListSkillsResult, "skills", timeout, signal, on_progress)
        )

    def get_skill(
        self,
        uri: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> Skill:
        """The current entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``)."""
        self._require_extension("skills/get", SKILLS_EXTENSION)
        return self._call(
            "skills/get",
            {"uri": uri},
            GetSkillResult,
            timeout=timeout,
            signal=signal,
            on_progress=on_progress,
        ).skill

    def load_skill(
        self,
        skill: Skill | str,
        *,
        allow_dynamic: bool = False,
        origin: str | None = None,
        timeout: float | None = None,
    ) -> LoadedSkill:
        """Load a skill: read its ``SKILL.md`` and verify it against the entry.

        ``skill`` is an entry from :meth:`list_skills` or the URI of a ``SKILL.md`` (its
        entry is fetched with :meth:`get_skill` first). Raises
        :class:`~mcp_sync.errors.SkillVerificationError` when the content does not match
        the entry (size, digest or frontmatter); a dynamic skill needs ``allow_dynamic``.
        ``origin`` labels the server in :meth:`LoadedSkill.for_model` (default: the
        server's name). See :mod:`mcp_sync.skills`.
        """
        from . import skills

        entry = self.get_skill(skill, timeout=timeout) if isinstance(skill, str) else skill
        if origin is None:
            origin = self.server_info.name if self.server_info else "server"

        def read(uri: str) -> ReadResourceResult:
            return self._as_client().read_resource(uri, timeout=timeout)

        return skills.load(entry, origin, read, allow_dynamic=allow_dynamic)

    def _require_extension(self, method: str, extension: str) -> None:
        extensions = self._initialized().wire_capabilities.get("extensions") or {}
        if self.strict_capabilities and extension not in extensions:
            raise CapabilityError(method, f"extensions.{extension}")

    # -- tasks (2025-11-25 core, or the 2026 extension io.modelcontextprotocol/tasks) ---

    def get_task(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> GetTaskResult:
        """The current state of a task (``tasks/get``); from the 2026 extension, with the
        result or error once it ended and the server's questions while it needs input."""
        params: dict[str, Any] = {"taskId": task_id}
        if self._stateless():
            params["_meta"] = _tasks.extension_meta({})
        return self._call("tasks/get", params, GetTaskResult, timeout=timeout, signal=signal)

    def get_task_result(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CallToolResult:
        """Block until a tool task ends and return its result (``tasks/result``; in the
        2026 era, polling ``tasks/get``, with ``timeout`` for the whole wait)."""
        if self._stateless():
            task = ToolTask(
                self._as_client(), self.get_task(task_id, signal=signal), extension=True
            )
            return task.result(timeout=timeout, signal=signal)
        return self._call(
            "tasks/result", {"taskId": task_id}, CallToolResult, timeout=timeout, signal=signal
        )

    def list_tasks(
        self,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> list[Task]:
        """Every task the server knows for this client (``tasks/list``, all pages). The 2026
        extension has no ``tasks/list``: there, the tasks this client started that the
        server still knows, each as ``tasks/get`` reports it."""
        if not self._stateless():
            self._require("tasks/list", "tasks.list")
            return list(
                self._all_pages(
                    "tasks/list", ListTasksResult, "tasks", timeout, signal, on_progress
                )
            )
        tasks: list[Task] = []
        for task_id in _tasks.started_tasks(self._as_client()):
            try:
                tasks.append(self.get_task(task_id, timeout=timeout, signal=signal))
            except RpcError as exc:
                if exc.code != INVALID_PARAMS:
                    raise
                _tasks.forget(self._as_client(), task_id)  # expired or purged by the server
        return tasks

    def cancel_task(
        self, task_id: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> CancelTaskResult:
        """Ask the server to cancel a task (``tasks/cancel``) and return its state. In the
        2026 era cancelling is cooperative: the state may still say working."""
        if not self._stateless():
            self._require("tasks/cancel", "tasks.cancel")
            return self._call(
                "tasks/cancel",
                {"taskId": task_id},
                CancelTaskResult,
                timeout=timeout,
                signal=signal,
            )
        params = {"taskId": task_id, "_meta": _tasks.extension_meta({})}
        self.request("tasks/cancel", params, timeout=timeout, signal=signal)
        state = self.get_task(task_id, timeout=timeout, signal=signal)
        return CancelTaskResult.from_wire(state.to_wire())

    def update_task(
        self,
        task_id: str,
        input_responses: Mapping[str, Any],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> None:
        """Answer an input_required 2026 task's questions (``tasks/update``); the keys are
        those of its ``input_requests``. :meth:`ToolTask.wait` does this by itself."""
        self._require_era("stateless", "tasks/update (the 2026 tasks extension)")
        params = {
            "taskId": task_id,
            "inputResponses": dict(input_responses),
            "_meta": _tasks.extension_meta({}),
        }
        self.request("tasks/update", params, timeout=timeout, signal=signal)

    def answer_input_requests(
        self, input_requests: Mapping[str, Any], *, signal: AbortSignal | None = None
    ) -> dict[str, Any]:
        """Answer a 2026 ``inputRequests`` map (sampling, elicitation, roots requests by key)
        with this client's handlers; returns the ``inputResponses`` to send back."""
        session = self._connected_session(self.request_timeout)
        return self._fulfil_input_requests(session, dict(input_requests), signal)

    def on_task_status(
        self, callback: Callable[[TaskStatusNotificationParams], None]
    ) -> Callable[[], None]:
        """Call ``callback(status)`` for each ``notifications/tasks/status`` (2025-11-25;
        2026 servers send task status only on a ``subscriptions/listen`` stream, which this
        client does not request: poll with :meth:`ToolTask.wait`)."""
        return self._as_client().on_notification(
            "notifications/tasks/status",
            lambda n: callback(TaskStatusNotificationParams.from_wire(n.params or {})),
        )
