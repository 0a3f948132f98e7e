"""An MCP server's tools as LlamaIndex tools (extra ``llama-index``; ``llama-index-core``).

::

    from llama_index.core.agent.workflow import FunctionAgent
    from mcp_sync.integrations.llama_index import llama_index_tools

    agent = FunctionAgent(tools=llama_index_tools(client), llm=llm)

Each tool is a LlamaIndex ``FunctionTool`` whose metadata keeps the MCP name and description
and hands the MCP input schema to the LLM verbatim (``get_parameters_dict()``), rather than a
pydantic model rebuilt from it; it carries the tool's ``output_schema`` and ``_meta``
(``mcp_meta``) too. App-only MCP Apps tools are left out unless ``include_app_only=True``.
``call()`` calls the MCP tool on the calling thread; ``acall()``, which LlamaIndex's agents
use, runs that call on LlamaIndex's own executor (its ``FunctionTool`` offloads a sync function
to a thread). The ``ToolOutput`` holds the content as LlamaIndex blocks (``TextBlock``,
``ImageBlock``) of the result's ``content``, or of its structured content as JSON text when it
has no content or ``prefer="structured"`` (SEP-2200), the :class:`~mcp_sync.types.CallToolResult` as
``raw_output``, and ``is_error`` set from the result's ``isError``: LlamaIndex's own way of
telling the model that a tool failed.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from llama_index.core.base.llms.types import ImageBlock, TextBlock
from llama_index.core.tools import FunctionTool, ToolMetadata, ToolOutput

from ..client import Client
from ..llm import ModelTool
from ..protocol.types import CallToolResult, Tool
from ._adapter import CallOptions, ToolCaller, description_of, views_of
from ._results import ResultPreference, result_items

__all__ = ["McpToolMetadata", "llama_index_tool", "llama_index_tools"]


@dataclasses.dataclass
class McpToolMetadata(ToolMetadata):
    """Tool metadata whose parameters are the MCP tool's input schema, as the server gave it,
    with its output schema (``None`` when it has none) and its ``_meta``."""

    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    mcp_meta: dict[str, Any] | None = None

    def get_parameters_dict(self) -> dict[str, Any]:
        return self.parameters

    @property
    def fn_schema_str(self) -> str:
        return json.dumps(self.parameters, ensure_ascii=False)


def llama_index_tools(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefer: ResultPreference = "content",
) -> list[FunctionTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as LlamaIndex tools."""
    views = views_of(client, tools, names, clean=clean, include_app_only=include_app_only)
    return [_tool(client, view, prefer) for view in views]


def llama_index_tool(
    client: Client, tool: Tool, *, clean: bool = True, prefer: ResultPreference = "content"
) -> FunctionTool:
    """One MCP tool as a LlamaIndex ``FunctionTool`` calling it through ``client``; what the
    model sees is its :func:`~mcp_sync.llm.model_view` (cleaned unless ``clean=False``)."""
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True)
    return _tool(client, view, prefer)


def _tool(client: Client, view: ModelTool, prefer: ResultPreference) -> FunctionTool:
    tool = view.tool
    caller = ToolCaller(client, view, CallOptions(on_error="raise"))

    def call(**arguments: Any) -> _Called:
        return _Called(arguments, caller(arguments))

    def to_output(called: _Called) -> ToolOutput:
        return ToolOutput(
            tool_name=view.name,
            blocks=[_block(item) for item in result_items(called.result, prefer)]
            or [TextBlock(text="")],
            raw_input={"args": (), "kwargs": called.arguments},
            raw_output=called.result,
            is_error=called.result.is_error,
        )

    metadata = McpToolMetadata(
        name=view.name,
        description=description_of(view),
        fn_schema=None,
        parameters=view.input_schema,
        output_schema=view.output_schema,
        mcp_meta=tool.meta,
    )
    return FunctionTool(fn=call, metadata=metadata, callback=to_output)


@dataclasses.dataclass(frozen=True)
class _Called:
    """What the tool function hands to its callback, which builds the ToolOutput."""

    arguments: dict[str, Any]
    result: CallToolResult


def _block(item: dict[str, Any]) -> TextBlock | ImageBlock:
    if item["type"] == "image":
        return ImageBlock(image=item["data"].encode("ascii"), image_mimetype=item["mimeType"])
    return TextBlock(text=item["text"])
