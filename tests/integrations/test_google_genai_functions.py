"""MCP tools for google-genai: its own automatic function calling runs the typed callables
(genai_functions) against real servers (server-everything, the official SDK's server).

The model is a scripted stand-in for the Gemini API on 127.0.0.1 (the client's
http_options base_url points there): google-genai itself sends each request over HTTP,
parses the function calls, calls the Python functions and sends their answers back, so the
whole loop is the library's own; only the model's replies are scripted (nothing else can
play the Gemini API without a network)."""

from __future__ import annotations

import sys

import pytest

if sys.version_info < (3, 11):
    pytest.skip("google-genai needs Python >= 3.11", allow_module_level=True)

from google.genai import types

import mcp_sync
from mcp_sync.errors import UnknownName
from mcp_sync.integrations.google_genai import (
    function_response,
    genai_declarations,
    genai_functions,
)
from tests.helpers.fake_gemini import FakeGemini, function_parts
from tests.helpers.integration_servers import APPS_SERVER, SDK_SERVER

pytestmark = pytest.mark.timeout(60)


def test_automatic_function_calling_runs_the_typed_functions(everything_cmd):
    fake = FakeGemini(
        [("get_sum", {"a": 2, "b": 3}), ("get_structured_content", {"location": "Chicago"})],
        "5, and mild",
    )
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client, fake as genai_client:
        functions = genai_functions(client, names=["get-sum", "get_structured_content"])
        chat = genai_client.chats.create(
            model="gemini-test", config=types.GenerateContentConfig(tools=functions)
        )
        response = chat.send_message("add 2 and 3, then the weather")
        listed = {t.name: t for t in client.list_tools()}
    assert response.text == "5, and mild"
    # declared from the callables' signatures: the tool's parameters, typed, no timeout/signal
    (declared,) = fake.requests[0]["tools"]
    by_name = {d["name"]: d for d in declared["functionDeclarations"]}
    assert set(by_name) == {"get_sum", "get_structured_content"}
    params = by_name["get_sum"]["parameters_json_schema"]
    # each parameter's description reaches the model, beside its type
    assert params["properties"] == {
        "a": {"type": "number", "description": "First number"},
        "b": {"type": "number", "description": "Second number"},
    }
    assert params["required"] == ["a", "b"]
    city = by_name["get_structured_content"]["parameters_json_schema"]["properties"]["location"]
    # google-genai cannot check a value against a Literal: the parameter is a plain string,
    # and the enum's choices go beside it
    assert city == {
        "type": "string",
        "enum": ["New York", "Chicago", "Los Angeles"],
        "description": "Choose city",
    }
    # the model reads the tool's description, not the Python docstring's timeout/signal
    assert by_name["get_sum"]["description"] == listed["get-sum"].description
    # google-genai called them and sent the answers back
    answers = {
        r["name"]: r["response"] for r in function_parts(fake.requests[1], "functionResponse")
    }
    assert answers["get_sum"] == {"result": "The sum of 2 and 3 is 5."}
    assert set(answers["get_structured_content"]["result"]) == {
        "temperature",
        "conditions",
        "humidity",
    }


def test_an_error_result_reaches_the_model_as_an_error():
    fake = FakeGemini([("fail", {})], "it failed")
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client, fake as genai_client:
        config = types.GenerateContentConfig(tools=genai_functions(client, names=["fail"]))
        response = genai_client.chats.create(model="gemini-test", config=config).send_message("try")
        with pytest.raises(UnknownName, match="nope"):
            genai_functions(client, names=["nope"])
    assert response.text == "it failed"
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    assert "Error executing tool fail" in answer["response"]["error"]


