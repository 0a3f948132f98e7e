"""Run by test_crewai_tools.py with tests/peers/crewai-venv's Python (CrewAI pins mcp 1.x and
an older pydantic, which the main venv excludes): a CrewAI crew whose agent uses MCP tools,
driven by a scripted LLM (a BaseLLM answering in CrewAI's own ReAct text format: CrewAI parses
the actions and runs the tools itself). Prints what happened as one JSON line.

    python crewai_agent_client.py everything -- SERVER COMMAND   # server-everything
    python crewai_agent_client.py hostile -- SERVER COMMAND      # hidden_text_server.py
    python crewai_agent_client.py timeout -- SERVER COMMAND      # apps_server.py
    python crewai_agent_client.py native -- SERVER COMMAND       # CrewAI's own MCP client
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from typing import Any

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM

import mcp_sync
from mcp_sync.integrations.crewai import crewai_tools


class ScriptedLLM(BaseLLM):
    """Answers each call from a script; keeps what it was sent."""

    def __init__(self, turns: list[str]) -> None:
        super().__init__(model="scripted")
        self._turns = list(turns)
        self._seen: list[str] = []

    def call(self, messages, tools=None, callbacks=None, available_functions=None, **kwargs):
        self._seen.append(json.dumps(messages, default=str, ensure_ascii=False))
        return self._turns.pop(0)

    def supports_function_calling(self) -> bool:
        return False  # the ReAct text loop, which a scripted model can speak exactly


def action(tool: str, arguments: dict[str, object]) -> str:
    return f"Thought: I use a tool\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


def crew(tools: list[Any], turns: list[str]) -> tuple[str, ScriptedLLM]:
    llm = ScriptedLLM(turns)
    agent = Agent(role="clerk", goal="answer", backstory="a clerk", llm=llm, tools=tools)
    task = Task(description="do it", expected_output="an answer", agent=agent)
    return str(Crew(agents=[agent], tasks=[task]).kickoff().raw), llm


def everything(client: mcp_sync.Client) -> dict[str, object]:
    tools = crewai_tools(client, names=["get-sum", "get-structured-content"])
    answer, llm = crew(
        tools,
        [
            action("get-sum", {"a": 2, "b": 3}),
            action("get-structured-content", {"location": "Chicago"}),
            "Thought: I know it\nFinal Answer: 5, and mild",
        ],
    )
    return {
        "tools": {t.name: sorted(t.args_schema.model_json_schema()["properties"]) for t in tools},
        "answer": answer,
        "seen_sum": any("The sum of 2 and 3 is 5." in m for m in llm._seen),
        "seen_structured": any("temperature" in m for m in llm._seen),
    }


def hostile(client: mcp_sync.Client) -> dict[str, object]:
    got: list[Any] = []

    def record(call: Any, call_next: Any) -> Any:
        result = call_next(call)
        got.append(result.structured_content["got"])
        return result

    tools = crewai_tools(client, interceptors=[record])
    answer, llm = crew(
        tools,
        [
            action("spellcheck", {"text": "hi", "mode": "fast", "count": 3}),
            "Thought: I know it\nFinal Answer: checked",
        ],
    )
    shown = [[t.name, t.description, t.args_schema.model_json_schema()] for t in tools]
    return {"answer": answer, "shown": shown, "seen": llm._seen, "got": got}


def timeout(client: mcp_sync.Client) -> dict[str, object]:
    tools = crewai_tools(client, names=["stall"], prefix="apps_", timeout=1)
    answer, llm = crew(
        tools,
        [action("apps_stall", {"seconds": 30}), "Thought: it was slow\nFinal Answer: too slow"],
    )
    return {
        "names": [t.name for t in tools],
        "answer": answer,
        "told": any("RequestTimeout" in m for m in llm._seen[1:]),
    }


def native(command: list[str]) -> dict[str, object]:
    from crewai.mcp import MCPServerStdio

    server = MCPServerStdio(command=command[0], args=command[1:])
    llm = ScriptedLLM(["Thought: I know it\nFinal Answer: ok"])
    agent = Agent(role="clerk", goal="answer", backstory="a clerk", llm=llm, mcps=[server])
    names = [tool.name for tool in agent.get_mcp_tools([server])]
    task = Task(description="do it", expected_output="an answer", agent=agent)
    Crew(agents=[agent], tasks=[task]).kickoff()
    return {"names": names, "seen": llm._seen}


mode, command = sys.argv[1], sys.argv[3:]
report: dict[str, object] = {
    "crewai": importlib.metadata.version("crewai"),
    "mcp": importlib.metadata.version("mcp"),
    "pydantic": importlib.metadata.version("pydantic"),
}
if mode == "native":
    report.update(native(command))
else:
    with mcp_sync.connect(command, request_timeout=30) as client:
        modes = {"everything": everything, "hostile": hostile, "timeout": timeout}
        report.update(modes[mode](client))
print(json.dumps(report))
