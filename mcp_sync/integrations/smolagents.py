"""An MCP server's tools as smolagents tools (extra ``smolagents``).

::

    from smolagents import ToolCallingAgent
    from mcp_sync.integrations.smolagents import smolagents_tools

    agent = ToolCallingAgent(tools=smolagents_tools(client), model=model)

smolagents wants tool names that are Python identifiers: a name such as ``get-sum`` becomes
``get_sum`` (``mcp_name`` keeps the original, which is what gets called). Each property of the
input schema becomes an entry of ``inputs`` with its JSON type (a type smolagents does not know,
or a schema without one, is ``any``), its description (else its title, else its name), its enum,
bounds, lengths, pattern and format, and ``nullable`` when it is optional; ``output_type`` is
``object`` with the tool's ``output_schema`` when it has one, else ``any``. All of it is the
tool as a model may see it (:func:`~mcp_sync.llm.model_view`: cleaned, and app-only MCP Apps
tools left out unless ``include_app_only=True``). A call returns the structured content when
there is some (the ``object`` its ``output_type`` promises: a CodeAgent's code reads it;
``prefer="content"`` returns the content a ToolCallingAgent's model would rather read, see
SEP-2200 in :mod:`mcp_sync.integrations._results`), a single image as a PIL image (smolagents
stores it as ``image.png``), and otherwise the text (images among text are described, not
dropped). A result with ``isError`` raises :class:`~mcp_sync.errors.ToolError`, which smolagents
reports to the model as a failed tool call, as it does for its own tools. smolagents runs
parallel tool calls on a thread pool; the client is made for that.
"""

from __future__ import annotations

import base64
import io
import keyword
import re
from typing import Any

from smolagents import Tool as SmolTool  # type: ignore[import-untyped]  # no type hints: Any
from smolagents.tools import AUTHORIZED_TYPES  # type: ignore[import-untyped]

from ..client import Client
from ..errors import ToolError
from ..llm import ModelTool
from ..protocol.types import CallToolResult, Tool
from ._adapter import PARAMETER_DETAILS, CallOptions, ToolCaller, description_of, views_of
from ._results import ResultPreference, result_items

__all__ = ["python_name", "smolagents_tool", "smolagents_tools"]


def smolagents_tools(
    client: Client,
    *,
    tools: list[Tool] | None = None,
    names: list[str] | None = None,
    clean: bool = True,
    include_app_only: bool = False,
    prefer: ResultPreference = "structured",
) -> list[SmolTool]:
    """The server's tools (or ``tools``, or those named in ``names``) as smolagents tools."""
    views = views_of(client, tools, names, clean=clean, include_app_only=include_app_only)
    return [_McpTool(client, view, prefer) for view in views]


def smolagents_tool(
    client: Client, tool: Tool, *, clean: bool = True, prefer: ResultPreference = "structured"
) -> SmolTool:
    """One MCP tool as a smolagents ``Tool`` calling it through ``client``; what the model
    sees is its :func:`~mcp_sync.llm.model_view` (cleaned unless ``clean=False``)."""
    (view,) = views_of(client, [tool], None, clean=clean, include_app_only=True)
    return _McpTool(client, view, prefer)


def python_name(name: str) -> str:
    """``name`` made a Python identifier that is not a keyword (smolagents' rule)."""
    cleaned = re.sub(r"\W", "_", name) or "_"
    if cleaned[0].isdigit():
        cleaned = f"_{cleaned}"
    return f"{cleaned}_" if keyword.iskeyword(cleaned) else cleaned


class _McpTool(SmolTool):  # type: ignore[misc]  # smolagents ships no type hints
    skip_forward_signature_validation = True

    def __init__(self, client: Client, view: ModelTool, prefer: ResultPreference) -> None:
        self.client = client
        # smolagents reports a raised error to the model itself
        self._caller = ToolCaller(client, view, CallOptions(on_error="raise"))
        self._prefer = prefer
        self.mcp_name = view.tool.name
        self.name = python_name(view.name)
        self.description = description_of(view)
        self.inputs = _inputs(view.input_schema)
        self.output_type = "object" if view.output_schema else "any"
        self.output_schema = view.output_schema
        self._optional = {k for k, v in self.inputs.items() if v.get("nullable")}
        super().__init__()

    def forward(self, **arguments: Any) -> Any:
        # a model passes null for an optional argument it leaves out: the server's default
        sent = {k: v for k, v in arguments.items() if not (v is None and k in self._optional)}
        result = self._caller(sent)
        if result.is_error:
            raise ToolError(self.name, result)  # the name the model knows
        return _output(result, self._prefer)


def _inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    inputs: dict[str, dict[str, Any]] = {}
    for name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        types = prop.get("type")
        listed = [types] if isinstance(types, str) else list(types or [])
        nullable = "null" in listed or name not in required
        known = [t for t in listed if t in AUTHORIZED_TYPES and t != "null"]
        entry: dict[str, Any] = {k: prop[k] for k in PARAMETER_DETAILS if k in prop}
        entry["type"] = known[0] if len(known) == 1 else (known or "any")
        entry["description"] = prop.get("description") or prop.get("title") or name
        if nullable:
            entry["nullable"] = True
        inputs[name] = entry
    return inputs


def _output(result: CallToolResult, prefer: ResultPreference) -> Any:
    if prefer == "structured" and result.structured_content is not None:
        return result.structured_content
    items = result_items(result, prefer)
    if len(items) == 1 and items[0]["type"] == "image":
        from PIL import Image  # smolagents depends on pillow

        return Image.open(io.BytesIO(base64.b64decode(items[0]["data"])))
    parts = [
        item["text"] if item["type"] == "text" else f"[image: {item['mimeType']}]" for item in items
    ]
    return "\n".join(parts)
