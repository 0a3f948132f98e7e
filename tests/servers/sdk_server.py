"""A fixture MCP server written with the official Python SDK (`mcp` 2.x, MCPServer).

A real server that others wrote the protocol side of: mcp_sync's interop tests run against it
over stdio, Streamable HTTP and legacy SSE. It covers tools with structured output, progress,
logging, sampling, elicitation, roots, resources, templates, prompts and completion.

    python sdk_server.py stdio
    python sdk_server.py streamable-http PORT [--json]
    python sdk_server.py sse PORT
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated

import mcp_types as types
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # the SDK flags sampling/roots as deprecated in 2026-07-28

server = MCPServer("sdk-fixture", instructions="A fixture server for mcp_sync's tests.")


class Weather(BaseModel):
    city: str
    temperature: float = Field(description="degrees Celsius")
    conditions: str


class Name(BaseModel):
    name: str = Field(description="your name")
    age: int = Field(default=30, description="your age")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def weather(city: str) -> Weather:
    """The weather in a city (structured output)."""
    return Weather(city=city, temperature=21.5, conditions="sunny")


@server.tool()
def fail(message: str = "it broke") -> str:
    """Always fails: a tool error, not a protocol error."""
    raise ValueError(message)


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress and log at each step."""
    for step in range(1, steps + 1):
        await ctx.info(f"step {step} of {steps}")
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done after {steps} steps"


def _ask_model(question: str) -> Sample:
    message = types.SamplingMessage(
        role="user", content=types.TextContent(type="text", text=question)
    )
    return Sample([message], max_tokens=50)


def _ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def _roots() -> ListRoots:
    return ListRoots()


# These three ask the client for input: mid-call server requests in the handshake era,
# an `input_required` result and a retry in the 2026 era (the SDK's Resolve markers).


@server.tool()
def ask_llm(
    question: str, answer: Annotated[types.CreateMessageResult, Resolve(_ask_model)]
) -> str:
    """Ask the client's model through sampling."""
    content = answer.content
    return content.text if isinstance(content, types.TextContent) else str(content)


@server.tool()
def ask_name(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
    """Ask the user for their name through form elicitation."""
    if isinstance(answer, AcceptedElicitation):
        return f"hello {answer.data.name}, age {answer.data.age}"
    return f"no name ({answer.action})"


@server.tool()
def list_roots(roots: Annotated[types.ListRootsResult, Resolve(_roots)]) -> list[str]:
    """The client's roots, as URIs."""
    return [str(root.uri) for root in roots.roots]


@server.tool()
async def poke(ctx: Context) -> str:
    """Announce a tools list change and an update of config://app to subscribers."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("config://app")
    return "poked"


@server.resource("config://app", mime_type="application/json")
def app_config() -> str:
    """The app's configuration."""
    return '{"debug": true}'


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Review some code."""
    return f"Please review this {language} code:\n{code}"


LANGUAGES = ["python", "perl", "php", "rust"]


@server.completion()
async def complete(ref, argument, context):  # type: ignore[no-untyped-def]
    if argument.name == "language":
        return types.Completion(values=[x for x in LANGUAGES if x.startswith(argument.value)])
    if argument.name == "name":
        return types.Completion(
            values=[x for x in ["alice", "bob"] if x.startswith(argument.value)]
        )
    return None


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run()
    elif mode == "streamable-http":
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=int(sys.argv[2]),
            json_response="--json" in sys.argv,
        )
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
