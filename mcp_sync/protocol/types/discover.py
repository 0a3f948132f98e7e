"""What the 2026-07-28 (stateless) protocol adds: ``server/discover``, multi-round-trip
requests (``input_required`` results) and ``subscriptions/listen``.

An :class:`InputRequiredResult` asks the client to fulfil ``input_requests`` (each a
``{"method", "params"}`` object for ``elicitation/create``, ``sampling/createMessage`` or
``roots/list``) and to retry the original request with the answers; the raw JSON is kept so
that the retry loop can dispatch on ``method``, and :func:`parse_input_request_params` /
:func:`parse_input_response` turn one request or answer into its model.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from .. import meta as meta_keys
from ._base import McpModel
from .common import (
    CacheableResult,
    Implementation,
    ListRootsResult,
    NotificationParams,
    RequestParams,
    Result,
    ServerCapabilities,
)
from .elicitation import ElicitRequestParams, ElicitResult, parse_elicit_params
from .sampling import CreateMessageRequestParams, CreateMessageResult

__all__ = [
    "INPUT_REQUEST_METHODS",
    "DiscoverResult",
    "InputRequestParams",
    "InputRequiredResult",
    "InputResponse",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "parse_input_request_params",
    "parse_input_response",
]

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
LIST_ROOTS = "roots/list"
#: The methods a server may put in ``inputRequests``.
INPUT_REQUEST_METHODS: frozenset[str] = frozenset({ELICIT, SAMPLE, LIST_ROOTS})

InputRequestParams = ElicitRequestParams | CreateMessageRequestParams | RequestParams
InputResponse = ElicitResult | CreateMessageResult | ListRootsResult


class DiscoverResult(CacheableResult):
    """The answer to ``server/discover``: versions, capabilities and instructions."""

    supported_versions: list[str]
    capabilities: ServerCapabilities = Field(default_factory=ServerCapabilities)
    instructions: str | None = None

    _always_sent = frozenset({"capabilities"})

    @property
    def server_info(self) -> Implementation | None:
        """The server's name and version, from ``_meta`` (or a top-level ``serverInfo``).

        For display only; None when absent or malformed.
        """
        raw = (self.model_extra or {}).get("serverInfo")
        if raw is None and self.meta is not None:
            raw = self.meta.get(meta_keys.SERVER_INFO)
        if not isinstance(raw, dict):
            return None
        try:
            return Implementation.from_wire(raw)
        except ValueError:
            return None


class InputRequiredResult(Result):
    """The server needs input before it can answer (2026-07-28).

    Retry the original request with a new id, ``inputResponses`` keyed like
    ``input_requests`` and ``requestState`` copied exactly (omitted if None).
    """

    result_type: str | None = "input_required"
    input_requests: dict[str, dict[str, Any]] | None = None
    request_state: str | None = None

    _always_sent = frozenset({"result_type"})


def parse_input_request_params(method: str, params: Any) -> InputRequestParams:
    """The params model of one input request (``{}`` is used for missing params).

    Raises ``ValueError`` for a method outside :data:`INPUT_REQUEST_METHODS` and
    ``pydantic.ValidationError`` for malformed params.
    """
    params = {} if params is None else params
    if method == ELICIT:
        return parse_elicit_params(params)
    if method == SAMPLE:
        return CreateMessageRequestParams.from_wire(params)
    if method == LIST_ROOTS:
        return RequestParams.from_wire(params)
    raise ValueError(f"unsupported input request method: {method!r}")


def parse_input_response(method: str, result: Any) -> InputResponse:
    """The result model answering an input request of ``method``."""
    if method == ELICIT:
        return ElicitResult.from_wire(result)
    if method == SAMPLE:
        return CreateMessageResult.from_wire(result)
    if method == LIST_ROOTS:
        return ListRootsResult.from_wire(result)
    raise ValueError(f"unsupported input request method: {method!r}")


class SubscriptionFilter(McpModel):
    """Which notifications a ``subscriptions/listen`` stream carries."""

    tools_list_changed: StrictBool | None = None
    prompts_list_changed: StrictBool | None = None
    resources_list_changed: StrictBool | None = None
    resource_subscriptions: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams):
    notifications: SubscriptionFilter = Field(default_factory=SubscriptionFilter)

    _always_sent = frozenset({"notifications"})


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """The subset of the requested notifications the server will send."""

    notifications: SubscriptionFilter = Field(default_factory=SubscriptionFilter)

    _always_sent = frozenset({"notifications"})


class SubscriptionsListenResult(Result):
    """Sent when the server ends a listen stream gracefully."""
