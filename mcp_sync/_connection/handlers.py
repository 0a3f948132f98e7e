"""Adapting the user's plain callables into server-request handlers. The client registers
these on its connection; the session calls them on the dispatcher thread.

A user handler takes ``(params)`` or ``(params, context)``; the context (a
:class:`~mcp_sync.HandlerContext`) is made by the client, through the ``context`` function
each adapter is given: this module knows nothing of the client.
"""

from __future__ import annotations

import inspect
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._session.session import RequestHandler
from ..abort import AbortSignal
from ..errors import RpcError
from ..protocol import jsonrpc
from ..protocol.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Root,
    parse_elicit_params,
)

__all__ = [
    "ClientHandlers",
    "ContextFactory",
    "RootsSource",
    "elicitation_handler",
    "roots_to_wire",
    "sampling_handler",
    "weak_context",
]

#: ``context(signal, method)``: the second argument of a two-argument user handler.
ContextFactory = Callable[[AbortSignal, str], Any]


def weak_context(client: object, make: Callable[[AbortSignal, Any, str], Any]) -> ContextFactory:
    """The :data:`ContextFactory` of ``client``: ``make(signal, client, method)``. The client
    is held weakly: the session's threads must not keep it alive."""
    client_ref = weakref.ref(client)

    def context(signal: AbortSignal, method: str) -> Any:
        client = client_ref()
        if client is None:
            raise RpcError(jsonrpc.INTERNAL_ERROR, "the client is gone")
        return make(signal, client, method)

    return context


RootLike = Root | str | os.PathLike[str]
RootsSource = Sequence[RootLike] | Callable[[], Sequence[RootLike]]


def _root_to_wire(root: RootLike) -> dict[str, Any]:
    if isinstance(root, Root):
        return root.to_wire()
    if isinstance(root, (str, os.PathLike)) and not str(root).startswith("file://"):
        path = Path(root).expanduser().resolve()
        return {"uri": path.as_uri(), "name": path.name or str(path)}
    return {"uri": str(root)}


def roots_to_wire(roots: RootsSource) -> list[dict[str, Any]]:
    """The ``roots`` list of a ``roots/list`` answer; paths become ``file://`` URIs."""
    items = roots() if callable(roots) else roots
    return [_root_to_wire(root) for root in items]


def _arity(handler: Callable[..., Any]) -> int:
    """How many positional arguments ``handler`` takes (1: params; 2: params, context)."""
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return 2
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    return 2 if len(positional) >= 2 else 1


def call_user(handler: Callable[..., Any], params: Any, context: Any) -> Any:
    """Call a user handler with ``(params)`` or ``(params, context)``, as it was written."""
    return handler(params, context) if _arity(handler) == 2 else handler(params)


def _to_wire(result: Any) -> Any:
    to_wire = getattr(result, "to_wire", None)
    return to_wire() if callable(to_wire) else result


def sampling_handler(
    context: ContextFactory, user: Callable[..., Any], tools: bool
) -> Callable[[dict[str, Any], AbortSignal], Any]:
    """A ``sampling/createMessage`` handler around the user's typed callable."""

    def handle(params: dict[str, Any], signal: AbortSignal) -> Any:
        typed = CreateMessageRequestParams.from_wire(params)
        if typed.tools and not tools:
            raise RpcError(
                jsonrpc.INVALID_PARAMS, "this client did not declare tools support in sampling"
            )
        result = call_user(user, typed, context(signal, "sampling/createMessage"))
        if isinstance(result, dict):
            result = CreateMessageResult.from_wire(result)
        return _to_wire(result)

    return handle


def elicitation_handler(
    context: ContextFactory, form: Callable[..., Any] | None, url: Callable[..., Any] | None
) -> Callable[[dict[str, Any], AbortSignal], Any]:
    """An ``elicitation/create`` handler dispatching on the request's mode."""

    def handle(params: dict[str, Any], signal: AbortSignal) -> Any:
        typed = parse_elicit_params(params)
        user = url if isinstance(typed, ElicitRequestURLParams) else form
        if user is None:
            mode = "url" if isinstance(typed, ElicitRequestURLParams) else "form"
            raise RpcError(jsonrpc.INVALID_PARAMS, f"elicitation mode {mode!r} is not supported")
        result = call_user(user, typed, context(signal, "elicitation/create"))
        if isinstance(result, dict):
            result = ElicitResult.from_wire(result)
        if isinstance(typed, ElicitRequestFormParams) and isinstance(result, ElicitResult):
            result = apply_form_defaults(typed, result)
        return _to_wire(result)

    return handle


def apply_form_defaults(request: ElicitRequestFormParams, result: ElicitResult) -> ElicitResult:
    """Fill in schema defaults (SEP-1034) for fields an accepting handler left out."""
    if result.action != "accept":
        return result
    properties = (request.requested_schema or {}).get("properties") or {}
    content = dict(result.content or {})
    for name, schema in properties.items():
        if name not in content and isinstance(schema, dict) and "default" in schema:
            content[name] = schema["default"]
    if content == (result.content or {}) and result.content is not None:
        return result
    return result.model_copy(update={"content": content})


class ClientHandlers:
    """The server requests a client answers (roots, sampling, elicitation), the user's
    callables for them, and the capabilities they declare."""

    def __init__(self, roots: RootsSource | None, extra: Mapping[str, Any] | None) -> None:
        self.roots = roots
        #: ``(handler, tools, context)`` of :meth:`~mcp_sync.Client.on_sampling`.
        self.sampling: tuple[Callable[..., Any], bool, bool] | None = None
        #: The elicitation handler of each mode.
        self.elicitation: dict[str, Callable[..., Any]] = {}
        self._extra = dict(extra or {})

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities these handlers, and the extra ones, declare."""
        caps: dict[str, Any] = {}
        if self.roots is not None:
            caps["roots"] = {"listChanged": True}
        if self.sampling is not None:
            _, tools, context = self.sampling
            sampling: dict[str, Any] = {}
            if tools:
                sampling["tools"] = {}
            if context:
                sampling["context"] = {}
            caps["sampling"] = sampling
        if self.elicitation:
            caps["elicitation"] = {mode: {} for mode in sorted(self.elicitation)}
        caps.update(self._extra)
        return caps

    def install(
        self, set_handler: Callable[[str, RequestHandler], None], context: ContextFactory
    ) -> None:
        """``set_handler(method, handler)`` for each server request there is a handler for."""
        if self.roots is not None:
            roots = self.roots
            set_handler("roots/list", lambda _params, _signal: {"roots": roots_to_wire(roots)})
        if self.sampling is not None:
            user, tools, _ = self.sampling
            set_handler("sampling/createMessage", sampling_handler(context, user, tools))
        if self.elicitation:
            form, url = self.elicitation.get("form"), self.elicitation.get("url")
            set_handler("elicitation/create", elicitation_handler(context, form, url))
