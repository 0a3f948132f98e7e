"""Run by test_crewai_tools.py with tests/peers/crewai-venv's Python (CrewAI pins mcp 1.x and
an older pydantic, which the main venv excludes): a CrewAI crew whose agent uses MCP tools
from server-everything (argv[1:]), driven by a scripted LLM (a BaseLLM answering in CrewAI's
own ReAct text format: CrewAI parses the actions and runs the tools itself). Prints what
happened as one JSON line."""

from __future__ import annotations

import importlib.metadata
import json
import sys

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
        self._seen.append(json.dumps(messages, default=str))
        return self._turns.pop(0)

    def supports_function_calling(self) -> bool:
        return False  # the ReAct text loop, which a scripted model can speak exactly


def action(tool: str, arguments: dict[str, object]) -> str:
    return f"Thought: I use a tool\nAction: {tool}\nAction Input: {json.dumps(arguments)}"


report: dict[str, object] = {
    "crewai": importlib.metadata.version("crewai"),
    "mcp": importlib.metadata.version("mcp"),
    "pydantic": importlib.metadata.version("pydantic"),
}
with mcp_sync.connect(sys.argv[1:], request_timeout=30) as client:
    tools = crewai_tools(client, names=["get-sum", "get-structured-content"])
    report["tools"] = {
        t.name: sorted(t.args_schema.model_json_schema()["properties"]) for t in tools
    }
    llm = ScriptedLLM(
        [
            action("get-sum", {"a": 2, "b": 3}),
            action("get-structured-content", {"location": "Chicago"}),
            "Thought: I know it\nFinal Answer: 5, and mild",
        ]
    )
    agent = Agent(role="clerk", goal="add", backstory="a clerk", llm=llm, tools=tools)
    task = Task(description="add 2 and 3", expected_output="a sum", agent=agent)
    result = Crew(agents=[agent], tasks=[task]).kickoff()
    report["answer"] = str(result.raw)
    report["seen_sum"] = any("The sum of 2 and 3 is 5." in m for m in llm._seen)
    report["seen_structured"] = any("temperature" in m for m in llm._seen)
print(json.dumps(report))
