"""A server on the official Python SDK's low-level API whose list and completion handlers
report progress: the SDK's own progress machinery sends ``notifications/progress`` against
the token of whatever request asked for it.

    python progress_lists_server.py            # stdio
"""

from __future__ import annotations

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
