"""An MCP server's tools as LangChain tools (extra ``langchain``; ``langchain-core`` >= 1.0).

::

    from mcp_sync.integrations.langchain import langchain_tools

    tools = langchain_tools(client)              # list[StructuredTool], one per MCP tool
    model = chat_model.bind_tools(tools)
    message = tools[0].invoke(tool_call)         # a ToolMessage

Each tool keeps the MCP tool's name and description, and its input schema verbatim as the
``args_schema`` (LangChain takes a JSON schema dict as it is), but for the invisible characters
:func:`~mcp_sync.llm.clean_tool` strips (``clean=False`` keeps them). Calling it calls the MCP
tool on the calling thread; ``ainvoke`` runs that call on LangChain's own executor (it offloads sync
tools to a thread), so an async agent never blocks its event loop. Results use
``response_format="content_and_artifact"``: the content is a list of LangChain standard
blocks (``text``, and ``image`` with ``base64`` and ``mime_type``), the artifact the whole
:class:`~mcp_sync.types.CallToolResult` (``structured_content`` included). A result with
``isError`` raises LangChain's ``ToolException``; the tools set ``handle_tool_error=True``, so a
tool-calling loop gets a ``ToolMessage`` with ``status="error"`` and the tool's text, as
LangChain's own tools report failure. Protocol errors (an unknown tool, a timeout, a closed
connection) are raised as mcp_sync errors.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool, ToolException

from ..client import Client
from ..protocol.types import CallToolResult, Tool
from ._results import clean_tool, description_of, result_items, tools_of

__all__ = ["langchain_tool", "langchain_tools"]


def langchain_tools(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
) -> list[StructuredTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as LangChain tools
    that call them through ``client``."""
    return [langchain_tool(client, tool, clean=clean) for tool in tools_of(client, tools, names)]


def langchain_tool(client: Client, tool: Tool, *, clean: bool = True) -> StructuredTool:
    """One MCP tool as a LangChain ``StructuredTool`` calling it through ``client``; what the
    model sees is cleaned by :func:`~mcp_sync.llm.clean_tool` unless ``clean=False``."""
    shown = clean_tool(tool, clean=clean)

    def call(**arguments: Any) -> tuple[list[dict[str, Any]], CallToolResult]:
        result = client.call_tool(tool.name, arguments)
        if result.is_error:
            raise ToolException(result.text or f"tool {tool.name!r} reported an error")
        return [_block(item) for item in result_items(result)], result

    return StructuredTool(
        name=shown.name,
        description=description_of(shown),
        args_schema=shown.input_schema,
        func=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
        metadata={"mcp_annotations": tool.annotations.to_wire()} if tool.annotations else None,
    )


def _block(item: dict[str, Any]) -> dict[str, Any]:
    if item["type"] == "image":
        return {"type": "image", "base64": item["data"], "mime_type": item["mimeType"]}
    return item
