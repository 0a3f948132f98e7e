"""Which tools a model may see (MCP Apps' ``_meta.ui.visibility``), which half of a result it
is sent (SEP-2200), and output schemas, in every model-facing shape: llm.py's OpenAI and
Anthropic tool lists and results, and smolagents' and LlamaIndex's own agent loops with their
scripted models (test_smolagents_tools, test_llama_index_tools), against a real official-SDK
server (tests/servers/apps_server.py). LangChain's: test_langchain_features."""

from __future__ import annotations

import json

import pytest
from smolagents import ToolCallingAgent

import mcp_sync
from mcp_sync.integrations.llama_index import llama_index_tools
from mcp_sync.integrations.smolagents import smolagents_tools
from mcp_sync.llm import (
    anthropic_tool_result,
    anthropic_tools,
    llm_tool_names,
    model_tools,
    model_visible,
    openai_tool_message,
    openai_tools,
    to_llm_content,
)
from tests.helpers.integration_servers import APPS_SERVER
from tests.integrations.test_llama_index_tools import scripted_llm
from tests.integrations.test_smolagents_tools import ScriptedModel, calls

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecationWarning"),
]


@pytest.fixture(scope="module")
def apps():
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client:
        yield client


def names_of(items):
    return [item.get("name") or item["function"]["name"] for item in items]


def test_the_visibility_predicate(apps):
    by_name = {tool.name: tool for tool in apps.list_tools()}
    assert not model_visible(by_name["refresh_view"])  # ["app"]
    assert model_visible(by_name["quote"])  # ["model", "app"]
    assert model_visible(by_name["stock"])  # no _meta.ui
    hidden = by_name["quote"].model_copy(update={"meta": {"ui": {"visibility": []}}})
    assert not model_visible(hidden)
    malformed = by_name["quote"].model_copy(update={"meta": {"ui": {"visibility": {"app": 1}}}})
    assert not model_visible(malformed)  # fails closed
    unset = by_name["quote"].model_copy(update={"meta": {"ui": {"resourceUri": "ui://x"}}})
    assert model_visible(unset)  # the default, ["model", "app"]
    assert [t.name for t in model_tools(by_name.values())] == [
        n for n in by_name if n != "refresh_view"
    ]


def test_openai_tools_leave_app_only_tools_out(apps):
    tools = apps.list_tools()
    for style in ("chat", "responses"):
        assert "refresh_view" not in names_of(openai_tools(tools, style=style))
        assert "refresh_view" in names_of(openai_tools(tools, style=style, include_app_only=True))
    # the names still map back through the whole list
    by_llm_name = dict(zip(llm_tool_names(tools), tools, strict=True))
    assert all(by_llm_name[n].name == n for n in names_of(openai_tools(tools)))


def test_anthropic_tools_leave_app_only_tools_out(apps):
    tools = apps.list_tools()
    assert "refresh_view" not in names_of(anthropic_tools(tools))
    assert "quote" in names_of(anthropic_tools(tools))
    assert "refresh_view" in names_of(anthropic_tools(tools, include_app_only=True))


def test_llm_results_send_content_not_both_halves(apps):
    result = apps.call_tool("quote", {"symbol": "ACME"})
    assert to_llm_content(result) == [{"type": "text", "text": "ACME trades at 99.0"}]
    assert openai_tool_message("c", result)["content"] == "ACME trades at 99.0"
    structured_message = openai_tool_message("c", result, prefer="structured")["content"]
    assert json.loads(structured_message)["price"] == 99.0
    (anthropic_block,) = anthropic_tool_result("t", result)["content"]
    assert anthropic_block == {"type": "text", "text": "ACME trades at 99.0"}
    (structured,) = to_llm_content(result, prefer="structured")
    assert json.loads(structured["text"])["symbol"] == "ACME"
    with pytest.raises(ValueError, match="prefer"):
        to_llm_content(result, prefer="both")


def test_smolagents_agent_is_not_offered_app_only_tools(apps):
    model = ScriptedModel(calls(("final_answer", {"answer": "ok"})))
    agent = ToolCallingAgent(tools=smolagents_tools(apps), model=model, max_steps=2,
                             verbosity_level=0)  # fmt: skip
    assert agent.run("hi") == "ok"
    offered = [schema["function"]["name"] for schema in model.offered[0]]
    assert "refresh_view" not in offered and "quote" in offered
    assert "refresh_view" in [t.name for t in smolagents_tools(apps, include_app_only=True)]


def test_smolagents_output_type_and_schema_and_the_half_it_returns(apps):
    by_name = {t.name: t for t in smolagents_tools(apps)}
    stock = by_name["stock"]
    assert stock.output_type == "object"
    assert stock.output_schema["properties"]["history"]["type"] == "array"
    assert "-> dict" in stock.to_code_prompt()  # smolagents shows a CodeAgent the schema
    model = ScriptedModel(
        calls(("quote", {"symbol": "ACME"})), calls(("final_answer", {"answer": "ok"}))
    )
    tools = smolagents_tools(apps, names=["quote"], prefer="content")
    agent = ToolCallingAgent(tools=tools, model=model, max_steps=3, verbosity_level=0)
    agent.run("price?")
    observed = [
        step.observations for step in agent.memory.steps if getattr(step, "tool_calls", None)
    ]
    assert "ACME trades at 99.0" in observed[0] and "history" not in observed[0]
    assert by_name["quote"].forward(symbol="X")["price"] == 99.0  # default: the structured half


def test_llama_index_agent_is_not_offered_app_only_tools_and_gets_content(apps):
    tools = llama_index_tools(apps)
    llm, offered = scripted_llm([("quote", {"symbol": "ACME"})])
    response = llm.predict_and_call(tools, "price?")
    assert "refresh_view" not in [t["function"]["name"] for t in offered[0]]
    assert "refresh_view" in [
        t.metadata.name for t in llama_index_tools(apps, include_app_only=True)
    ]
    (quoted,) = response.sources
    assert quoted.content == "ACME trades at 99.0"
    assert len(quoted.raw_output.structured_content["history"]) == 100


def test_llama_index_metadata_carries_the_output_schema_and_meta(apps):
    by_name = {t.metadata.name: t for t in llama_index_tools(apps)}
    assert by_name["stock"].metadata.output_schema["title"] == "Stock"
    assert by_name["quote"].metadata.output_schema is None
    assert by_name["quote"].metadata.mcp_meta["team"] == "markets"
