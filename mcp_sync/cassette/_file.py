"""A cassette file's format, its filtering, and matching a request against it
(:mod:`mcp_sync.cassette` is the transport that uses them).

One JSON object a line: first a header (``{"cassette": 1, ...}``: the transport recorded
over, what it declares), then one line a message, ``{"direction": "client->server" |
"server->client", "message": {...}}``, in the order they crossed the wire.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import CassetteError
from ..protocol import meta as keys
from ..redaction import MASK, is_secret_field, redact

__all__ = [
    "CLIENT",
    "FORMAT",
    "SERVER",
    "Episode",
    "Filter",
    "Matcher",
    "diff",
    "episodes",
    "filtered",
    "load",
    "normalized",
]

FORMAT = 1
CLIENT = "client->server"
SERVER = "server->client"

#: ``filter(line)``: the line to write (changed or not), or None to drop it.
Filter = Callable[[dict[str, Any]], "dict[str, Any] | None"]
#: ``match(recorded, live)``: True when a live request is to be answered as the recorded one
#: was (called for a request of the same method whose parameters differ).
Matcher = Callable[[dict[str, Any], dict[str, Any]], bool]


def _mask_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (MASK if isinstance(v, str) and v and is_secret_field(k) else _mask_keys(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask_keys(v) for v in value]
    return value


def filtered(line: dict[str, Any], user: Filter | None) -> dict[str, Any] | None:
    """``line`` as it is written: the secrets the client holds redacted (the
    :mod:`mcp_sync.redaction` registry), values under secret-looking keys masked, then the
    user's filter."""
    clean: dict[str, Any] = _mask_keys(json.loads(redact(json.dumps(line))))
    return user(clean) if user is not None else clean


def load(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the message lines of a cassette; :class:`CassetteError` naming the
    file and the line when it is not one."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CassetteError(f"cannot read cassette {name}: {exc}", path=name) from exc
    lines = text.split("\n")
    header: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except RecursionError:
            raise CassetteError(
                f"{name}:{number}: nested too deeply to read", path=name, line=number
            ) from None
        except ValueError as exc:
            last = number == len(lines) and not text.endswith("\n")
            what = "truncated (the recording stopped mid-line)" if last else "not JSON"
            raise CassetteError(f"{name}:{number}: {what}: {exc}", path=name, line=number) from exc
        if header is None:
            if not isinstance(item, dict) or item.get("cassette") != FORMAT:
                raise CassetteError(
                    f"{name}:{number}: not an mcp_sync cassette (the first line must be its "
                    f'header, {{"cassette": {FORMAT}, ...}})',
                    path=name,
                    line=number,
                )
            header = item
            continue
        if (
            not isinstance(item, dict)
            or item.get("direction") not in (CLIENT, SERVER)
            or not isinstance(item.get("message"), dict)
        ):
            raise CassetteError(
                f'{name}:{number}: expected {{"direction": "{CLIENT}" or "{SERVER}", '
                f'"message": {{...}}}}, got {raw[:120]}',
                path=name,
                line=number,
            )
        fault = _fault(item["message"])
        if fault is not None:
            raise CassetteError(f"{name}:{number}: {fault}", path=name, line=number)
        item["line"] = number
        messages.append(item)
    if header is None:
        raise CassetteError(f"{name}: empty cassette (no header line)", path=name)
    return header, messages


def _fault(message: Mapping[str, Any]) -> str | None:
    """What in a recorded message the replay cannot use (it looks messages up by their id,
    progress token and subscription id, and matches requests by their params), or None.
    The rest is replayed as it was recorded, as the server sent it."""
    if "id" in message and not _is_key(message["id"]):
        return '"id" must be a string, a number or null'
    params = message.get("params")
    if params is None:
        return None
    if not isinstance(params, dict):
        return '"params" must be an object'
    meta = params.get("_meta")
    keyed = {"params.progressToken": params.get("progressToken")}
    if isinstance(meta, dict):
        keyed["params._meta.progressToken"] = meta.get("progressToken")
        keyed[f"params._meta.{keys.SUBSCRIPTION_ID}"] = meta.get(keys.SUBSCRIPTION_ID)
    for where, value in keyed.items():
        if not _is_key(value):
            return f'"{where}" must be a string or a number'
    return None


def _is_key(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float))  # (bool is an int)


