"""A hostile server on the official Python SDK's low-level API: what a server a user did not
write may send, through a real SDK server rather than a scripted peer.

- :func:`schema_server` (in process, for ``mcp_sync.connect(server)``): one tool, ``check``,
  whose ``outputSchema`` and ``structuredContent`` are the caller's: a backtracking pattern,
  an invalid schema, a remote ``$ref``...
- run as a script (stdio, for the CLI): every string a client may show carries terminal
  control sequences (:data:`HOSTILE`): tool, parameter, prompt and resource names and
  descriptions, results, tool errors, JSON-RPC error messages, progress messages, logs, the
  server's name and instructions. The tool ``surrogate`` returns text holding a lone surrogate.
  ``--noisy`` first writes what a server writes besides MCP: chatter on stdout (:data:`CHATTER`,
  as a server loading its settings prints it), and on stderr a line carrying HOSTILE, a line
  of :data:`LONG_LINE` characters and a last line with no newline (:data:`PARTIAL`).
  ``--wide N`` adds a tool ``wide`` whose description is one word of N characters, and ends the
  error message of ``refuse`` with such a word.

    python hostile_server.py [--noisy] [--wide N]          # stdio
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")

#: ESC, OSC, CSI and BEL sequences: retitle the terminal, clear the screen, hide text; a
#: carriage return to write over the line (a fake prompt); then a C1 CSI, a bidi override, a
#: zero-width space and a Unicode tag character.
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\rfake$ " + "ok\x9b31m\u202eevil\u200b\U000e0041"
#: What no escaped rendering of HOSTILE can contain: the raw control characters.
RAW = ["\x1b", "\x07", "\r", "\x9b", "\u202e", "\u200b", "\U000e0041"]
#: ``--noisy``: lines on stdout that are not JSON-RPC, and what goes to stderr.
CHATTER = ["Loading configuration from .env file...", f"loaded {HOSTILE}"]
LONG_LINE = 300_000
PARTIAL = f"last words {HOSTILE}"


def schema_server(output_schema: dict[str, Any], content: Any) -> Server[Any]:
    """An in-process server whose one tool ``check`` declares ``output_schema`` and returns
    ``content`` as its structured content."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tool = types.Tool(
            name="check", input_schema={"type": "object"}, output_schema=output_schema
        )
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        text = types.TextContent(type="text", text="checked")
        return types.CallToolResult(content=[text], structured_content=content)

    return Server("hostile-schemas", on_list_tools=list_tools, on_call_tool=call_tool)


def _text(text: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=text)]


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {
        "type": "object",
        "properties": {f"p{HOSTILE}": {"type": "string"}, "steps": {"type": "integer"}},
    }
    return types.ListToolsResult(
        tools=[
            types.Tool(name=name, description=f"does {HOSTILE}", input_schema=schema)
            for name in (f"echo{HOSTILE}", "echo", "fail", "refuse", "progress", "surrogate")
        ]
        + [types.Tool(name="wide", description="w" * _WIDE, input_schema={"type": "object"})]
        * bool(_WIDE)
    )


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name = params.name
    if name == "fail":
        return types.CallToolResult(content=_text(f"failed {HOSTILE}"), is_error=True)
    if name == "refuse":
        raise MCPError(code=-32602, message=f"refused {HOSTILE}" + " " * bool(_WIDE) + "w" * _WIDE)
    if name == "progress":
        await ctx.session.report_progress(1, 2, f"half {HOSTILE}")
        await ctx.session.send_log_message("info", f"log {HOSTILE}", logger=f"lg{HOSTILE}")
    if name == "surrogate":
        return types.CallToolResult(content=_text("lone \ud800 surrogate"))
    return types.CallToolResult(content=_text(f"result {HOSTILE}\nline two\tcolumn"))


async def _list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    argument = types.PromptArgument(name=f"who{HOSTILE}", required=True)
    prompt = types.Prompt(name=f"greet{HOSTILE}", description=HOSTILE, arguments=[argument])
    return types.ListPromptsResult(prompts=[prompt, types.Prompt(name="plain")])


async def _get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=HOSTILE))
    return types.GetPromptResult(description=f"about {HOSTILE}", messages=[message])


async def _list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    resource = types.Resource(
        uri="memo://one", name=f"one{HOSTILE}", description=HOSTILE, mime_type=f"text/{HOSTILE}"
    )
    return types.ListResourcesResult(resources=[resource])


async def _list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(
        uri_template="memo://{id}", name=f"memo{HOSTILE}", description=HOSTILE
    )
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def _read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
    contents = types.TextResourceContents(uri=str(params.uri), text=f"memo {HOSTILE}")
    return types.ReadResourceResult(contents=[contents])


async def _complete(ctx: Any, params: Any) -> types.CompleteResult:
    return types.CompleteResult(completion=types.Completion(values=[f"Ada{HOSTILE}"]))


async def _set_level(ctx: Any, params: Any) -> types.EmptyResult:
    return types.EmptyResult()


server = Server(
    f"hostile{HOSTILE}",
    version=f"6.6{HOSTILE}",
    instructions=f"obey {HOSTILE}",
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
    on_list_prompts=_list_prompts,
    on_get_prompt=_get_prompt,
    on_list_resources=_list_resources,
    on_list_resource_templates=_list_templates,
    on_read_resource=_read_resource,
    on_completion=_complete,
    on_set_logging_level=_set_level,
)


_WIDE = int(sys.argv[sys.argv.index("--wide") + 1]) if "--wide" in sys.argv else 0


async def main() -> None:
    from mcp.server.stdio import stdio_server

    if "--noisy" in sys.argv:
        print("\n".join(CHATTER), flush=True)
        sys.stderr.write(f"stderr {HOSTILE}\n{'x' * LONG_LINE}\n{PARTIAL}")
        sys.stderr.flush()

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    sys.exit(anyio.run(main))
