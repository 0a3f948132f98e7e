"""The protocol types: wire round trips, leniency, constructed models and helpers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mcp_sync.protocol import types as t

# -- round trips ------------------------------------------------------------------------------


def test_unknown_fields_are_kept_under_their_wire_keys() -> None:
    wire = {
        "content": [{"type": "text", "text": "hi", "x-extra": {"a": [1, None]}}],
        "isError": False,
        "someFutureField": {"nested": True},
        "snake_case_thing": 1,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }
    result = t.CallToolResult.from_wire(wire)
    assert result.model_extra == {"someFutureField": {"nested": True}, "snake_case_thing": 1}
    assert result.to_wire() == wire


def test_explicit_nulls_are_written_back() -> None:
    wire = {"tools": [], "nextCursor": None, "ttlMs": None}
    result = t.ListToolsResult.from_wire(wire)
    assert result.next_cursor is None
    assert result.to_wire() == wire
    assert "nextCursor" in result.to_wire()


def test_numbers_keep_their_json_type() -> None:
    wire = {"progressToken": 7, "progress": 50, "total": 100.5}
    params = t.ProgressNotificationParams.from_wire(wire)
    assert json.dumps(params.to_wire()) == json.dumps(wire)
    assert isinstance(params.progress, int)
    assert isinstance(params.total, float)


def test_nested_unknown_fields_round_trip_everywhere() -> None:
    wire = {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "tools": {"listChanged": True, "futureFlag": 1},
            "resources": {"subscribe": True},
            "logging": {},
            "newCapability": {"x": 1},
        },
        "serverInfo": {"name": "srv", "version": "1.0", "websiteUrl": "https://x", "z": 2},
        "instructions": "be nice",
    }
    result = t.InitializeResult.from_wire(wire)
    assert result.to_wire() == wire
    assert result.server_info.website_url == "https://x"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(
    extra=st.dictionaries(st.text(min_size=1, max_size=6).map(lambda s: "x" + s), JSON, max_size=3),
    text=st.text(),
    unknown_type=st.text(min_size=1, max_size=8).filter(
        lambda s: s not in {"text", "image", "audio", "resource_link", "resource"}
    ),
)
def test_any_extra_fields_round_trip(extra: dict[str, Any], text: str, unknown_type: str) -> None:
    wire = {
        "content": [
            {"type": "text", "text": text, **extra},
            {"type": unknown_type, **extra},
        ],
        **extra,
    }
    result = t.CallToolResult.from_wire(wire)
    assert isinstance(result.content[1], t.UnknownContent)
    assert result.to_wire() == wire


# -- constructed models -------------------------------------------------------------------------


def test_constructed_content_sends_its_type_and_nothing_unset() -> None:
    assert t.TextContent(text="hi").to_wire() == {"type": "text", "text": "hi"}
    assert t.ImageContent(data="AA==", mime_type="image/png").to_wire() == {
        "type": "image",
        "data": "AA==",
        "mimeType": "image/png",
    }
    link = t.ResourceLink(uri="file:///a", name="a")
    assert link.to_wire() == {"type": "resource_link", "uri": "file:///a", "name": "a"}
    embedded = t.EmbeddedResource(resource=t.TextResourceContents(uri="u", text="x"))
    assert embedded.to_wire() == {"type": "resource", "resource": {"uri": "u", "text": "x"}}
    use = t.ToolUseContent(id="1", name="f", input={"a": 1})
    assert use.to_wire() == {"type": "tool_use", "id": "1", "name": "f", "input": {"a": 1}}
    res = t.ToolResultContent(tool_use_id="1")
    assert res.to_wire() == {"type": "tool_result", "toolUseId": "1", "content": []}


def test_constructed_meta_uses_the_wire_key() -> None:
    content = t.TextContent(text="x", meta={"k": 1})
    assert content.to_wire() == {"type": "text", "text": "x", "_meta": {"k": 1}}
    assert t.TextContent.from_wire(content.to_wire()).meta == {"k": 1}


def test_constructed_results_send_required_defaults() -> None:
    assert t.CallToolResult().to_wire() == {"content": []}
    assert t.ListToolsResult().to_wire() == {"tools": []}
    assert t.Tool(name="x").to_wire() == {"name": "x", "inputSchema": {"type": "object"}}
    assert t.InputRequiredResult(request_state="s").to_wire() == {
        "resultType": "input_required",
        "requestState": "s",
    }
    assert t.CreateMessageResult(content=t.TextContent(text="a"), model="m").to_wire() == {
        "role": "assistant",
        "content": {"type": "text", "text": "a"},
        "model": "m",
    }


def test_defaults_that_must_be_sent_are_sent_at_any_depth() -> None:
    # read from the wire without them, then written: lists of models inside models
    result = t.GetPromptResult.from_wire({"messages": [{"role": "user", "content": {"type": "x"}}]})
    result.messages.append(t.PromptMessage(role="user", content=t.TextContent(text="hi")))
    assert result.to_wire()["messages"][1] == {
        "role": "user",
        "content": {"type": "text", "text": "hi"},
    }
    assert t.CallToolResult.from_wire({}).to_wire() == {"content": []}


def test_assignment_after_construction_is_sent() -> None:
    tool = t.Tool(name="x")
    tool.title = "X"
    assert tool.to_wire()["title"] == "X"


def test_constructed_capabilities() -> None:
    caps = t.ClientCapabilities(
        roots=t.RootsCapability(list_changed=True),
        sampling=t.SamplingCapability(),
        elicitation=t.ElicitationCapability(form={}, url={}),
    )
    assert caps.to_wire() == {
        "roots": {"listChanged": True},
        "sampling": {},
        "elicitation": {"form": {}, "url": {}},
    }


def test_root_accepts_positional_arguments() -> None:
    assert t.Root("file:///p", "project").to_wire() == {"uri": "file:///p", "name": "project"}
    assert t.Root("file:///p").to_wire() == {"uri": "file:///p"}
    assert t.Root(uri="file:///q", name="q").name == "q"
    with pytest.raises(ValidationError):
        t.Root()


# -- leniency -------------------------------------------------------------------------------


def test_missing_content_is_an_empty_list() -> None:
    result = t.CallToolResult.from_wire({"structuredContent": {"a": 1}})
    assert result.content == []
    assert result.structured_content == {"a": 1}
    assert result.is_error is False
    assert result.is_complete


def test_unknown_content_type_is_kept_whole() -> None:
    block = {"type": "video", "url": "https://v", "_meta": {"m": 1}, "annotations": {"x": 1}}
    parsed = t.parse_content(block)
    assert isinstance(parsed, t.UnknownContent)
    assert parsed.type == "video"
    assert parsed.to_wire() == block
    result = t.CallToolResult.from_wire({"content": [block, {"type": "text", "text": "a"}]})
    assert isinstance(result.content[0], t.UnknownContent)
    assert result.text == "a"


def test_sampling_content_outside_tool_results_is_unknown() -> None:
    block = {"type": "tool_use", "id": "1", "name": "f", "input": {}}
    assert isinstance(t.parse_content(block), t.UnknownContent)
    assert isinstance(t.parse_sampling_content(block), t.ToolUseContent)


@pytest.mark.parametrize(
    "wire",
    [
        {"content": "not a list"},
        {"content": [{"text": "no type"}]},
        {"content": ["just a string"]},
        {"content": [{"type": "text"}]},  # known type, missing required field
        {"content": [{"type": "image", "data": "AA=="}]},
        {"content": [], "isError": "maybe"},
    ],
)
def test_wrong_shapes_raise_validation_error(wire: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        t.CallToolResult.from_wire(wire)


def test_resource_contents_are_told_apart_by_text_or_blob() -> None:
    result = t.ReadResourceResult.from_wire(
        {"contents": [{"uri": "a", "text": ""}, {"uri": "b", "blob": "AA==", "mimeType": "x"}]}
    )
    assert isinstance(result.contents[0], t.TextResourceContents)
    assert isinstance(result.contents[1], t.BlobResourceContents)
    with pytest.raises(ValidationError):
        t.ReadResourceResult.from_wire({"contents": [{"uri": "c"}]})


def test_lenient_annotations_and_icons() -> None:
    tool = t.Tool.from_wire(
        {
            "name": "x",
            "inputSchema": {"type": "object"},
            "icons": [{"src": "https://i", "theme": "sepia"}],
        }
    )
    assert tool.icons is not None and tool.icons[0].theme == "sepia"
    text = t.TextContent.from_wire(
        {"type": "text", "text": "a", "annotations": {"audience": ["x"]}}
    )
    assert text.annotations is not None and text.annotations.audience == ["x"]


def test_tool_without_input_schema_gets_the_empty_object_schema() -> None:
    tool = t.Tool.from_wire({"name": "legacy"})
    assert tool.input_schema == {"type": "object"}


# -- accessors ------------------------------------------------------------------------------


def test_call_tool_result_text_joins_text_blocks() -> None:
    result = t.CallToolResult.from_wire(
        {
            "content": [
                {"type": "text", "text": "one"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
                {"type": "text", "text": "two"},
            ]
        }
    )
    assert result.text == "one\ntwo"
    assert t.CallToolResult().text == ""


def test_call_tool_result_to_llm_content_delegates() -> None:
    result = t.CallToolResult(content=[t.TextContent(text="hello")])
    assert result.to_llm_content() == [{"type": "text", "text": "hello"}]
    assert result.to_llm_content(max_text_bytes=2)[0]["text"].startswith("h")


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ({"name": "n", "title": "T", "annotations": {"title": "A"}}, "T"),
        ({"name": "n", "annotations": {"title": "A"}}, "A"),
        ({"name": "n", "title": "", "annotations": {}}, "n"),
        ({"name": "n"}, "n"),
    ],
)
def test_tool_display_name(wire: dict[str, Any], expected: str) -> None:
    assert t.Tool.from_wire(wire).display_name == expected


def test_server_capabilities_accessors() -> None:
    caps = t.ServerCapabilities.from_wire(
        {
            "tools": {"listChanged": True},
            "resources": {"subscribe": True},
            "prompts": {},
            "logging": {},
            "completions": {},
            "tasks": {"list": {}, "requests": {"tools": {"call": {}}}},
            "experimental": {"x": {}},
        }
    )
    assert caps.tools is not None and caps.tools.list_changed is True
    assert caps.resources is not None and caps.resources.subscribe is True
    assert caps.resources.list_changed is None
    assert caps.prompts is not None and not caps.prompts.list_changed
    # Present-but-empty capabilities are truthy, absent ones None.
    assert caps.logging and caps.completions
    assert caps.tasks is not None and caps.tasks.requests == {"tools": {"call": {}}}
    assert caps.experimental == {"x": {}}
    empty = t.ServerCapabilities.from_wire({})
    assert empty.tools is None and empty.logging is None and empty.to_wire() == {}


def test_result_type() -> None:
    assert t.Result.from_wire({}).is_complete
    assert t.Result.from_wire({"resultType": "complete"}).is_complete
    assert not t.Result.from_wire({"resultType": "input_required"}).is_complete
    assert not t.InputRequiredResult().is_complete


def test_list_results_carry_cursor_and_cache_fields() -> None:
    result = t.ListPromptsResult.from_wire(
        {"prompts": [{"name": "p"}], "nextCursor": "", "ttlMs": 5, "cacheScope": "private"}
    )
    assert result.next_cursor == ""
    assert result.ttl_ms == 5 and result.cache_scope == "private"
    assert result.prompts[0].name == "p"


# -- elicitation ------------------------------------------------------------------------------


def test_elicit_params_without_mode_are_form_and_round_trip() -> None:
    wire = {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}
    params = t.parse_elicit_params(wire)
    assert isinstance(params, t.ElicitRequestFormParams)
    assert params.mode == "form"
    assert params.to_wire() == wire


def test_elicit_url_params() -> None:
    wire = {"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e1"}
    params = t.parse_elicit_params(wire)
    assert isinstance(params, t.ElicitRequestURLParams)
    assert params.elicitation_id == "e1"
    assert params.to_wire() == wire
    built = t.ElicitRequestURLParams(message="m", url="https://x")
    assert built.to_wire() == {"mode": "url", "message": "m", "url": "https://x"}


@pytest.mark.parametrize("bad", [{"mode": "telepathy", "message": "m"}, ["x"], None])
def test_elicit_params_with_unknown_mode_raise(bad: Any) -> None:
    with pytest.raises(ValueError):
        t.parse_elicit_params(bad)


def test_elicit_result() -> None:
    result = t.ElicitResult(action="accept", content={"name": "me"})
    assert result.to_wire() == {"action": "accept", "content": {"name": "me"}}
    assert t.ElicitResult(action="decline").to_wire() == {"action": "decline"}
    with pytest.raises(ValidationError):
        t.ElicitResult.from_wire({"action": "maybe"})


def test_parse_primitive_schema_rejects_unknown_types() -> None:
    with pytest.raises(ValueError):
        t.parse_primitive_schema({"type": "object"})
    legacy = t.parse_primitive_schema({"type": "string", "enum": ["a"], "enumNames": ["A"]})
    assert isinstance(legacy, t.LegacyTitledEnumSchema)


# -- sampling --------------------------------------------------------------------------------


def test_sampling_message_single_block_and_list() -> None:
    single = t.SamplingMessage.from_wire({"role": "user", "content": {"type": "text", "text": "q"}})
    assert isinstance(single.content, t.TextContent)
    assert [type(b) for b in single.blocks] == [t.TextContent]
    many = t.SamplingMessage.from_wire(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "toolUseId": "1", "content": [], "isError": True},
                {"type": "hologram"},
            ],
        }
    )
    assert isinstance(many.content, list)
    assert isinstance(many.blocks[0], t.ToolResultContent) and many.blocks[0].is_error
    assert isinstance(many.blocks[1], t.UnknownContent)


def test_create_message_params_with_tools() -> None:
    params = t.CreateMessageRequestParams.from_wire(
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
            "maxTokens": 10,
            "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"},
            "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.5},
        }
    )
    assert params.max_tokens == 10
    assert params.tools is not None and params.tools[0].name == "f"
    assert params.tool_choice is not None and params.tool_choice.mode == "required"
    assert params.model_preferences is not None
    assert params.model_preferences.hints is not None
    assert params.model_preferences.hints[0].name == "claude"


def test_create_message_result_text() -> None:
    result = t.CreateMessageResult.from_wire(
        {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}
    )
    assert result.text == "Paris"
    assert result.stop_reason is None


# -- tasks ----------------------------------------------------------------------------------


def test_task_results() -> None:
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:01Z",
        "ttl": None,
        "pollInterval": 500,
    }
    created = t.CreateTaskResult.from_wire({"task": task})
    assert created.task.task_id == "t1" and not created.task.is_terminal
    got = t.GetTaskResult.from_wire({**task, "status": "completed", "_meta": {"a": 1}})
    assert got.is_terminal and got.meta == {"a": 1} and got.poll_interval == 500
    assert got.to_wire() == {**task, "status": "completed", "_meta": {"a": 1}}
    listed = t.ListTasksResult.from_wire({"tasks": [task], "nextCursor": "c"})
    assert listed.tasks[0].ttl is None and listed.next_cursor == "c"
    note = t.TaskStatusNotificationParams.from_wire({**task, "status": "failed"})
    assert note.status == "failed"
    assert t.CancelTaskResult.from_wire({**task, "status": "cancelled"}).is_terminal
    with pytest.raises(ValidationError):
        t.Task.from_wire({**task, "status": "sleeping"})
    params = t.CallToolRequestParams(name="x", task=t.TaskMetadata(ttl=1000))
    assert params.to_wire() == {"name": "x", "task": {"ttl": 1000}}


# -- 2026-07-28 --------------------------------------------------------------------------------


def test_discover_result() -> None:
    wire = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "S", "version": "2"}},
        "ttlMs": 1000,
        "cacheScope": "public",
    }
    result = t.DiscoverResult.from_wire(wire)
    assert result.supported_versions == ["2026-07-28"]
    assert result.capabilities.tools is not None
    assert result.server_info is not None and result.server_info.name == "S"
    assert result.ttl_ms == 1000 and result.cache_scope == "public"
    assert result.to_wire() == wire
    bare = t.DiscoverResult.from_wire({"supportedVersions": [], "capabilities": {}})
    assert bare.server_info is None
    top = t.DiscoverResult.from_wire(
        {"supportedVersions": [], "capabilities": {}, "serverInfo": {"name": "T", "version": "1"}}
    )
    assert top.server_info is not None and top.server_info.name == "T"
    broken = t.DiscoverResult.from_wire(
        {
            "supportedVersions": [],
            "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": 3}},
        }
    )
    assert broken.server_info is None


def test_discover_result_requires_supported_versions() -> None:
    # A handshake-era server answering server/discover with some other result must not look stateless.
    with pytest.raises(ValidationError):
        t.DiscoverResult.from_wire({})


def test_input_required_result_and_helpers() -> None:
    wire = {
        "resultType": "input_required",
        "inputRequests": {
            "a": {
                "method": "elicitation/create",
                "params": {"message": "m", "requestedSchema": {}},
            },
            "b": {"method": "roots/list"},
        },
        "requestState": "opaque",
    }
    result = t.InputRequiredResult.from_wire(wire)
    assert result.to_wire() == wire
    assert result.input_requests is not None
    request = result.input_requests["a"]
    params = t.parse_input_request_params(request["method"], request.get("params"))
    assert isinstance(params, t.ElicitRequestFormParams)
    roots = t.parse_input_request_params("roots/list", None)
    assert roots.to_wire() == {}
    answer = t.parse_input_response("roots/list", {"roots": [{"uri": "file:///x"}]})
    assert isinstance(answer, t.ListRootsResult)
    with pytest.raises(ValueError):
        t.parse_input_request_params("tools/call", {})
    with pytest.raises(ValueError):
        t.parse_input_response("tools/call", {})


def test_subscription_params() -> None:
    params = t.SubscriptionsListenRequestParams(
        notifications=t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["u"])
    )
    assert params.to_wire() == {
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["u"]}
    }


# -- package surface --------------------------------------------------------------------------


def test_all_names_resolve_and_are_unique() -> None:
    assert len(t.__all__) == len(set(t.__all__))
    for name in t.__all__:
        assert getattr(t, name) is not None, name


def test_completion_types() -> None:
    params = t.CompleteRequestParams(
        ref=t.PromptReference(name="p"), argument=t.CompletionArgument(name="a", value="v")
    )
    assert params.to_wire() == {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "a", "value": "v"},
    }
    resource_ref = t.CompleteRequestParams.from_wire(
        {
            "ref": {"type": "ref/resource", "uri": "x://{id}"},
            "argument": {"name": "id", "value": ""},
        }
    )
    assert isinstance(resource_ref.ref, t.ResourceTemplateReference)
    assert t.CompleteResult().to_wire() == {"completion": {"values": []}}
    done = t.CompleteResult.from_wire({"completion": {"values": ["a"], "hasMore": False}})
    assert done.completion.has_more is False


def test_to_wire_leaves_the_model_as_it_was() -> None:
    # Writing a value must not change it: what was set stays what was set (model_dump,
    # model_fields_set), and two threads may write one shared value at once.
    text = t.TextContent(text="hi")
    result = t.CallToolResult(content=[text])
    init = t.InitializeResult(
        protocol_version="2025-11-25", server_info=t.Implementation(name="s", version="1")
    )
    before = [
        (value.model_fields_set, value.model_dump(exclude_unset=True))
        for value in (text, result, init)
    ]
    assert result.to_wire() == {"content": [{"type": "text", "text": "hi"}]}
    assert init.to_wire() == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    after = [
        (value.model_fields_set, value.model_dump(exclude_unset=True))
        for value in (text, result, init)
    ]
    assert after == before


def test_to_wire_writes_always_sent_fields_changed_in_place() -> None:
    result = t.CallToolResult()
    result.content.append(t.TextContent(text="late"))  # not an assignment: content stays unset
    assert result.to_wire() == {"content": [{"type": "text", "text": "late"}]}
    assert t.TextContent(text="x", type="text").to_wire() == {"type": "text", "text": "x"}
