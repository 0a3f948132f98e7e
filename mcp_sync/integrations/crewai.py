"""An MCP server's tools as CrewAI tools (extra ``crewai``).

::

    from crewai import Agent
    from mcp_sync.integrations.crewai import crewai_tools

    agent = Agent(role="clerk", goal="...", backstory="...", tools=crewai_tools(client))

CrewAI's install pins its own ``mcp`` (1.x) and ``pydantic``: give it a virtualenv of its own
(mcp_sync does not need ``mcp`` there). Each tool is a ``BaseTool`` whose ``args_schema`` CrewAI
builds from the tool's input schema (cleaned by :func:`~mcp_sync.llm.clean_tool` unless
``clean=False``) with its own JSON-Schema reader, so CrewAI validates the model's arguments
before the call. A call returns the structured content as JSON when there is some, else the
text (:func:`mcp_sync.to_llm_text`: an image is described). A result with ``isError`` raises
:class:`~mcp_sync.errors.ToolError`, which CrewAI reports to the model as a failed tool use, as
it does for its own tools.
"""

from __future__ import annotations

import json
from typing import Any

from crewai.tools import BaseTool  # type: ignore[import-not-found,unused-ignore]
from crewai.utilities.pydantic_schema_utils import (  # type: ignore[import-not-found,unused-ignore]
    create_model_from_schema,
)

from ..client import Client
from ..errors import ToolError
from ..llm import to_llm_text
from ..protocol.types import Tool
from ._results import clean_tool, description_of, tools_of

__all__ = ["crewai_tool", "crewai_tools"]


def crewai_tools(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
) -> list[Any]:
    """The server's tools (or ``tools``, or those named in ``names``) as CrewAI tools."""
    return [crewai_tool(client, tool, clean=clean) for tool in tools_of(client, tools, names)]


def crewai_tool(client: Client, tool: Tool, *, clean: bool = True) -> Any:
    """One MCP tool as a CrewAI ``BaseTool`` calling it through ``client``."""
    shown = clean_tool(tool, clean=clean)
    schema = dict(shown.input_schema) if isinstance(shown.input_schema, dict) else {}
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    arguments_model = create_model_from_schema(schema, model_name=_model_name(tool.name))
    return _McpTool(
        name=shown.name,
        description=description_of(shown),
        args_schema=arguments_model,
        client=client,
        mcp_name=tool.name,
    )


def _model_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "Arguments"


class _McpTool(BaseTool):  # type: ignore[misc,unused-ignore]  # CrewAI lives in its own venv
    client: Any
    mcp_name: str

    def _run(self, **arguments: Any) -> str:
        # a model passes null for an optional argument it leaves out: the server's default
        sent = {k: v for k, v in arguments.items() if v is not None}
        result = self.client.call_tool(self.mcp_name, sent)
        if result.is_error:
            raise ToolError(self.mcp_name, result)
        if result.structured_content is not None:
            return json.dumps(result.structured_content)
        return to_llm_text(result)
