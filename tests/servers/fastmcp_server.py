"""A fixture MCP server written with fastmcp 4.x, a real framework others wrote.

It pages every list two items at a time (``list_page_size=2``) and supports
``logging/setLevel``; it speaks both protocol eras.

    python fastmcp_server.py stdio
    python fastmcp_server.py http PORT
    python fastmcp_server.py sse PORT
"""

from __future__ import annotations

import sys
import warnings

from fastmcp import Context, FastMCP

warnings.simplefilter("ignore")

mcp = FastMCP("fastmcp-fixture", list_page_size=2)


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@mcp.tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@mcp.tool
async def chatty(steps: int, ctx: Context) -> str:
    """Log and report progress at each step."""
    for step in range(1, steps + 1):
        await ctx.info(f"chatty step {step}")
        await ctx.report_progress(step, steps)
    return f"chatted {steps} times"


@mcp.tool
def fail() -> str:
    """Always fails."""
    raise ValueError("fastmcp tool failure")


def _item(index: int):  # type: ignore[no-untyped-def]
    def read() -> str:
        return f"item number {index}"

    return read


for _index in range(5):
    mcp.resource(f"data://item/{_index}", name=f"item-{_index}")(_item(_index))


@mcp.resource("data://greeting/{name}")
def greeting(name: str) -> str:
    """Greet someone."""
    return f"Hi {name}"


@mcp.prompt
def summarize(text: str) -> str:
    """Summarize a text."""
    return f"Summarize: {text}"


@mcp.prompt
def translate(text: str, language: str = "French") -> str:
    """Translate a text."""
    return f"Translate into {language}: {text}"


@mcp.prompt
def explain(topic: str) -> str:
    """Explain a topic."""
    return f"Explain {topic}"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        mcp.run(show_banner=False)
    else:
        mcp.run(transport=mode, host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