def normalized(message: Mapping[str, Any]) -> dict[str, Any]:
    """What a request is matched on: its method and parameters, without ``_meta`` (the
    progress token, the 2026 era's client version and capabilities, trace ids) and, for
    ``initialize``, without the client's name and version."""
    params = dict(message.get("params") or {})
    params.pop("_meta", None)
    if message.get("method") == "initialize":
        params.pop("clientInfo", None)
    return {"method": message.get("method"), "params": params}


def diff(recorded: Mapping[str, Any], live: Mapping[str, Any]) -> str:
    """A unified diff of two normalized requests."""

    def text(value: Mapping[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True).splitlines()

    return "\n".join(
        difflib.unified_diff(text(recorded), text(live), "recorded", "sent", lineterm="")
    )


@dataclass
class Episode:
    """A client message and what the server sent in its wake, in recorded order."""

    trigger: dict[str, Any]
    line: int
    steps: list[dict[str, Any]] = field(default_factory=list)
    key: dict[str, Any] = field(default_factory=dict)
    used: int = 0
    #: The server's answer to the trigger is among the steps.
    answered: bool = False

    @property
    def is_request(self) -> bool:
        return "id" in self.trigger

    @property
    def method(self) -> Any:
        return self.trigger.get("method")


def _token(message: Mapping[str, Any]) -> Any:
    meta = (message.get("params") or {}).get("_meta")
    return meta.get("progressToken") if isinstance(meta, dict) else None


def episodes(lines: list[dict[str, Any]]) -> list[Episode]:
    """The recording cut into episodes. A server message belongs to: the request it answers;
    the request whose progress token it carries; else the episode of the last client message
    before it (a client's answer to a server request counts as the episode that asked)."""
    found: list[Episode] = []
    by_request: dict[Any, Episode] = {}
    by_token: dict[Any, Episode] = {}
    asked_by: dict[Any, Episode] = {}  # server request id -> its episode
    last: Episode | None = None
    for item in lines:
        message = item["message"]
        if item["direction"] == CLIENT:
            if "method" in message:
                last = Episode(message, item["line"], key=normalized(message))
                found.append(last)
                if "id" in message:
                    by_request[message["id"]] = last
                    if _token(message) is not None:
                        by_token[_token(message)] = last
            else:  # the client's answer to a server request
                last = asked_by.get(message.get("id"), last)
            continue
        owner: Episode | None
        if "method" not in message:
            owner = by_request.get(message.get("id"))
        elif message.get("method") == "notifications/progress":
            owner = by_token.get((message.get("params") or {}).get("progressToken"), last)
        else:
            owner = last
        if owner is None:
            continue  # an answer to a request the filter dropped
        owner.steps.append(message)
        if "method" not in message:
            owner.answered = True
        elif "id" in message:
            asked_by[message["id"]] = owner
    return found


def rewrite(message: dict[str, Any], live_ids: Mapping[Any, Any], live_id: Any) -> dict[str, Any]:
    """A recorded server message with the recorded ids it refers to replaced by the live ones:
    the answer's id, a progress token, a ``subscriptions/listen`` subscription id."""
    message = json.loads(json.dumps(message))
    if "method" not in message:
        message["id"] = live_id
        return message
    params = message.get("params")
    if isinstance(params, dict):
        if "progressToken" in params and params["progressToken"] in live_ids:
            params["progressToken"] = live_ids[params["progressToken"]]
        meta = params.get("_meta")
        if isinstance(meta, dict) and meta.get(keys.SUBSCRIPTION_ID) in live_ids:
            meta[keys.SUBSCRIPTION_ID] = live_ids[meta[keys.SUBSCRIPTION_ID]]
    return message
