"""An MCP server's tools as CrewAI tools (extra ``crewai``).

::

    from crewai import Agent
    from mcp_sync.integrations.crewai import crewai_tools

    agent = Agent(role="clerk", goal="...", backstory="...", tools=crewai_tools(client))

CrewAI's install pins its own ``mcp`` (1.x) and ``pydantic``: give it a virtualenv of its own
(mcp_sync does not need ``mcp`` there). Each tool is a ``BaseTool`` made from the tool as a
model may see it (:func:`~mcp_sync.llm.model_view`): CrewAI builds its ``args_schema`` from the
cleaned input schema with its own JSON-Schema reader, so CrewAI validates the model's arguments
before the call. A call returns the structured content as JSON when there is some, else the
text (:func:`mcp_sync.to_llm_text`: an image is described). A result with ``isError`` raises
:class:`~mcp_sync.errors.ToolError`, which CrewAI reports to the model as a failed tool use, as
it does for its own tools; so do a timeout, a closed connection and an unavailable server, under
the options of every adapter (``on_error="message"``, ``timeout``, ``prefix``, ``interceptors``:
:mod:`mcp_sync.integrations._adapter`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from crewai.tools import BaseTool  # type: ignore[import-not-found,unused-ignore]
from crewai.utilities.pydantic_schema_utils import (  # type: ignore[import-not-found,unused-ignore]
    create_model_from_schema,
)

from ..errors import ToolError
from ..llm import ModelTool, to_llm_text
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

__all__ = ["crewai_tool", "crewai_tools"]


def crewai_tools(
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
) -> list[Any]:
    """The server's tools (or ``tools``, or those named in ``names``) as CrewAI tools."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    views = views_of(
        client, tools, names, clean=clean, include_app_only=include_app_only, prefix=prefix
    )
    return [_tool(ToolCaller(client, view, options)) for view in views]


def crewai_tool(
    client: ToolSource,
    tool: Tool,
    *,
    clean: bool = True,
    prefix: str = "",
    timeout: float | None = None,
    on_error: ErrorPolicy = "message",
    interceptors: Sequence[Interceptor] = (),
) -> Any:
    """One MCP tool as a CrewAI ``BaseTool`` calling it through ``client``."""
    options = CallOptions(timeout=timeout, on_error=on_error, interceptors=interceptors)
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True, prefix=prefix)
    return _tool(ToolCaller(client, view, options))


def _tool(caller: ToolCaller) -> Any:
    view: ModelTool = caller.view
    arguments_model = create_model_from_schema(view.input_schema, model_name=_model_name(view.name))
    return _McpTool(
        name=view.name,
        description=description_of(view),
        args_schema=arguments_model,
        caller=caller,
    )


def _model_name(name: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(word.capitalize() for word in words) + "Arguments"


class _McpTool(BaseTool):  # type: ignore[misc,unused-ignore]  # CrewAI lives in its own venv
    caller: Any

    def _run(self, **arguments: Any) -> Any:
        # a model passes null for an optional argument it leaves out: the server's default
        sent = {k: v for k, v in arguments.items() if v is not None}
        outcome = self.caller(sent)
        if not isinstance(outcome, CallToolResult):
            return outcome  # an interceptor's own value
        if outcome.is_error:
            raise ToolError(self.name, outcome)  # the name the model knows
        if outcome.structured_content is not None:
            return json.dumps(outcome.structured_content)
        return to_llm_text(outcome)
