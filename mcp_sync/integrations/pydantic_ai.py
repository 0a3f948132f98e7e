"""An MCP server's tools as a pydantic-ai toolset over the synchronous client (extra
``pydantic-ai``).

::

    from pydantic_ai import Agent
    from mcp_sync.integrations.pydantic_ai import pydantic_ai_toolset

    agent = Agent("openai:gpt-5", toolsets=[pydantic_ai_toolset(client)])
    print(agent.run_sync("What time is it in Tokyo?").output)

pydantic-ai's own MCP toolset is async and owns its connection; this toolset takes a client you
already have (shared by threads, by runs, by other frameworks) and leaves its lifetime to you.
It is a ``FunctionToolset``: each tool is the MCP tool as a model may see it
(:func:`~mcp_sync.llm.model_view`; pydantic-ai does not validate the arguments again, the
server does), run on pydantic-ai's worker thread, as its synchronous function tools are. When
the server says its tools changed (``notifications/tools/list_changed``; in the 2026-07-28 era
only to a ``client.listen(tools_list_changed=True)`` subscription), the toolset lists them again
before the model's next step (pydantic-ai's own MCP toolset, measured, waits for the next run).

A call returns the structured content when there is some, else the text
(:func:`mcp_sync.to_llm_text`), with each image as a ``BinaryContent`` beside it. A result with
``isError`` raises ``ModelRetry`` with the server's text, so the model sees it and may try again
(up to ``max_retries``), as pydantic-ai's own MCP toolset does; so do a timeout, a closed
connection and an unavailable server (``on_error="message"``, the default of every adapter:
:mod:`mcp_sync.integrations._adapter`), unless ``on_error="raise"``. ``on_progress`` gets each
call's progress notifications; :meth:`McpToolset.read_resource` and
:meth:`McpToolset.get_prompt` give resources and prompts in pydantic-ai's terms (user content,
and a ``message_history``).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread
from pydantic_ai import BinaryContent, ModelRetry, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.tools import Tool as PydanticTool
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from .._connection.lifecycle import weak_callback
from .._rules.numbers import whole
from ..llm import ModelTool, to_llm_content, to_llm_text
from ..protocol.types import BlobResourceContents, CallToolResult, Tool
from ._adapter import (
    CallOptions,
    ErrorPolicy,
    Interceptor,
    ProgressCallback,
    ToolCaller,
    ToolSource,
    description_of,
    views_of,
)
from ._results import result_items

__all__ = ["McpToolset", "pydantic_ai_tool", "pydantic_ai_toolset"]


def pydantic_ai_toolset(
    client: ToolSource,
    *,
    tools: Sequence[Tool] | None = None,
    names: Sequence[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
    on_progress: ProgressCallback | None = None,
    max_retries: int | None = None,
) -> McpToolset:
    """The server's tools (or ``tools``, or those named in ``names``) as one toolset, listed
    again after ``list_changed`` (not when ``tools`` is given); ``max_retries`` is how many
    failures in a row the model may retry a tool after."""
    options = CallOptions(
        timeout=timeout, on_error=on_error, interceptors=interceptors, on_progress=on_progress
    )
    choice: dict[str, Any] = dict(clean=clean, include_app_only=include_app_only, prefix=prefix)
    return McpToolset(client, tools, names, choice, options, max_retries)


def pydantic_ai_tool(
    client: ToolSource,
    tool: Tool,
    *,
    clean: bool = True,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
    on_progress: ProgressCallback | None = None,
) -> PydanticTool[Any]:
    """One MCP tool as a pydantic-ai ``Tool`` calling it through ``client``."""
    options = CallOptions(
        timeout=timeout, on_error=on_error, interceptors=interceptors, on_progress=on_progress
    )
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True, prefix=prefix)
    return _tool(ToolCaller(client, view, options))


class McpToolset(FunctionToolset[Any]):
    """A ``FunctionToolset`` of an MCP server's tools, listed again when the server says they
    changed; made by :func:`pydantic_ai_toolset`."""

    def __init__(
        self,
        client: ToolSource,
        tools: Sequence[Tool] | None,
        names: Sequence[str] | None,
        choice: dict[str, Any],
        options: CallOptions,
        max_retries: int | None,
    ) -> None:
        if max_retries is not None:
            whole(max_retries, "pydantic_ai_toolset: max_retries")
        super().__init__([], max_retries=max_retries)
        self._client, self._given, self._names = client, tools, names
        self._choice, self._options = choice, options
        self._changed = threading.Event()  # set on the client's dispatcher thread
        self._install(self._listed())
        subscribe = getattr(client, "on_notification", None)  # a ClientGroup has none
        if tools is None and subscribe is not None:
            # weakly: the client keeps the callback, and must not keep this toolset alive
            subscribe("notifications/tools/list_changed", weak_callback(self._tools_changed))

    def _tools_changed(self, _notification: object) -> None:
        self._changed.set()

    def _listed(self) -> list[ModelTool]:
        return views_of(self._client, self._given, self._names, **self._choice)

    def _install(self, views: list[ModelTool]) -> None:
        self.tools = {}
        for view in views:
            self.add_tool(_tool(ToolCaller(self._client, view, self._options)))

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if self._changed.is_set():
            self._changed.clear()  # before listing: a change during it lists once more
            self._install(await anyio.to_thread.run_sync(self._listed))
        return await super().get_tools(ctx)

    def read_resource(self, uri: str) -> str | BinaryContent | list[str | BinaryContent]:
        """The resource at ``uri`` as pydantic-ai user content, as its own MCP toolset gives
        it: text as ``str``, binary as ``BinaryContent``; a list when it has several
        contents."""
        contents = self._client.read_resource(uri).contents
        read = [_resource(item) for item in contents]
        return read[0] if len(read) == 1 else read

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> list[ModelMessage]:
        """The prompt ``name``, rendered with ``arguments``, as a pydantic-ai
        ``message_history``: a user turn a ``ModelRequest``, an assistant turn a
        ``ModelResponse``."""
        history: list[ModelMessage] = []
        for message in self._client.get_prompt(name, arguments).messages:
            if message.role == "assistant":
                history.append(ModelResponse(parts=[TextPart(to_llm_text([message.content]))]))
                continue
            content = [_user_content(item) for item in to_llm_content([message.content])]
            shown = content[0] if len(content) == 1 and isinstance(content[0], str) else content
            history.append(ModelRequest(parts=[UserPromptPart(shown)]))
        return history


def _tool(caller: ToolCaller) -> PydanticTool[Any]:
    view = caller.view

    def call(**arguments: Any) -> Any:
        outcome = caller(arguments)
        if not isinstance(outcome, CallToolResult):
            return outcome  # an interceptor's own value
        if outcome.is_error:
            raise ModelRetry(to_llm_text(outcome) or f"the tool {view.name} failed")
        return _output(outcome)

    made: PydanticTool[Any] = PydanticTool.from_schema(
        call, name=view.name, description=description_of(view), json_schema=view.input_schema
    )
    return made


def _output(result: CallToolResult) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    items = result_items(result)
    images = [_user_content(item) for item in items if item["type"] == "image"]
    text = "\n".join(item["text"] for item in items if item["type"] == "text")
    if not images:
        return text
    return [text, *images] if text else images


def _user_content(item: dict[str, Any]) -> str | BinaryContent:
    if item["type"] == "image":
        return BinaryContent(data=base64.b64decode(item["data"]), media_type=item["mimeType"])
    text: str = item["text"]
    return text


def _resource(contents: Any) -> str | BinaryContent:
    if isinstance(contents, BlobResourceContents):
        kind = contents.mime_type or "application/octet-stream"
        return BinaryContent(data=base64.b64decode(contents.blob), media_type=kind)
    text: str = contents.text
    return text
