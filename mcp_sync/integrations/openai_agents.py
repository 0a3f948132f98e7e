"""An MCP server's tools as OpenAI Agents SDK function tools (extra ``openai-agents``).

::

    from agents import Agent, Runner
    from mcp_sync.integrations.openai_agents import openai_agents_tools

    agent = Agent(name="assistant", tools=openai_agents_tools(client))
    print(Runner.run_sync(agent, "What time is it in Tokyo?").final_output)

Each tool is a ``FunctionTool`` whose parameters are the tool's own input schema (cleaned by
:func:`~mcp_sync.llm.clean_tool` unless ``clean=False``), not in strict mode: MCP schemas have
optional properties, which strict mode forbids. The SDK is async; a call runs the synchronous
client on a worker thread, as the SDK does for its own synchronous function tools, so that
parallel tool calls overlap. The model gets the result as text
(:func:`mcp_sync.to_llm_text`: an image is described). Arguments that are not a JSON object,
and a result with ``isError``, go back to the model as ``Error: ...``, as the SDK reports a
failing function tool; the client's own errors (:class:`~mcp_sync.errors.RequestTimeout`,
:class:`~mcp_sync.errors.ConnectionClosed`, ...) end the run: ``Runner.run_sync`` raises the
SDK's ``UserError``, with the mcp_sync error as its ``__cause__``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import FunctionTool

from ..client import Client
from ..llm import to_llm_text
from ..protocol.types import Tool
from ._results import clean_tool, description_of, tools_of

__all__ = ["openai_agents_tool", "openai_agents_tools"]


def openai_agents_tools(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
) -> list[FunctionTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as function tools."""
    return [
        openai_agents_tool(client, tool, clean=clean) for tool in tools_of(client, tools, names)
    ]


def openai_agents_tool(client: Client, tool: Tool, *, clean: bool = True) -> FunctionTool:
    """One MCP tool as an Agents SDK ``FunctionTool`` calling it through ``client``."""
    shown = clean_tool(tool, clean=clean)
    schema = dict(shown.input_schema) if isinstance(shown.input_schema, dict) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})

    def call(arguments: dict[str, Any]) -> str:
        result = client.call_tool(tool.name, arguments)
        text = to_llm_text(result)
        return f"Error: {text}" if result.is_error else text

    async def invoke(_context: Any, raw: str) -> str:
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            # the model's mistake, so the model is told (the run goes on)
            return f"Error: the arguments of {tool.name} must be a JSON object, not {raw[:200]!r}"
        return await asyncio.to_thread(call, arguments)

    return FunctionTool(
        name=shown.name,
        description=description_of(shown),
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
