"""to_mcp / from_mcp against the official SDK's own types, over what real servers sent."""

from __future__ import annotations

import mcp.types as sdk
import pytest

import mcp_sync
from mcp_sync.integrations.mcp_types import from_mcp, to_mcp
from mcp_sync.types import CallToolResult, TextContent, Tool, UnknownContent
from tests.helpers.integration_servers import SDK_SERVER

EVERYTHING_CALLS = [
    ("echo", {"message": "hi"}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ("get-resource-links", {"count": 3}),
    ("get-resource-reference", {"resourceType": "Blob", "resourceId": 2}),
    ("get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
    ("get-structured-content", {"location": "New York"}),
    ("get-sum", {"a": 1, "b": 2}),
    ("get-tiny-image", {}),
]


def everything_outputs(client: mcp_sync.Client) -> list[mcp_sync.types.McpModel]:
    outputs: list[mcp_sync.types.McpModel] = [
        *client.list_tools(),
        *client.list_resources(),
        *client.list_resource_templates(),
        *client.list_prompts(),
    ]
    outputs += [client.call_tool(name, args) for name, args in EVERYTHING_CALLS]
    outputs.append(client.read_resource("demo://resource/static/document/features.md"))
    outputs.append(client.read_resource("demo://resource/dynamic/blob/1"))
    outputs.append(client.get_prompt("args-prompt", {"city": "Paris", "state": "TX"}))
    outputs.append(
        client.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "1"})
    )
    return outputs


def sdk_server_outputs(client: mcp_sync.Client) -> list[mcp_sync.types.McpModel]:
    outputs: list[mcp_sync.types.McpModel] = [*client.list_tools(), *client.list_prompts()]
    outputs += [
        client.call_tool("add", {"a": 2, "b": 3}),
        client.call_tool("weather", {"city": "Oslo"}),
        client.call_tool("fail", {}),
    ]
    outputs += [*client.list_resources(), *client.list_resource_templates()]
    outputs += [client.read_resource(r.uri) for r in client.list_resources()]
    prompt = client.list_prompts()[0]
    args = {a.name: "x" for a in prompt.arguments or []}
    outputs.append(client.get_prompt(prompt.name, args))
    return outputs


def assert_round_trips(outputs: list[mcp_sync.types.McpModel]) -> set[str]:
    kinds = set()
    for ours in outputs:
        sdk_value = to_mcp(ours)
        kinds.add(type(sdk_value).__name__)
        # exactly what the SDK makes of the JSON the server sent
        assert sdk_value == getattr(sdk, type(ours).__name__).model_validate(ours.to_wire())
        back = from_mcp(sdk_value)
        assert type(back) is type(ours)
        assert back.to_wire() == ours.to_wire(), type(ours).__name__
        assert to_mcp(back) == sdk_value
    return kinds


def test_round_trips_over_server_everything(everything_cmd):
    with mcp_sync.connect(everything_cmd, request_timeout=20) as client:
        outputs = everything_outputs(client)
    assert assert_round_trips(outputs) == {
        "Tool",
        "Resource",
        "ResourceTemplate",
        "Prompt",
        "CallToolResult",
        "ReadResourceResult",
        "GetPromptResult",
    }
    blocks = [b for o in outputs if isinstance(o, CallToolResult) for b in o.content]
    # every content kind a tool result can hold came through
    assert {type(b).__name__ for b in blocks} >= {
        "TextContent",
        "ImageContent",
        "ResourceLink",
        "EmbeddedResource",
    }
    assert any(b.annotations for b in blocks)


@pytest.mark.parametrize("protocol", ["auto", "handshake"])
def test_round_trips_over_the_sdk_server(protocol):
    with mcp_sync.connect(SDK_SERVER, protocol=protocol, request_timeout=20) as client:
        outputs = sdk_server_outputs(client)
        era = client.era
    assert era == ("stateless" if protocol == "auto" else "handshake")
    assert_round_trips(outputs)
    assert any(isinstance(o, CallToolResult) and o.is_error for o in outputs)
    assert any(isinstance(o, CallToolResult) and o.structured_content for o in outputs)


def test_lists_convert_item_by_item():
    tools = [
        Tool(name="a", input_schema={"type": "object"}),
        Tool(name="b", input_schema={"type": "object"}),
    ]
    converted = to_mcp(tools)
    assert [type(t) for t in converted] == [sdk.Tool, sdk.Tool]
    assert [t.name for t in from_mcp(converted)] == ["a", "b"]


def test_sdk_objects_built_in_python_convert():
    # built with defaults (no explicit "type"), as SDK users write them
    result = sdk.CallToolResult(
        content=[sdk.TextContent(text="hi")], structured_content={"n": 1}, is_error=True
    )
    ours = from_mcp(result)
    assert isinstance(ours, CallToolResult)
    assert ours.content == [TextContent(type="text", text="hi")]
    assert (ours.structured_content, ours.is_error) == ({"n": 1}, True)
    assert to_mcp(ours) == result


def test_unknown_content_is_refused_not_dropped():
    result = CallToolResult.from_wire({"content": [{"type": "hologram", "depth": 3}]})
    assert isinstance(result.content[0], UnknownContent)
    with pytest.raises(TypeError, match="does not know"):
        to_mcp(result)


def test_types_without_a_counterpart_are_named():
    class Custom(sdk.Tool):
        pass

    with pytest.raises(TypeError, match="mcp_sync has no type for .*Custom"):
        from_mcp(Custom(name="x", input_schema={"type": "object"}))
