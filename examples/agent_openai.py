"""An agent loop in the OpenAI chat-completions shape, with MCP tools from any server.

The model call is yours: pass a function that takes the messages and tools and returns the
assistant message as a dict, for instance with the official SDK::

    from openai import OpenAI
    openai = OpenAI()

    def call_model(messages, tools):
        response = openai.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools)
        return response.choices[0].message.model_dump(exclude_none=True)

mcp_sync itself needs no vendor SDK: tools and results are plain dicts.

    python examples/agent_openai.py      # runs with a scripted stand-in for the model
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import mcp_sync
from mcp_sync.llm import llm_tool_names, openai_tool_message, openai_tools

Message = dict[str, Any]
CallModel = Callable[[list[Message], list[dict[str, Any]]], Message]


def run_agent(
    client: mcp_sync.Client, prompt: str, call_model: CallModel, *, max_turns: int = 10
) -> str:
    """Let the model call the server's tools until it answers in text; return that text."""
    tools = client.list_tools()
    by_llm_name = dict(zip(llm_tool_names(tools), tools, strict=True))  # safe name -> tool
    messages: list[Message] = [{"role": "user", "content": prompt}]
    for _ in range(max_turns):
        reply = call_model(messages, openai_tools(tools))
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        for call in calls:
            tool = by_llm_name[call["function"]["name"]]
            arguments = json.loads(call["function"]["arguments"] or "{}")
            result = client.call_tool(tool.name, arguments, timeout=60)
            # 20 KiB of text at most reaches the model; the middle of longer text is cut.
            messages.append(openai_tool_message(call["id"], result, max_text_bytes=20 * 1024))
    raise RuntimeError(f"no answer after {max_turns} turns")


def scripted_model(messages: list[Message], tools: list[dict[str, Any]]) -> Message:
    """A stand-in for a real model: asks for the time in Paris once, then answers."""
    if messages[-1]["role"] == "user":
        arguments = json.dumps({"timezone": "Europe/Paris"})
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_current_time", "arguments": arguments},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    time_now = json.loads(messages[-1]["content"])["datetime"]
    return {"role": "assistant", "content": f"In Paris it is {time_now}."}


if __name__ == "__main__":
    server = os.path.join(os.path.dirname(sys.executable), "mcp-server-time")
    with mcp_sync.connect([server if os.path.exists(server) else "mcp-server-time"]) as client:
        print(run_agent(client, "What time is it in Paris?", scripted_model))