def test_declarations_and_a_loop_of_ones_own():
    fake = FakeGemini([("add", {"a": 1, "b": 2})], "three")
    with mcp_sync.connect(SDK_SERVER, request_timeout=20) as client, fake as genai_client:
        declarations = genai_declarations(client, names=["add", "weather"])
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=declarations)],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        contents = [types.Content(role="user", parts=[types.Part(text="1 + 2")])]
        first = genai_client.models.generate_content(model="m", contents=contents, config=config)
        contents.append(first.candidates[0].content)
        contents.append(
            types.Content(
                role="user", parts=[function_response(client, c) for c in first.function_calls]
            )
        )
        second = genai_client.models.generate_content(model="m", contents=contents, config=config)
        schema = {t.name: t.input_schema for t in client.list_tools()}["add"]
    assert second.text == "three"
    sent = fake.requests[0]["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in sent] == ["add", "weather"]
    assert sent[0]["parameters_json_schema"]["properties"] == schema["properties"]
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    assert answer == {"name": "add", "response": {"result": {"result": 3}}}


def declared(request):
    return {d["name"]: d for tool in request["tools"] for d in tool["functionDeclarations"]}


def test_functions_show_the_model_each_parameters_description_bounds_and_choices():
    fake = FakeGemini([("pick", {"count": 3, "kind": "blue"})], "three blue")
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client, fake as genai_client:
        config = types.GenerateContentConfig(tools=genai_functions(client))
        genai_client.chats.create(model="m", config=config).send_message("pick three blue")
    offered = declared(fake.requests[0])
    assert "refresh_view" not in offered  # app-only: for the app's UI, not a model
    properties = offered["pick"]["parameters_json_schema"]["properties"]
    assert properties["count"] == {
        "type": "integer",
        "description": "How many (1-10)",
        "minimum": 1,
        "maximum": 10,
    }
    assert properties["kind"]["enum"] == ["red", "blue"]
    assert properties["kind"]["description"] == "Which colour"
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    assert answer["response"] == {"result": {"result": "picked 3 blue"}}


def test_an_image_a_function_cannot_carry_is_marked_not_dropped():
    fake = FakeGemini([("snapshot", {})], "a dot")
    with mcp_sync.connect(APPS_SERVER, request_timeout=20) as client, fake as genai_client:
        config = types.GenerateContentConfig(tools=genai_functions(client, names=["snapshot"]))
        genai_client.chats.create(model="m", config=config).send_message("look")
        call = types.FunctionCall(name="snapshot", args={})
        part = function_response(client, call)
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    marked = "a dot\n[image: image/png, 70 bytes]"
    assert answer["response"] == {"result": marked}
    assert part.function_response.response == {"result": marked}  # as function_response says


def test_a_timeout_is_told_to_the_model_and_the_options_of_every_adapter():
    calls = []

    def count_calls(call, call_next):
        calls.append(call.name)
        return call_next(call)

    fake = FakeGemini([("apps_stall", {"seconds": 30})], "it took too long")
    with mcp_sync.connect(APPS_SERVER, request_timeout=30) as client, fake as genai_client:
        functions = genai_functions(
            client, names=["stall"], prefix="apps_", timeout=1, interceptors=[count_calls]
        )
        config = types.GenerateContentConfig(tools=functions)
        reply = genai_client.chats.create(model="m", config=config).send_message("wait")
        call = types.FunctionCall(name="apps_stall", args={"seconds": 30})
        options = dict(prefix="apps_", timeout=1, interceptors=[count_calls])
        part = function_response(client, call, **options)
        with pytest.raises(mcp_sync.RequestTimeout):
            function_response(client, call, **options, on_error="raise")
        unknown = function_response(client, types.FunctionCall(name="refresh_view", args={}))
    assert reply.text == "it took too long"
    (answer,) = function_parts(fake.requests[1], "functionResponse")
    assert "RequestTimeout" in answer["response"]["error"]
    assert "RequestTimeout" in part.function_response.response["error"]
    assert calls == ["stall", "stall", "stall"]
    # a name the model was not offered (here an app-only tool) is not called
    assert unknown.function_response.response == {"error": "there is no tool named 'refresh_view'"}


def test_declarations_leave_out_the_schema_keyword_google_genai_refuses(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        listed = {t.name: t for t in client.list_tools()}
        (declaration,) = genai_declarations(client, names=["get-sum"], prefix="everything_")
    assert "$schema" in listed["get-sum"].input_schema  # the server sends it
    assert "$schema" not in declaration.parameters_json_schema
    assert declaration.name == "everything_get-sum"
