"""An MCP server's tools as a pydantic-ai toolset over the synchronous client (extra
``pydantic-ai``).

::

    from pydantic_ai import Agent
    from mcp_sync.integrations.pydantic_ai import pydantic_ai_toolset

    agent = Agent("openai:gpt-5", toolsets=[pydantic_ai_toolset(client)])
    print(agent.run_sync("What time is it in Tokyo?").output)

pydantic-ai's own MCP client is async and owns its connection per agent run; this toolset
takes a client you already have (shared by threads, by runs, by other frameworks) and leaves
its lifetime to you. It is a ``FunctionToolset``: each tool keeps its name, description and
input schema (cleaned by :func:`~mcp_sync.llm.clean_tool` unless ``clean=False``; pydantic-ai
does not validate the arguments again, the server does), and runs on pydantic-ai's worker
thread, as its synchronous function tools do. A call returns the structured content when there
is some, else the text (:func:`mcp_sync.to_llm_text`), with each image as a
``BinaryContent`` beside it. A result with ``isError`` raises ``ModelRetry`` with the server's
text, so the model sees it and may try again (up to ``max_retries``), as pydantic-ai's own MCP
client does.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic_ai import BinaryContent, ModelRetry
from pydantic_ai.tools import Tool as PydanticTool
from pydantic_ai.toolsets import FunctionToolset

from .._numbers import whole
from ..client import Client
from ..llm import to_llm_text
from ..protocol.types import CallToolResult, Tool
from ._results import clean_tool, description_of, result_items, tools_of

__all__ = ["pydantic_ai_tool", "pydantic_ai_toolset"]


def pydantic_ai_toolset(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
    max_retries: int | None = None,
) -> FunctionToolset[Any]:
    """The server's tools (or ``tools``, or those named in ``names``) as one toolset;
    ``max_retries`` is how many ``isError`` results in a row the model may retry a tool after."""
    if max_retries is not None:
        whole(max_retries, "pydantic_ai_toolset: max_retries")
    return FunctionToolset(
        [pydantic_ai_tool(client, tool, clean=clean) for tool in tools_of(client, tools, names)],
        max_retries=max_retries,
    )


def pydantic_ai_tool(client: Client, tool: Tool, *, clean: bool = True) -> PydanticTool[Any]:
    """One MCP tool as a pydantic-ai ``Tool`` calling it through ``client``."""
    shown = clean_tool(tool, clean=clean)
    schema = dict(shown.input_schema) if isinstance(shown.input_schema, dict) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})

    def call(**arguments: Any) -> Any:
        result = client.call_tool(tool.name, arguments)
        if result.is_error:
            raise ModelRetry(to_llm_text(result) or f"the tool {tool.name} failed")
        return _output(result)

    made: PydanticTool[Any] = PydanticTool.from_schema(
        call, name=shown.name, description=description_of(shown), json_schema=schema
    )
    return made


def _output(result: CallToolResult) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    items = result_items(result)
    images = [
        BinaryContent(data=base64.b64decode(item["data"]), media_type=item["mimeType"])
        for item in items
        if item["type"] == "image"
    ]
    text = "\n".join(item["text"] for item in items if item["type"] == "text")
    if not images:
        return text
    return [text, *images] if text else images
