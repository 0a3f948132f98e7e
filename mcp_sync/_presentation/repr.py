"""Readable renderings of tools, prompts, resources and results, for Jupyter and the CLI.

The models' ``_repr_html_`` / ``_repr_markdown_`` delegate here. Plain lists (what
``client.list_tools()`` returns) get the same table through an IPython formatter that the
first :class:`~mcp_sync.Client` registers when IPython is running (:func:`register_ipython`;
importing registers nothing); a list of anything else is left to IPython's default.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol.types import Tool
from ..redaction import redact

__all__ = [
    "ToolParameter",
    "html_for",
    "markdown_for",
    "register_ipython",
    "schema_type",
    "tool_parameters",
]


@dataclass(frozen=True)
class ToolParameter:
    """One parameter of a tool, summarised from its input schema for people (see
    :func:`~mcp_sync.tool_parameters`)."""

    name: str
    #: A short name for its type, such as ``string``, ``integer | null``, ``array of string``.
    type: str
    required: bool
    #: Its ``description`` (else its ``title``), or ``""``.
    description: str


def schema_type(schema: Any) -> str:
    """A short human name for a JSON Schema's type: ``string``, ``integer | null``,
    ``array of string``, ``"a" | "b"``, ``Weather`` (from a ``$ref``), ``any``."""
    if not isinstance(schema, dict):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return " | ".join(json.dumps(v) for v in schema["enum"][:6]) + (
            " | ..." if len(schema["enum"]) > 6 else ""
        )
    if "const" in schema:
        return json.dumps(schema["const"])
    if isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return " | ".join(dict.fromkeys(schema_type(option) for option in options))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array of {schema_type(items)}" if isinstance(items, dict) else "array"
    if isinstance(kind, str):
        return kind
    return "object" if "properties" in schema else "any"


def tool_parameters(tool: Tool | Mapping[str, Any]) -> list[ToolParameter]:
    """The top-level parameters of a tool (or of an input schema), required ones first: what a
    table of tools shows, as the ``mcp-sync tools`` command and notebooks do::

        for param in mcp_sync.tool_parameters(tool):
            print(param.name, param.type, "required" if param.required else "optional")
    """
    input_schema = tool.input_schema if isinstance(tool, Tool) else tool
    if not isinstance(input_schema, dict):
        return []
    properties = input_schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = input_schema.get("required")
    required_set = set(required) if isinstance(required, list) else set()
    params = [
        ToolParameter(
            name=str(name),
            type=schema_type(schema),
            required=name in required_set,
            description=str(schema.get("description") or schema.get("title") or "")
            if isinstance(schema, dict)
            else "",
        )
        for name, schema in properties.items()
    ]
    return sorted(params, key=lambda p: not p.required)


# -- HTML -----------------------------------------------------------------------------------

_STYLE = (
    "<style>.mcp-sync table{border-collapse:collapse}"
    ".mcp-sync td,.mcp-sync th{text-align:left;vertical-align:top;padding:2px 8px}"
    ".mcp-sync pre{white-space:pre-wrap;margin:0}</style>"
)


def _e(text: Any) -> str:
    import html  # on first use: its entity table is 1% of `import mcp_sync`, for HTML only

    return html.escape(str(text), quote=True)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return (
        f'{_STYLE}<div class="mcp-sync"><table><caption>{_e(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _params_html(input_schema: Any) -> str:
    params = tool_parameters(input_schema)
    if not params:
        return "<em>none</em>"
    lines = []
    for p in params:
        mark = " <b>(required)</b>" if p.required else ""
        desc = f" &mdash; {_e(p.description)}" if p.description else ""
        lines.append(f"<code>{_e(p.name)}</code>: <i>{_e(p.type)}</i>{mark}{desc}")
    return "<br>".join(lines)


def _tools_html(tools: Sequence[Any]) -> str:
    rows = [
        [
            f"<code>{_e(t.name)}</code>",
            _e(t.description or t.title or ""),
            _params_html(t.input_schema),
        ]
        for t in tools
    ]
    return _table(["tool", "description", "parameters"], rows, _count(tools, "tool"))


def _prompts_html(prompts: Sequence[Any]) -> str:
    rows = []
    for p in prompts:
        args = "<br>".join(
            f"<code>{_e(a.name)}</code>{' <b>(required)</b>' if a.required else ''}"
            + (f" &mdash; {_e(a.description)}" if a.description else "")
            for a in (p.arguments or [])
        )
        name = f"<code>{_e(p.name)}</code>"
        rows.append([name, _e(p.description or ""), args or "<em>none</em>"])
    return _table(["prompt", "description", "arguments"], rows, _count(prompts, "prompt"))


def _resources_html(resources: Sequence[Any]) -> str:
    rows = [
        [f"<code>{_e(r.uri)}</code>", _e(r.name), _e(r.mime_type or ""), _e(r.description or "")]
        for r in resources
    ]
    return _table(["uri", "name", "type", "description"], rows, _count(resources, "resource"))


def _templates_html(templates: Sequence[Any]) -> str:
    rows = [
        [
            f"<code>{_e(t.uri_template)}</code>",
            _e(t.name),
            _e(t.mime_type or ""),
            _e(t.description or ""),
        ]
        for t in templates
    ]
    return _table(
        ["uri template", "name", "type", "description"], rows, _count(templates, "template")
    )


def _count(items: Sequence[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _json_html(value: Any) -> str:
    return f"<pre>{_e(json.dumps(value, indent=2, ensure_ascii=False))}</pre>"


def _block_html(block: Any) -> str:
    from ..protocol.types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    if isinstance(block, TextContent):
        return f"<pre>{_e(block.text)}</pre>"
    if isinstance(block, ImageContent):
        return f'<img src="data:{_e(block.mime_type)};base64,{_e(block.data)}" alt="image">'
    if isinstance(block, AudioContent):
        return f'<audio controls src="data:{_e(block.mime_type)};base64,{_e(block.data)}"></audio>'
    if isinstance(block, ResourceLink):
        return f"resource link: <code>{_e(block.uri)}</code> ({_e(block.name)})"
    if isinstance(block, EmbeddedResource):
        res = block.resource
        if isinstance(res, TextResourceContents):
            return f"resource <code>{_e(res.uri)}</code>:<pre>{_e(res.text)}</pre>"
        mime = res.mime_type or ""
        if mime.startswith("image/"):
            return f'<img src="data:{_e(mime)};base64,{_e(res.blob)}" alt="{_e(res.uri)}">'
        return f"binary resource <code>{_e(res.uri)}</code> ({_e(mime or 'unknown type')})"
    return _json_html(block.to_wire() if hasattr(block, "to_wire") else str(block))


def _result_html(result: Any) -> str:
    parts = []
    if result.is_error:
        parts.append('<p style="color:#b00020"><b>Tool error</b></p>')
    parts.extend(_block_html(block) for block in result.content)
    if result.structured_content is not None:
        parts.append("<details open><summary>structured content</summary>")
        parts.append(_json_html(result.structured_content) + "</details>")
    if not parts:
        parts.append("<em>empty result</em>")
    return f'{_STYLE}<div class="mcp-sync">{"".join(parts)}</div>'


def _prompt_result_html(result: Any) -> str:
    rows = [[_e(m.role), _block_html(m.content)] for m in result.messages]
    caption = result.description or _count(result.messages, "message")
    return _table(["role", "content"], rows, caption)


def _read_result_html(result: Any) -> str:
    from ..protocol.types import TextResourceContents

    parts = []
    for c in result.contents:
        if isinstance(c, TextResourceContents):
            parts.append(f"<code>{_e(c.uri)}</code><pre>{_e(c.text)}</pre>")
        elif (c.mime_type or "").startswith("image/"):
            parts.append(f'<img src="data:{_e(c.mime_type)};base64,{_e(c.blob)}" alt="image">')
        else:
            parts.append(f"<code>{_e(c.uri)}</code>: binary ({_e(c.mime_type or 'unknown')})")
    return f'{_STYLE}<div class="mcp-sync">{"".join(parts) or "<em>empty</em>"}</div>'


# -- Markdown -------------------------------------------------------------------------------


def _m(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _params_md(input_schema: Any) -> str:
    return "<br>".join(
        f"`{_m(p.name)}`{'*' if p.required else ''}: {_m(p.type)}"
        + (f" — {_m(p.description)}" if p.description else "")
        for p in tool_parameters(input_schema)
    )


def _fence(text: str, lang: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text}\n{fence}"


def _result_md(result: Any) -> str:
    from ..protocol.types import ImageContent, TextContent

    parts = ["**Tool error**"] if result.is_error else []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(_fence(block.text))
        elif isinstance(block, ImageContent):
            parts.append(f"![image](data:{block.mime_type};base64,{block.data})")
        else:
            parts.append(_fence(json.dumps(block.to_wire(), indent=2), "json"))
    if result.structured_content is not None:
        parts.append(_fence(json.dumps(result.structured_content, indent=2), "json"))
    return "\n\n".join(parts) or "*empty result*"


# -- dispatch -------------------------------------------------------------------------------


def _kind(value: Any) -> str | None:
    from ..protocol import types as t

    kinds: list[tuple[type[Any], str]] = [
        (t.Tool, "tool"),
        (t.Prompt, "prompt"),
        (t.Resource, "resource"),
        (t.ResourceTemplate, "template"),
        (t.CallToolResult, "result"),
        (t.GetPromptResult, "prompt_result"),
        (t.ReadResourceResult, "read_result"),
    ]
    for cls, name in kinds:
        if isinstance(value, cls):
            return name
    return None


def _list_kind(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return None
    kind = _kind(value[0])
    if kind not in ("tool", "prompt", "resource", "template"):
        return None
    return kind if all(_kind(item) == kind for item in value) else None


def html_for(value: Any) -> str | None:
    """HTML for an MCP model, or a non-empty list of tools / prompts / resources /
    templates; None for anything else. A secret the client holds that a server echoes (a
    token in a result) is shown as ``[redacted]``, here and in :func:`markdown_for`."""
    text = _html(value)
    return redact(text) if text is not None else None


def markdown_for(value: Any) -> str | None:
    """Markdown for the same values as :func:`html_for`."""
    text = _markdown(value)
    return redact(text) if text is not None else None


def _html(value: Any) -> str | None:
    kind = _list_kind(value)
    items = value if kind is not None else [value]
    kind = kind or _kind(value)
    if kind == "tool":
        return _tools_html(items)
    if kind == "prompt":
        return _prompts_html(items)
    if kind == "resource":
        return _resources_html(items)
    if kind == "template":
        return _templates_html(items)
    if kind == "result":
        return _result_html(value)
    if kind == "prompt_result":
        return _prompt_result_html(value)
    if kind == "read_result":
        return _read_result_html(value)
    return None


def _markdown(value: Any) -> str | None:
    kind = _list_kind(value)
    items = value if kind is not None else [value]
    kind = kind or _kind(value)
    if kind == "tool":
        rows = [
            [f"`{_m(t.name)}`", _m(t.description or ""), _params_md(t.input_schema)] for t in items
        ]
        return _md_table(["tool", "description", "parameters"], rows)
    if kind == "prompt":
        rows = [
            [
                f"`{_m(p.name)}`",
                _m(p.description or ""),
                ", ".join(
                    f"`{_m(a.name)}`{'*' if a.required else ''}" for a in (p.arguments or [])
                ),
            ]
            for p in items
        ]
        return _md_table(["prompt", "description", "arguments"], rows)
    if kind in ("resource", "template"):
        rows = [
            [
                f"`{_m(getattr(r, 'uri', None) or r.uri_template)}`",
                _m(r.name),
                _m(r.mime_type or ""),
                _m(r.description or ""),
            ]
            for r in items
        ]
        return _md_table(["uri", "name", "type", "description"], rows)
    if kind == "result":
        return _result_md(value)
    if kind == "prompt_result":
        return "\n\n".join(
            f"**{m.role}**: {_m(getattr(m.content, 'text', m.content))}" for m in value.messages
        )
    if kind == "read_result":
        return "\n\n".join(
            _fence(getattr(c, "text", None) or f"[binary {c.mime_type}]") for c in value.contents
        )
    return None


def register_ipython(ipython: Any = None) -> bool:
    """Make IPython render plain lists of tools, prompts, resources and templates as tables.

    Called by each new :class:`~mcp_sync.Client` while IPython is loaded (cheap when it is
    not running); returns whether it registered.
    """
    if ipython is None:
        module = sys.modules.get("IPython")
        get = getattr(module, "get_ipython", None)
        ipython = get() if get is not None else None
    if ipython is None:
        return False
    formatters = getattr(getattr(ipython, "display_formatter", None), "formatters", None)
    if not formatters:
        return False
    for mime, render in (("text/html", html_for), ("text/markdown", markdown_for)):
        formatter = formatters.get(mime)
        if formatter is not None:
            formatter.for_type(list, lambda value, render=render: render(value))
    return True
