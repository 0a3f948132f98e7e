"""An MCP server's tools for the OpenAI Agents SDK (extra ``openai-agents``): function tools,
or a server the SDK lists on each run.

::

    from agents import Agent, Runner
    from mcp_sync.integrations.openai_agents import openai_agents_server, openai_agents_tools

    agent = Agent(name="assistant", tools=openai_agents_tools(client))
    agent = Agent(name="assistant", mcp_servers=[openai_agents_server(client)])  # listed per run
    print(Runner.run_sync(agent, "What time is it in Tokyo?").final_output)

:func:`openai_agents_tools` gives ``FunctionTool`` objects, made once: each the tool as a model
may see it (:func:`~mcp_sync.llm.model_view`), its input schema not in strict mode (MCP schemas
have optional properties, which strict mode forbids). :func:`openai_agents_server` gives an
``MCPServer`` for ``Agent(mcp_servers=[...])`` over the same client: the SDK lists its tools
at the start of each run, as it does for its own MCP servers, so a tool the server adds or
changes is offered on the next run (``mcp_config={"include_server_in_tool_names": True}``
puts the server's name in each tool's name, as for the SDK's own servers), and it offers the
server's prompts and resources.

Both take the options of every adapter (:mod:`mcp_sync.integrations._adapter`): ``prefix``,
``timeout``, ``interceptors``, and ``on_error``: by default a timeout, a closed connection or
an unavailable server is told to the model as ``Error: RequestTimeout: ...``, as a result with
``isError`` is, and the run goes on; ``on_error="raise"`` raises it (the function tools then
end the run: ``Runner.run_sync`` raises the SDK's ``UserError`` with the mcp_sync error as its
``__cause__``; the server hands it to the SDK's ``failure_error_function``). A call runs the
synchronous client on a worker thread, as the SDK runs its own synchronous function tools, so
parallel tool calls overlap. The model gets the result's text (:func:`mcp_sync.to_llm_text`,
an image described in it) and each image as an image, which the Responses API passes to the
model (Chat Completions models get the text). Arguments that are not a JSON object go back to
the model as ``Error: ...``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool, ToolOutputImage, ToolOutputText
from agents.mcp import MCPServer

from ..client import Client
from ..llm import ModelTool, to_llm_text
from ..protocol import types as wire
from ..protocol.types import CallToolResult, Tool
from ._adapter import (
    CallOptions,
    ErrorPolicy,
    Interceptor,
    ToolCaller,
    ToolSource,
    description_of,
    views_of,
)
from ._results import result_items
from .mcp_types import to_mcp

__all__ = ["openai_agents_server", "openai_agents_tool", "openai_agents_tools"]


def openai_agents_tools(
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
) -> list[FunctionTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as function tools, made
    once (:func:`openai_agents_server` lists them on each run)."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    views = views_of(
        client, tools, names, clean=clean, include_app_only=include_app_only, prefix=prefix
    )
    return [_function_tool(ToolCaller(client, view, options)) for view in views]


def openai_agents_tool(
    client: ToolSource,
    tool: Tool,
    *,
    clean: bool = True,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
) -> FunctionTool:
    """One MCP tool as an Agents SDK ``FunctionTool`` calling it through ``client``."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True, prefix=prefix)
    return _function_tool(ToolCaller(client, view, options))


