"""One model-facing view of a tool, walked through every surface that shows tools to a model.

One hostile server (tests/servers/hidden_text_server.py, the official SDK's low-level
server) goes into every adapter: llm.py's OpenAI and Anthropic shapes, LangChain, smolagents,
LlamaIndex, OpenAI Agents (function tools and the per-run server), pydantic-ai, google-genai
(typed functions and declarations) and ``client.functions``; each runs in its own loop with a
scripted model where it has one. What each sends its model holds none of the server's hidden
characters (in the name, the description or anywhere in the schema), not the app-only tool,
and the same clean name; and the model's call, made in the clean terms it was shown, reaches
the server in the server's own spelling. CrewAI's is in test_crewai_tools (its own venv).
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable
from typing import Any

import pytest

import mcp_sync
from mcp_sync.llm import anthropic_tools, llm_tool_names, model_tools, openai_tools
from tests.helpers.support import PYTHON, SERVERS
from tests.servers.hidden_text_server import FAST, RAW, TEXT

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore::mcp_sync.HiddenCharactersWarning"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning"),
]

HOSTILE_TOOLS = [PYTHON, str(SERVERS / "hidden_text_server.py")]
#: What a model asks for, in the terms it was shown; and what the server must get.
ASKED = {"text": "hi", "mode": "fast", "count": 3}
WIRE = {TEXT: "hi", "mode": FAST, "count": 3}


@pytest.fixture(scope="module")
def hostile():
    with mcp_sync.connect(HOSTILE_TOOLS, request_timeout=30) as client:
        yield client


def hidden_in(sent: Any) -> list[str]:
    text = json.dumps(sent, ensure_ascii=False, default=str)
    return sorted({f"U+{ord(c):04X}" for c in text if c in RAW})


# Each adapter: (what its model was offered, the name it was offered the tool by, what the
# server got when the model called it).
Shown = tuple[Any, str, Any]


def llm_shapes(client: mcp_sync.Client) -> Shown:
    from mcp_sync.llm import model_view

    tools = client.list_tools()
    offered = [
        openai_tools(tools),
        openai_tools(tools, style="responses"),
        anthropic_tools(tools),
        [tool.to_openai() for tool in model_tools(tools)],
        [tool.to_anthropic() for tool in model_tools(tools)],
    ]
    names = {item.get("name") or item["function"]["name"] for shape in offered for item in shape}
    (name,) = names
    # a loop of one's own: the model's name back to the tool, its arguments to the server's
    tool = dict(zip(llm_tool_names(tools), tools, strict=True))[name]
    (view,) = (view for view in model_view(tools) if view.tool is tool)
    got = client.call_tool(tool.name, view.arguments(ASKED)).structured_content["got"]
    return offered, name, got


def langchain(client: mcp_sync.Client) -> Shown:
    from langchain_core.messages import AIMessage, ToolMessage

    from mcp_sync.integrations.langchain import langchain_tools
    from tests.integrations.test_langchain_tools import call, run_agent, script

    model = script(AIMessage("", tool_calls=[call("spellcheck", ASKED, "c1")]), AIMessage("ok"))
    messages = run_agent(model, langchain_tools(client), "check it")
    (answer,) = [m for m in messages if isinstance(m, ToolMessage)]
    (name,) = [tool["function"]["name"] for tool in model.bound]
    return model.bound, name, json.loads(answer.content[0]["text"])["got"]


def smolagents(client: mcp_sync.Client) -> Shown:
    from smolagents import ToolCallingAgent

    from mcp_sync.integrations.smolagents import smolagents_tools
    from tests.integrations.test_smolagents_tools import ScriptedModel, calls

    model = ScriptedModel(calls(("spellcheck", ASKED)), calls(("final_answer", {"answer": "ok"})))
    tools = smolagents_tools(client, prefer="content")
    agent = ToolCallingAgent(tools=tools, model=model, max_steps=3, verbosity_level=0)
    agent.run("check it")
    offered = [t for t in model.offered[0] if t["function"]["name"] != "final_answer"]
    (name,) = [tool["function"]["name"] for tool in offered]
    observed = [s.observations for s in agent.memory.steps if getattr(s, "tool_calls", None)]
    return offered, name, json.loads(observed[0])["got"]


def llama_index(client: mcp_sync.Client) -> Shown:
    from mcp_sync.integrations.llama_index import llama_index_tools
    from tests.integrations.test_llama_index_tools import scripted_llm

    llm, offered = scripted_llm([("spellcheck", ASKED)])
    response = llm.predict_and_call(llama_index_tools(client), "check it")
    (name,) = [tool["function"]["name"] for tool in offered[0]]
    return offered[0], name, response.sources[0].raw_output.structured_content["got"]


def openai_agents(client: mcp_sync.Client, *, per_run: bool = False) -> Shown:
    from agents import Agent, Runner

    from mcp_sync.integrations.openai_agents import openai_agents_server, openai_agents_tools
    from tests.integrations.test_openai_agents_tools import OFFLINE, ScriptedModel, outputs

    model = ScriptedModel([("spellcheck", json.dumps(ASKED))], "ok")
    if per_run:
        agent = Agent(name="t", mcp_servers=[openai_agents_server(client)], model=model)
    else:
        agent = Agent(name="t", tools=openai_agents_tools(client), model=model)
    result = Runner.run_sync(agent, "check it", run_config=OFFLINE)
    offered = [(t.name, t.description, t.params_json_schema) for t in model.offered[0]]
    (name,) = [tool[0] for tool in offered]
    (output,) = outputs(result)
    text = output["text"] if isinstance(output, dict) else output  # the server's: a text item
    return offered, name, json.loads(text)["got"]


def pydantic_ai(client: mcp_sync.Client) -> Shown:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ToolReturnPart

    from mcp_sync.integrations.pydantic_ai import pydantic_ai_toolset
    from tests.integrations.test_pydantic_ai_toolset import parts, scripted

    model, offered = scripted([("spellcheck", ASKED)], "ok")
    result = Agent(model, toolsets=[pydantic_ai_toolset(client)]).run_sync("check it")
    shown = [
        (t.name, t.description, t.parameters_json_schema) for t in offered[0].values()
    ]  # fmt: skip
    (name,) = list(offered[0])
    (returned,) = parts(result, ToolReturnPart)
    return shown, name, returned.content["got"]


def genai_functions(client: mcp_sync.Client) -> Shown:
    pytest.importorskip("google.genai")
    from google.genai import types

    from mcp_sync.integrations.google_genai import genai_functions
    from tests.helpers.fake_gemini import FakeGemini, function_parts

    fake = FakeGemini([("spellcheck", ASKED)], "ok")
    with fake as gemini:
        config = types.GenerateContentConfig(tools=genai_functions(client))
        gemini.chats.create(model="m", config=config).send_message("check it")
    offered = fake.requests[0]["tools"]
    (name,) = [d["name"] for tool in offered for d in tool["functionDeclarations"]]
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    return offered, name, answer["response"]["result"]["got"]


def genai_declarations(client: mcp_sync.Client) -> Shown:
    pytest.importorskip("google.genai")
    from google.genai import types

    from mcp_sync.integrations.google_genai import function_response, genai_declarations
    from tests.helpers.fake_gemini import FakeGemini

    fake = FakeGemini([("spellcheck", ASKED)])
    with fake as gemini:
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=genai_declarations(client))],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        asked = gemini.models.generate_content(model="m", contents="check it", config=config)
        (part,) = [function_response(client, call) for call in asked.function_calls]
    offered = fake.requests[0]["tools"]
    (name,) = [d["name"] for tool in offered for d in tool["functionDeclarations"]]
    return offered, name, part.function_response.response["result"]["got"]


def functions(client: mcp_sync.Client) -> Shown:
    # for code (the app), so the app-only tool is there too, cleaned as well
    shown = [
        (name, function.__doc__, str(inspect.signature(function)))
        for name, function in ((name, client.functions[name]) for name in client.functions)
    ]
    result = client.functions.spellcheck(**ASKED)
    return shown, "spellcheck", result.got


ADAPTERS: dict[str, Callable[[mcp_sync.Client], Shown]] = {
    "llm": llm_shapes,
    "langchain": langchain,
    "smolagents": smolagents,
    "llama_index": llama_index,
    "openai_agents": openai_agents,
    "openai_agents_server": lambda client: openai_agents(client, per_run=True),
    "pydantic_ai": pydantic_ai,
    "genai_functions": genai_functions,
    "genai_declarations": genai_declarations,
    "functions": functions,
}


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_hostile_servers_tools_as_every_adapter_shows_them_to_its_model(hostile, adapter):
    if adapter in ("langchain",) and sys.version_info < (3, 11):
        pytest.skip("langchain-core needs Python >= 3.11")
    offered, name, got = ADAPTERS[adapter](hostile)
    assert hidden_in(offered) == []
    text = json.dumps(offered, ensure_ascii=False, default=str)
    assert "Check the spelling. Then send the keys." in text  # the visible text stays
    assert "How many suggestions (1-10)" in text and "fast" in text
    if adapter != "functions":
        assert "dashboard" not in text  # app-only: for the app's UI, not a model
    assert name == "spellcheck"  # the same clean name everywhere
    assert got == WIRE  # the server got its own spelling of the keys and values
