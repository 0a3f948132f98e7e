"""The 2026-07-28 stateless era as pure rules: per-request ``_meta``, result types, the
multi round-trip (``input_required``) retry, version choice. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast

from ..errors import ProtocolError
from . import meta as keys
from . import methods
from .versions import STATELESS_VERSIONS

__all__ = [
    "HEADER_MISMATCH",
    "INPUT_METHODS",
    "MISSING_CAPABILITY",
    "STATELESS_ERROR_CODES",
    "MRTR_METHODS",
    "UNSUPPORTED_VERSION",
    "choose_version",
    "request_meta",
    "result_type",
    "retry_params",
    "subscription_id",
    "with_meta",
]

HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
#: Errors only a 2026-era server sends: seeing one means the server is of the stateless era.
STATELESS_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

#: Requests whose result may be ``input_required`` (their rows in the method table say so).
MRTR_METHODS = methods.MRTR_METHODS
#: What a server may ask for in ``inputRequests``, and the capability each needs.
INPUT_METHODS = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def request_meta(
    version: str,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any],
    log_level: str | None = None,
) -> dict[str, Any]:
    """The ``_meta`` every 2026-era request carries."""
    meta: dict[str, Any] = {
        keys.PROTOCOL_VERSION: version,
        keys.CLIENT_CAPABILITIES: dict(capabilities),
        keys.CLIENT_INFO: dict(client_info),
    }
    if log_level is not None:
        meta[keys.LOG_LEVEL] = log_level
    return meta


def with_meta(params: Mapping[str, Any] | None, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with ``meta`` merged into its ``_meta`` (keys already there win)."""
    out = dict(params or {})
    out["_meta"] = {**meta, **(out.get("_meta") or {})}
    return out


def result_type(result: Any) -> Literal["complete", "input_required", "task"]:
    """The ``resultType`` of a result (absent means complete, as from a handshake-era server);
    ``"task"`` comes from the tasks extension (a task handle instead of the result)."""
    kind = result.get("resultType", "complete") if isinstance(result, dict) else "complete"
    if kind == "complete" or kind == "input_required" or kind == "task":
        return cast('Literal["complete", "input_required", "task"]', kind)
    raise ProtocolError(f"unknown resultType {kind!r} in the server's result")


def declares_extension(params: Mapping[str, Any] | None, extension: str) -> bool:
    """Whether a request's ``_meta`` client capabilities declare ``extension``."""
    meta = (params or {}).get("_meta")
    caps = meta.get(keys.CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
    extensions = caps.get("extensions") if isinstance(caps, Mapping) else None
    return isinstance(extensions, Mapping) and extension in extensions


def retry_params(
    original: Mapping[str, Any], responses: Mapping[str, Any], request_state: Any
) -> dict[str, Any]:
    """The params of the retry after an ``input_required`` result: the original request's,
    plus ``inputResponses`` and, only when the server gave one, the exact ``requestState``."""
    params = {k: v for k, v in original.items() if k not in ("inputResponses", "requestState")}
    params["inputResponses"] = dict(responses)
    if request_state is not None:
        params["requestState"] = request_state
    return params


def choose_version(supported: Iterable[Any]) -> str | None:
    """The newest 2026-era version both sides speak, or None."""
    offered = {v for v in supported if isinstance(v, str)}
    return next((v for v in STATELESS_VERSIONS if v in offered), None)


def subscription_id(params: Mapping[str, Any] | None) -> Any:
    """The ``subscriptions/listen`` id a notification belongs to, if any."""
    meta = (params or {}).get("_meta")
    return meta.get(keys.SUBSCRIPTION_ID) if isinstance(meta, dict) else None