def openai_agents_server(
    client: ToolSource,
    *,
    name: str | None = None,
    names: Sequence[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
) -> MCPServer:
    """The server behind ``client`` as an Agents SDK ``MCPServer`` for
    ``Agent(mcp_servers=[...])``: its tools (or those named in ``names``) are listed again
    on each run. ``name`` is the server's name for the SDK (its own ``serverInfo`` name by
    default). The client stays yours: the SDK's ``connect()`` and ``cleanup()`` do nothing."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    if name is None:
        info = client.server_info if isinstance(client, Client) else None
        name = info.name if info is not None else "mcp_sync"
    choice: dict[str, Any] = dict(clean=clean, include_app_only=include_app_only, prefix=prefix)
    return _Server(client, name, names, choice, options)


def _function_tool(caller: ToolCaller) -> FunctionTool:
    view = caller.view

    async def invoke(_context: Any, raw: str) -> Any:
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            # the model's mistake, so the model is told (the run goes on)
            return f"Error: the arguments of {view.name} must be a JSON object, not {raw[:200]!r}"
        return await asyncio.to_thread(_output, caller, arguments)

    return FunctionTool(
        name=view.name,
        description=description_of(view),
        params_json_schema=view.input_schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def _output(caller: ToolCaller, arguments: dict[str, Any]) -> Any:
    outcome = caller(arguments)
    if not isinstance(outcome, CallToolResult):
        return outcome  # an interceptor's own value
    text, images = _shown(outcome)
    urls = [ToolOutputImage(image_url=f"data:{mime};base64,{data}") for mime, data in images]
    return [ToolOutputText(text=text), *urls] if urls else text


def _shown(result: CallToolResult) -> tuple[str, list[tuple[str, str]]]:
    """What the model gets of a result: its text (:func:`~mcp_sync.to_llm_text`, ``Error:
    ...`` for a failure) and, unless it failed, each image's MIME type and base64 data."""
    text = to_llm_text(result)
    if result.is_error:
        return (f"Error: {text}" if text else "Error"), []
    images = [(i["mimeType"], i["data"]) for i in result_items(result) if i["type"] == "image"]
    return text, images


class _Server(MCPServer):
    """An ``MCPServer`` of the Agents SDK over an mcp_sync client (the SDK's types are the
    official ``mcp`` SDK's, which openai-agents depends on)."""

    def __init__(
        self,
        client: ToolSource,
        name: str,
        names: Sequence[str] | None,
        choice: dict[str, Any],
        options: CallOptions,
    ) -> None:
        super().__init__()
        self._client, self._name, self._names = client, name, names
        self._choice, self._options = choice, options
        self._callers: dict[str, ToolCaller] = {}

    @property
    def name(self) -> str:
        return self._name

    async def connect(self) -> None:
        """Nothing to connect: the client is connected, and closed by its owner."""

    async def cleanup(self) -> None:
        """Nothing to close: the client is its owner's."""

    def _list(self) -> list[ModelTool]:
        views = views_of(self._client, None, self._names, **self._choice)
        self._callers = {view.name: ToolCaller(self._client, view, self._options) for view in views}
        return views

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Any]:
        views = await asyncio.to_thread(self._list)
        shown = [
            Tool(name=view.name, description=view.description, input_schema=view.input_schema)
            for view in views
        ]
        return to_mcp(shown)

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> Any:
        caller = self._callers.get(tool_name)
        if caller is None:  # listed by another run since: list again
            await asyncio.to_thread(self._list)
            caller = self._callers.get(tool_name)
        if caller is None:
            text = f"Error: there is no tool named {tool_name!r}"
            return to_mcp(CallToolResult(content=[_text(text)], is_error=True))
        return to_mcp(await asyncio.to_thread(_called, caller, arguments or {}, meta))

    async def list_prompts(self) -> Any:
        prompts = await asyncio.to_thread(self._client.list_prompts)
        return to_mcp(wire.ListPromptsResult(prompts=prompts))

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return to_mcp(await asyncio.to_thread(self._client.get_prompt, name, arguments))

    async def list_resources(self, cursor: str | None = None) -> Any:
        resources = await asyncio.to_thread(self._client.list_resources)
        return to_mcp(wire.ListResourcesResult(resources=resources))

    async def list_resource_templates(self, cursor: str | None = None) -> Any:
        templates = await asyncio.to_thread(self._client.list_resource_templates)
        return to_mcp(wire.ListResourceTemplatesResult(resource_templates=templates))

    async def read_resource(self, uri: str) -> Any:
        return to_mcp(await asyncio.to_thread(self._client.read_resource, uri))


def _called(
    caller: ToolCaller, arguments: dict[str, Any], meta: dict[str, Any] | None
) -> CallToolResult:
    """The call's result as the model is to see it, in content blocks the SDK shows: the text
    (``Error: ...`` for a failure) and each image."""
    request = caller.request(arguments)
    if meta:
        request.meta.update(meta)
    outcome = caller.send(request)
    if not isinstance(outcome, CallToolResult):
        text = outcome if isinstance(outcome, str) else json.dumps(outcome, default=str)
        return CallToolResult(content=[_text(text)])
    text, images = _shown(outcome)
    blocks: list[wire.ContentBlock] = [_text(text)]
    blocks += [wire.ImageContent(type="image", data=data, mime_type=mime) for mime, data in images]
    return CallToolResult(content=blocks, is_error=outcome.is_error)


def _text(text: str) -> wire.TextContent:
    return wire.TextContent(type="text", text=text)
