"""MCP tools in LangGraph's own loop (create_react_agent, ToolNode) with a scripted chat model,
against a real official-SDK server (tests/servers/apps_server.py, sdk_server.py): a tool that
times out is an error the model answers, and an interceptor can return a LangGraph Command."""

from __future__ import annotations

import sys
import time

import pytest

from tests.helpers.integration_servers import APPS_SERVER, SDK_SERVER

if sys.version_info < (3, 11):
    pytest.skip("langgraph needs Python >= 3.11", allow_module_level=True)

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # create_react_agent's move
]

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, create_react_agent  # noqa: E402
from langgraph.types import Command  # noqa: E402

import mcp_sync  # noqa: E402
from mcp_sync.errors import RequestTimeout  # noqa: E402
from mcp_sync.integrations.langchain import langchain_tools  # noqa: E402
from tests.integrations.test_langchain_tools import call, script  # noqa: E402


def test_a_react_agent_keeps_running_when_a_tool_times_out():
    with mcp_sync.connect(APPS_SERVER, request_timeout=30) as client:
        model = script(
            AIMessage("", tool_calls=[call("stall", {"seconds": 30}, "s")]),
            AIMessage("the quote service is slow; try again later"),
        )
        agent = create_react_agent(model, langchain_tools(client, timeout=1.0))
        started = time.monotonic()
        state = agent.invoke({"messages": [HumanMessage("stall")]})
        elapsed = time.monotonic() - started
        raising = create_react_agent(
            script(AIMessage("", tool_calls=[call("stall", {"seconds": 30}, "s")])),
            langchain_tools(client, names=["stall"], timeout=1.0, on_error="raise"),
        )
        with pytest.raises(RequestTimeout):
            raising.invoke({"messages": [HumanMessage("stall")]})
    (failed,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert failed.status == "error" and "RequestTimeout" in failed.content
    assert state["messages"][-1].content == "the quote service is slow; try again later"
    assert elapsed < 10


class Totals(MessagesState):
    total: int


def test_an_interceptor_returns_a_command_that_updates_the_graph_state():
    def into_state(request, call_next):
        result = call_next(request)
        value = result.structured_content["result"]
        message = ToolMessage(str(value), tool_call_id=request.tool_call_id)
        return Command(update={"total": value, "messages": [message]})

    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client:
        tools = langchain_tools(client, names=["add"], interceptors=[into_state])
        model = script(AIMessage("", tool_calls=[call("add", {"a": 2, "b": 5}, "a1")]))

        def ask(state):
            return {"messages": [model.invoke(state["messages"])]}

        graph = StateGraph(Totals)
        graph.add_node("model", ask)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "model")
        graph.add_edge("model", "tools")
        graph.add_edge("tools", END)
        state = graph.compile().invoke({"messages": [HumanMessage("2 + 5")], "total": 0})
    assert state["total"] == 7
    assert state["messages"][-1].content == "7"
