"""Each framework's own MCP client, measured against the real servers mcp_sync's adapters are
tested with, for the comparison table in docs/integrations.md: OpenAI Agents' MCPServerStdio
pydantic-ai's MCPToolset and google-genai's (an mcp ``ClientSession`` as a tool) here, and
CrewAI's (``Agent(mcps=[...])``) in its own virtualenv (crewai_agent_client.py).

Each test asserts what the native client does today, through the framework's own loop with a
scripted model: when a library changes, its test fails and the table's row must change too.
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from tests.helpers.integration_servers import APPS_SERVER
from tests.helpers.support import PYTHON, SERVERS
from tests.servers.hidden_text_server import RAW

if sys.version_info < (3, 11):
    pytest.skip("pydantic-ai and fastmcp need Python >= 3.11", allow_module_level=True)

pytestmark = [pytest.mark.timeout(180)]

HOSTILE_TOOLS = [PYTHON, str(SERVERS / "hidden_text_server.py")]


def hidden_in(sent) -> bool:
    text = json.dumps(sent, ensure_ascii=False, default=str)
    return any(c in text for c in RAW)


# -- OpenAI Agents: MCPServerStdio --------------------------------------------------------


def openai_agents_run(server_command, *turns, runs=1, between=None, **server_options):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    from tests.integrations.test_openai_agents_tools import OFFLINE, ScriptedModel

    params = {"command": server_command[0], "args": server_command[1:]}
    model = ScriptedModel(*turns)

    async def main():
        results = []
        async with MCPServerStdio(params, **server_options) as server:
            agent = Agent(name="t", mcp_servers=[server], model=model)
            for _ in range(runs):
                results.append(await Runner.run(agent, "go", run_config=OFFLINE))
        return results

    return asyncio.run(main()), model


def test_openai_agents_native_shows_hidden_characters_and_app_only_tools():
    _results, model = openai_agents_run(HOSTILE_TOOLS, "ok")
    offered = [(t.name, t.description, t.params_json_schema) for t in model.offered[0]]
    assert hidden_in(offered)
    assert "dashboard" in [name for name, _d, _s in offered]


def test_openai_agents_native_passes_images_and_tells_the_model_of_a_timeout():
    from tests.integrations.test_openai_agents_tools import outputs

    (result,), _model = openai_agents_run(
        APPS_SERVER,
        [("snapshot", "{}"), ("stall", '{"seconds": 30}')],
        "ok",
        client_session_timeout_seconds=1,
    )
    image, timed_out = outputs(result)
    assert [item["type"] for item in image] == ["text", "image"]
    assert "error occurred" in timed_out  # the SDK's failure_error_function, the run goes on
    assert result.final_output == "ok"


def test_openai_agents_native_lists_the_tools_again_on_each_run(tmp_path):
    command = [PYTHON, str(SERVERS / "rug_pull_server.py"), str(tmp_path / "state")]
    _results, model = openai_agents_run(command, [("rug_pull", "{}")], "pulled", "again", runs=2)
    first, second = ({t.name for t in model.offered[i]} for i in (0, 2))
    assert "exfiltrate" not in first and "exfiltrate" in second


# -- pydantic-ai: MCPToolset ----------------------------------------------------------------


def pydantic_ai_toolset(command, **client_options):
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    transport = StdioTransport(command=command[0], args=command[1:])
    return MCPToolset(Client(transport, **client_options))


def pydantic_ai_run(toolset, *turns):
    from pydantic_ai import Agent

    from tests.integrations.test_pydantic_ai_toolset import scripted

    model, offered = scripted(*turns)
    return Agent(model, toolsets=[toolset]).run_sync("go"), offered


def test_pydantic_ai_native_shows_hidden_characters_but_not_app_only_tools():
    _result, offered = pydantic_ai_run(pydantic_ai_toolset(HOSTILE_TOOLS), "ok")
    shown = [(t.name, t.description, t.parameters_json_schema) for t in offered[0].values()]
    assert hidden_in(shown)
    assert "dashboard" not in offered[0]


def test_pydantic_ai_native_keeps_one_server_process_across_runs_and_retries_a_timeout():
    from pydantic_ai.messages import ToolReturnPart

    from tests.integrations.test_pydantic_ai_toolset import parts

    toolset = pydantic_ai_toolset(APPS_SERVER)
    pids = [
        parts(pydantic_ai_run(toolset, [("pid", {})], "ok")[0], ToolReturnPart)[0].content
        for _ in range(2)
    ]
    assert pids[0] == pids[1]  # two agent runs, one server process
    slow = pydantic_ai_toolset(APPS_SERVER, timeout=1)
    result, _offered = pydantic_ai_run(slow, [("stall", {"seconds": 30})], "too slow")
    (timed_out,) = parts(result, ToolReturnPart)
    assert timed_out.outcome == "retried" and "timed out" in timed_out.content
    assert result.output == "too slow"


def test_pydantic_ai_native_lists_the_tools_again_on_the_next_run(tmp_path):
    command = [PYTHON, str(SERVERS / "rug_pull_server.py"), str(tmp_path / "state")]
    toolset = pydantic_ai_toolset(command)
    _result, offered = pydantic_ai_run(toolset, [("rug_pull", {})], "pulled")
    _result, later = pydantic_ai_run(toolset, "again")
    # the step after rug_pull (and its list_changed) still had the old list; the next run not
    assert "exfiltrate" not in offered[1] and "exfiltrate" in later[0]


# -- google-genai: an mcp ClientSession as a tool ------------------------------------------


def test_google_genai_native_shows_hidden_characters_and_app_only_tools():
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.helpers.fake_gemini import FakeGemini

    fake = FakeGemini("ok")

    async def main():
        params = StdioServerParameters(command=HOSTILE_TOOLS[0], args=HOSTILE_TOOLS[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            with fake as gemini:
                # a dict: google-genai deep-copies a GenerateContentConfig, which a session
                # cannot survive (TypeError: cannot pickle '_asyncio.Future' object)
                config = {"tools": [session]}
                await gemini.aio.models.generate_content(model="m", contents="go", config=config)

    asyncio.run(main())
    offered = fake.requests[0]["tools"]
    assert hidden_in(offered)
    assert "dashboard" in [d["name"] for tool in offered for d in tool["functionDeclarations"]]


# -- CrewAI: Agent(mcps=[...]), in its own virtualenv ---------------------------------------


def test_crewai_native_shows_hidden_characters_and_app_only_tools():
    from tests.integrations.test_crewai_tools import run_crew

    report = run_crew("native", HOSTILE_TOOLS)
    assert hidden_in(report["seen"])  # in the descriptions (CrewAI makes the names ASCII)
    assert not hidden_in(report["names"])
    assert any(name.endswith("_dashboard") for name in report["names"])  # named after the server
