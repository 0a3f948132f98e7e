"""A server on the official Python SDK's low-level API whose list and completion handlers
report progress: the SDK's own progress machinery sends ``notifications/progress`` against
the token of whatever request asked for it.

    python progress_lists_server.py            # stdio
    python progress_lists_server.py pages N DELAY

With ``pages N DELAY`` every list is N pages long, one item a page, and each page takes DELAY
seconds; a request that asked for progress gets a notification every DELAY / 4 seconds while
its page is being made (what a server paging through a slow backend does).
"""

from __future__ import annotations

import sys
import warnings

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

warnings.simplefilter("ignore")

STEPS = 3


async def _report(ctx, what: str) -> None:
    for step in range(1, STEPS + 1):
        await ctx.session.report_progress(step, STEPS, f"{what} {step}")


async def list_tools(ctx, params):
    await _report(ctx, "tools")
    schema = {"type": "object", "properties": {}}
    return types.ListToolsResult(tools=[types.Tool(name="noop", input_schema=schema)])


async def list_prompts(ctx, params):
    await _report(ctx, "prompts")
    return types.ListPromptsResult(
        prompts=[types.Prompt(name="greet", arguments=[types.PromptArgument(name="who")])]
    )


async def list_resources(ctx, params):
    await _report(ctx, "resources")
    return types.ListResourcesResult(resources=[types.Resource(uri="memo://one", name="one")])


async def list_templates(ctx, params):
    await _report(ctx, "templates")
    template = types.ResourceTemplate(uri_template="memo://{id}", name="memo")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def complete(ctx, params):
    await _report(ctx, "completion")
    return types.CompleteResult(completion=types.Completion(values=["Ada", "Alan"]))


def _paged(make):
    """A list handler: one item per page, ``PAGES`` pages, each taking ``DELAY`` seconds."""

    async def handler(ctx, params):
        number = int(params.cursor) if params is not None and params.cursor else 0
        for step in range(1, 5):
            await ctx.session.report_progress(step, 4, f"page {number}")
            await anyio.sleep(DELAY / 4)
        more = str(number + 1) if number + 1 < PAGES else None
        return make(number, more)

    return handler


def _tool_page(n, more):
    tool = types.Tool(name=f"tool{n}", input_schema={"type": "object", "properties": {}})
    return types.ListToolsResult(tools=[tool], next_cursor=more)


def _prompt_page(n, more):
    return types.ListPromptsResult(prompts=[types.Prompt(name=f"prompt{n}")], next_cursor=more)


def _resource_page(n, more):
    resource = types.Resource(uri=f"memo://{n}", name=f"memo{n}")
    return types.ListResourcesResult(resources=[resource], next_cursor=more)


def _template_page(n, more):
    template = types.ResourceTemplate(uri_template=f"memo{n}://{{id}}", name=f"memo{n}")
    return types.ListResourceTemplatesResult(resource_templates=[template], next_cursor=more)


if sys.argv[1:2] == ["pages"]:
    PAGES, DELAY = int(sys.argv[2]), float(sys.argv[3])
    list_tools = _paged(_tool_page)
    list_prompts = _paged(_prompt_page)
    list_resources = _paged(_resource_page)
    list_templates = _paged(_template_page)

server = Server(
    "progress-lists",
    on_list_tools=list_tools,
    on_list_prompts=list_prompts,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_completion=complete,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
