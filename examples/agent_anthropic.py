"""An agent loop in the Anthropic messages shape, with MCP tools from any server.

The model call is yours: pass a function that takes the messages and tools and returns the
response as a dict (``role``, ``content`` blocks, ``stop_reason``), for instance::

    import anthropic
    claude = anthropic.Anthropic()

    def call_model(messages, tools):
        response = claude.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=tools)
        return response.model_dump(include={"role", "content", "stop_reason"})

mcp_sync itself needs no vendor SDK: tools and results are plain dicts.

    python examples/agent_anthropic.py   # runs with a scripted stand-in for the model
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import mcp_sync
from mcp_sync.llm import anthropic_tool_result, anthropic_tools, llm_tool_names

Message = dict[str, Any]
CallModel = Callable[[list[Message], list[dict[str, Any]]], Message]


def run_agent(
    client: mcp_sync.Client, prompt: str, call_model: CallModel, *, max_turns: int = 10
) -> str:
    """Let the model call the server's tools until it stops asking; return its text."""
    tools = client.list_tools()
    by_llm_name = dict(zip(llm_tool_names(tools), tools, strict=True))  # safe name -> tool
    messages: list[Message] = [{"role": "user", "content": prompt}]
    for _ in range(max_turns):
        response = call_model(messages, anthropic_tools(tools))
        messages.append({"role": "assistant", "content": response["content"]})
        uses = [block for block in response["content"] if block["type"] == "tool_use"]
        if response.get("stop_reason") != "tool_use" or not uses:
            return "".join(b["text"] for b in response["content"] if b["type"] == "text")
        results = []
        for use in uses:
            tool = by_llm_name[use["name"]]
            result = client.call_tool(tool.name, use["input"], timeout=60)
            results.append(anthropic_tool_result(use["id"], result, max_text_bytes=20 * 1024))
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {max_turns} turns")


def scripted_model(messages: list[Message], tools: list[dict[str, Any]]) -> Message:
    """A stand-in for a real model: converts a time once, then answers."""
    last = messages[-1]["content"]
    if isinstance(last, str):
        use = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "convert_time",
            "input": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        }
        return {"role": "assistant", "content": [use], "stop_reason": "tool_use"}
    answer = last[0]["content"][0]["text"]
    return {
        "role": "assistant",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": f"The tool said: {answer}"}],
    }


if __name__ == "__main__":
    server = os.path.join(os.path.dirname(sys.executable), "mcp-server-time")
    with mcp_sync.connect([server if os.path.exists(server) else "mcp-server-time"]) as client:
        print(run_agent(client, "What is noon UTC in Tokyo?", scripted_model))
