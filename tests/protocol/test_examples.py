"""Every spec example the client handles parses and writes back exactly as it was.

The examples are the specification's 2026-07-28 ones, kept in ``tests/data/spec_examples/2026-07-28/``
(license: ``LICENSES/modelcontextprotocol-specification.txt``), one folder per schema type. Each folder is either mapped to the model that reads it or listed in
``SKIPPED`` with a reason; a folder in neither fails the run, so new examples are not missed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_sync.protocol import types as t

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "tests" / "data" / "spec_examples" / "2026-07-28"

Parser = Callable[[Any], t.McpModel]

# Folder holds the value itself.
VALUE: dict[str, Parser] = {
    "AudioContent": t.parse_content,
    "BlobResourceContents": t.parse_resource_contents,
    "BooleanSchema": t.parse_primitive_schema,
    "CallToolRequestParams": t.CallToolRequestParams.from_wire,
    "CallToolResult": t.CallToolResult.from_wire,
    "CancelledNotificationParams": t.CancelledNotificationParams.from_wire,
    "ClientCapabilities": t.ClientCapabilities.from_wire,
    "CompleteRequestParams": t.CompleteRequestParams.from_wire,
    "CompleteResult": t.CompleteResult.from_wire,
    "CreateMessageRequestParams": t.CreateMessageRequestParams.from_wire,
    "CreateMessageResult": t.CreateMessageResult.from_wire,
    "DiscoverResult": t.DiscoverResult.from_wire,
    "ElicitRequestFormParams": t.parse_elicit_params,
    "ElicitRequestURLParams": t.parse_elicit_params,
    "ElicitResult": t.ElicitResult.from_wire,
    "EmbeddedResource": t.parse_content,
    "GetPromptRequestParams": t.GetPromptRequestParams.from_wire,
    "GetPromptResult": t.GetPromptResult.from_wire,
    "ImageContent": t.parse_content,
    "InputRequiredResult": t.InputRequiredResult.from_wire,
    "ListPromptsResult": t.ListPromptsResult.from_wire,
    "ListResourceTemplatesResult": t.ListResourceTemplatesResult.from_wire,
    "ListResourcesResult": t.ListResourcesResult.from_wire,
    "ListRootsResult": t.ListRootsResult.from_wire,
    "ListToolsResult": t.ListToolsResult.from_wire,
    "LoggingMessageNotificationParams": t.LoggingMessageNotificationParams.from_wire,
    "ModelPreferences": t.ModelPreferences.from_wire,
    "NumberSchema": t.parse_primitive_schema,
    "PaginatedRequestParams": t.PaginatedRequestParams.from_wire,
    "ProgressNotificationParams": t.ProgressNotificationParams.from_wire,
    "ReadResourceResult": t.ReadResourceResult.from_wire,
    "Resource": t.Resource.from_wire,
    "ResourceLink": t.parse_content,
    "ResourceUpdatedNotificationParams": t.ResourceUpdatedNotificationParams.from_wire,
    "Root": t.Root.from_wire,
    "SamplingMessage": t.SamplingMessage.from_wire,
    "ServerCapabilities": t.ServerCapabilities.from_wire,
    "StringSchema": t.parse_primitive_schema,
    "SubscriptionsListenResult": t.SubscriptionsListenResult.from_wire,
    "TextContent": t.parse_content,
    "TextResourceContents": t.parse_resource_contents,
    "TitledMultiSelectEnumSchema": t.parse_primitive_schema,
    "TitledSingleSelectEnumSchema": t.parse_primitive_schema,
    "Tool": t.Tool.from_wire,
    "ToolResultContent": t.parse_sampling_content,
    "ToolUseContent": t.parse_sampling_content,
    "UntitledMultiSelectEnumSchema": t.parse_primitive_schema,
    "UntitledSingleSelectEnumSchema": t.parse_primitive_schema,
}

# Folder holds a JSON-RPC response; the model reads its ``result``.
RESPONSE: dict[str, Parser] = {
    "CallToolResultResponse": t.CallToolResult.from_wire,
    "CompleteResultResponse": t.CompleteResult.from_wire,
    "DiscoverResultResponse": t.DiscoverResult.from_wire,
    "GetPromptResultResponse": t.GetPromptResult.from_wire,
    "ListPromptsResultResponse": t.ListPromptsResult.from_wire,
    "ListResourceTemplatesResultResponse": t.ListResourceTemplatesResult.from_wire,
    "ListResourcesResultResponse": t.ListResourcesResult.from_wire,
    "ListToolsResultResponse": t.ListToolsResult.from_wire,
    "ReadResourceResultResponse": t.ReadResourceResult.from_wire,
    "SubscriptionsListenResultResponse": t.SubscriptionsListenResult.from_wire,
}

# Folder holds a request or notification; the model reads its ``params``.
PARAMS: dict[str, Parser] = {
    "CallToolRequest": t.CallToolRequestParams.from_wire,
    "CancelledNotification": t.CancelledNotificationParams.from_wire,
    "CompleteRequest": t.CompleteRequestParams.from_wire,
    "CreateMessageRequest": t.CreateMessageRequestParams.from_wire,
    "DiscoverRequest": t.RequestParams.from_wire,
    "ElicitRequest": t.parse_elicit_params,
    "GetPromptRequest": t.GetPromptRequestParams.from_wire,
    "ListPromptsRequest": t.PaginatedRequestParams.from_wire,
    "ListResourceTemplatesRequest": t.PaginatedRequestParams.from_wire,
    "ListResourcesRequest": t.PaginatedRequestParams.from_wire,
    "ListToolsRequest": t.PaginatedRequestParams.from_wire,
    "LoggingMessageNotification": t.LoggingMessageNotificationParams.from_wire,
    "ProgressNotification": t.ProgressNotificationParams.from_wire,
    "PromptListChangedNotification": t.NotificationParams.from_wire,
    "ReadResourceRequest": t.ReadResourceRequestParams.from_wire,
    "ResourceListChangedNotification": t.NotificationParams.from_wire,
    "ResourceUpdatedNotification": t.ResourceUpdatedNotificationParams.from_wire,
    "SubscriptionsAcknowledgedNotification": (
        t.SubscriptionsAcknowledgedNotificationParams.from_wire
    ),
    "SubscriptionsListenRequest": t.SubscriptionsListenRequestParams.from_wire,
    "ToolListChangedNotification": t.NotificationParams.from_wire,
}

# Requests whose example carries no params at all.
NO_PARAMS = {"ListRootsRequest"}

# Maps of key -> request / answer, checked entry by entry (see test_example below).
MAPS = {"InputRequests", "InputResponses"}

SKIPPED = {
    # JSON-RPC error objects and error responses: mcp_sync.protocol.jsonrpc and
    # mcp_sync.errors read them; they are not protocol types.
    "HeaderMismatchError": "error response",
    "InternalError": "error object",
    "InvalidParamsError": "error object",
    "MethodNotFoundError": "error object",
    "MissingRequiredClientCapabilityError": "error response",
    "ParseError": "error object",
    "UnsupportedProtocolVersionError": "error response",
}

# The type each example must parse into, where the parser is not a single class.
EXPECTED_CLASS: dict[str, type[t.McpModel]] = {
    "AudioContent": t.AudioContent,
    "BlobResourceContents": t.BlobResourceContents,
    "BooleanSchema": t.BooleanSchema,
    "ElicitRequest": t.ElicitRequestFormParams,
    "ElicitRequestFormParams": t.ElicitRequestFormParams,
    "ElicitRequestURLParams": t.ElicitRequestURLParams,
    "EmbeddedResource": t.EmbeddedResource,
    "ImageContent": t.ImageContent,
    "NumberSchema": t.NumberSchema,
    "ResourceLink": t.ResourceLink,
    "StringSchema": t.StringSchema,
    "TextContent": t.TextContent,
    "TextResourceContents": t.TextResourceContents,
    "TitledMultiSelectEnumSchema": t.TitledMultiSelectEnumSchema,
    "TitledSingleSelectEnumSchema": t.TitledSingleSelectEnumSchema,
    "ToolResultContent": t.ToolResultContent,
    "ToolUseContent": t.ToolUseContent,
    "UntitledMultiSelectEnumSchema": t.UntitledMultiSelectEnumSchema,
    "UntitledSingleSelectEnumSchema": t.UntitledSingleSelectEnumSchema,
}

HANDLED = VALUE.keys() | RESPONSE.keys() | PARAMS.keys() | NO_PARAMS | MAPS

MISSING = "<examples folder missing>"


def _example_ids() -> list[str]:
    if not EXAMPLES.is_dir():
        return [MISSING]
    return sorted(
        f"{path.parent.name}/{path.name}"
        for path in EXAMPLES.glob("*/*.json")
        if path.parent.name not in SKIPPED
    )


def _require_examples() -> None:
    if not EXAMPLES.is_dir():
        pytest.fail(f"spec examples not found at {EXAMPLES} (they are part of the repository)")


def test_examples_folder_is_present() -> None:
    _require_examples()
    assert len(list(EXAMPLES.glob("*/*.json"))) > 50


def test_every_folder_is_handled_or_skipped() -> None:
    _require_examples()
    folders = {p.name for p in EXAMPLES.iterdir() if p.is_dir()}
    assert not (HANDLED & SKIPPED.keys()), "a folder is both handled and skipped"
    missing_skipped = SKIPPED.keys() - folders
    assert not missing_skipped, f"skip list names missing folders: {missing_skipped}"
    assert not HANDLED - folders, f"mapping names missing folders: {HANDLED - folders}"
    assert folders - SKIPPED.keys() == HANDLED, f"unmapped folders: {folders - HANDLED}"


def _parse_example(folder: str, data: Any) -> tuple[Any, t.McpModel]:
    """Parse ``data`` the way the client reads this kind of example: the JSON the model was
    read from, and the model."""
    if folder in VALUE:
        return data, VALUE[folder](data)
    if folder in RESPONSE:
        assert data["jsonrpc"] == "2.0" and "result" in data
        return data["result"], RESPONSE[folder](data["result"])
    if folder in PARAMS:
        assert "params" in data, "request/notification example without params"
        return data["params"], PARAMS[folder](data["params"])
    raise AssertionError(folder)


def _check_map(folder: str, data: dict[str, Any]) -> None:
    assert data, "empty example map"
    for key, value in data.items():
        if folder == "InputRequests":
            method = value["method"]
            assert method in t.INPUT_REQUEST_METHODS
            params = t.parse_input_request_params(method, value.get("params"))
            assert params.to_wire() == value.get("params", {}), key
        else:  # InputResponses: the method is implied by the answer's shape
            if "action" in value:
                method = "elicitation/create"
            elif "roots" in value:
                method = "roots/list"
            else:
                method = "sampling/createMessage"
            answer = t.parse_input_response(method, value)
            assert answer.to_wire() == value, key


@pytest.mark.parametrize("example", _example_ids())
def test_example_round_trips(example: str) -> None:
    if example == MISSING:
        _require_examples()
    folder = example.split("/")[0]
    data = json.loads((EXAMPLES / example).read_text(encoding="utf-8"))
    if folder in NO_PARAMS:
        assert "params" not in data and data["method"]
        return
    if folder in MAPS:
        _check_map(folder, data)
        return
    assert folder in HANDLED, f"no model is mapped to example folder {folder!r}"
    original, model = _parse_example(folder, data)
    assert isinstance(model, t.McpModel)
    assert not isinstance(model, t.UnknownContent), "a known type parsed as UnknownContent"
    if folder in EXPECTED_CLASS:
        assert type(model) is EXPECTED_CLASS[folder]
    assert model.to_wire() == original
    # The JSON text is the same too (ints stay ints, no keys added).
    assert json.dumps(model.to_wire(), sort_keys=True) == json.dumps(original, sort_keys=True)
