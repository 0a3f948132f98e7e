"""What only the 2026-07-28 (stateless) era does on the client side, in one place.

A stateless-era request stands alone: it carries the client's version, capabilities and info
in its ``_meta``; a result may be ``input_required`` (the server asks for sampling, elicitation
or roots and the client sends the request again with the answers); list and read results may
be cached for their ``ttlMs``; over HTTP a ``tools/call`` carries ``Mcp-Param-*`` headers
computed from the tool's schema; change notifications come through ``subscriptions/listen``.

:class:`StatelessEra` holds that logic and its state for one connection; the connection
(:mod:`mcp_sync._connection.connection`) hands its stateless-era requests here and stays
era-neutral. What it needs from the connection is the small :class:`Link` interface. The pure
rules (the shape of ``_meta``, of a retry) are in :mod:`mcp_sync.protocol.stateless`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

import pydantic

from .._rules.deadline import Deadline, call_deadline
from .._session.outgoing import Outgoing
from .._session.server_requests import MAX_INPUT_REQUESTS, RequestHandler
from .._session.session import PendingRequest, Session
from ..abort import AbortController, AbortSignal
from ..errors import (
    McpError,
    MissingClientCapability,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from ..protocol import headers, stateless
from ..protocol.jsonrpc import Notification
from ..protocol.meta import SERVER_INFO as SERVER_INFO_KEY
from ..protocol.types import TASKS_EXTENSION, Implementation, Tool
from .cache import ResultCache
from .negotiation import ServerState

__all__ = [
    "Link",
    "StatelessEra",
    "StatelessListen",
    "authorization_context",
    "listen_filters",
]

logger = logging.getLogger("mcp_sync")

NotificationCallback = Callable[[Notification], None]
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
LISTEN = "subscriptions/listen"


class Link(Protocol):
    """What the stateless-era logic needs of the connection it serves."""

    server: ServerState | None
    client_info: Implementation
    #: The capabilities the client declares (its handlers and options).
    client_capabilities: dict[str, Any]
    log_level: str | None
    request_timeout: float
    max_total_timeout: float | None

    @property
    def state(self) -> str: ...

    def connected_session(self, deadline: Deadline | None = None) -> Session: ...

    def current_session(self) -> Session | None: ...

    def submit(self, job: Callable[[], None]) -> None: ...

    def send_once(self, session: Session, outgoing: Outgoing) -> Any: ...


class StatelessEra:
    """The stateless-era side of one connection: requests, their input rounds, the cache,
    the tools' parameter headers and the live ``subscriptions/listen`` requests."""

    def __init__(self, link: Link, *, max_input_rounds: int, cache: bool) -> None:
        self._link = link
        self.max_input_rounds = max_input_rounds
        self.cache = ResultCache() if cache else None
        #: The tools as last listed, by name: their schemas give ``Mcp-Param-*`` headers.
        self._tools: dict[str, Tool] = {}
        self._listens: dict[Any, StatelessListen] = {}  # by request id
        self._active_listens: set[StatelessListen] = set()  # not cancelled: restarted on recovery

    # -- requests -----------------------------------------------------------------------

    def request(self, session: Session, outgoing: Outgoing) -> Any:
        """One request: from the cache, or sent with ``_meta`` (and a tool call's
        ``Mcp-Param-*`` headers) and as many ``input_required`` rounds as the server asks for
        (each round its own request), all by the call's deadline: it covers every round and
        every handler the call runs."""
        method, row, deadline = outgoing.method, outgoing.row, outgoing.deadline
        cache = self.cache
        identity: str | None = None
        if cache is not None and row.cacheable:
            identity = authorization_context(session.transport, outgoing.extra_headers)
            cached = cache.get(method, outgoing.params, identity)
            if cached is not None:
                return cached
        key_params = outgoing.params
        body = stateless.with_meta(key_params, self.meta(method))
        outgoing = outgoing.with_params(body, self._param_headers(outgoing))
        send = self._link.send_once
        for round_number in range(self.max_input_rounds + 1):
            if round_number:
                deadline.check(method, f"after {round_number} input_required rounds")
            try:
                raw = send(session, outgoing)
            except RequestTimeout as exc:
                if not round_number:
                    raise
                detail = f"in input_required round {round_number + 1}"
                raise deadline.expired(method, detail) from exc
            self._note_server_info(raw)
            kind = stateless.result_type(raw)
            if kind == "task" and not stateless.declares_extension(body, TASKS_EXTENSION):
                raise ProtocolError(f"{method}: the server answered with a task unasked")
            if kind != "input_required":
                # Only an answer given at once is kept: one that needed input (an answer, a
                # sample, roots) is the caller's, and must not be served to the next one.
                if cache is not None and kind == "complete" and not round_number:
                    cache.put(method, key_params, raw, identity)
                return raw
            responses = self.fulfil_input_requests(
                session, raw.get("inputRequests"), outgoing.signal, deadline, method
            )
            body = stateless.retry_params(body, responses, raw.get("requestState"))
            outgoing = outgoing.with_params(body)
        raise ProtocolError(
            f"{method}: the server still asks for input after {self.max_input_rounds} rounds"
        )

    def meta(self, method: str) -> dict[str, Any]:
        """The ``_meta`` of a stateless-era request of ``method``."""
        link = self._link
        server = link.server
        assert server is not None
        return stateless.request_meta(
            server.protocol_version,
            self.capabilities_for(method),
            link.client_info.to_wire(),
            link.log_level,
        )

    def capabilities_for(self, method: str | None) -> dict[str, Any]:
        """What one request may need: the handlers' capabilities for requests that may come
        back ``input_required``, nothing for the rest."""
        if method not in stateless.MRTR_METHODS:
            return {}
        caps = dict(self._link.client_capabilities)
        if "roots" in caps:
            caps["roots"] = {}
        return caps

    def fulfil_input_requests(
        self,
        session: Session,
        requests: Any,
        signal: AbortSignal | None,
        deadline: Deadline,
        method: str,
    ) -> dict[str, Any]:
        """Answer an ``inputRequests`` map with the registered handlers, on the calling
        thread, one after another; none runs once ``deadline`` (that of the call of
        ``method``) has passed.

        A map of more than ``MAX_INPUT_REQUESTS``, or one asking for a capability this client
        lacks, is refused whole before any handler runs."""
        if not isinstance(requests, dict):
            return {}
        if len(requests) > MAX_INPUT_REQUESTS:
            raise ProtocolError(
                f"the server asks for {len(requests)} inputs in one input_required result; "
                f"this client answers at most {MAX_INPUT_REQUESTS} per result: refused, no "
                "handler ran and no retry was sent"
            )
        calls: list[tuple[str, RequestHandler, dict[str, Any]]] = []
        for key, request in requests.items():
            asked = request.get("method") if isinstance(request, dict) else None
            handler = session.handler(asked) if isinstance(asked, str) else None
            if handler is None:
                capability = stateless.INPUT_METHODS.get(str(asked), str(asked))
                raise MissingClientCapability(
                    stateless.MISSING_CAPABILITY,
                    f"the server asks for {asked} but this client has no {capability} handler"
                    f" (register one with on_{capability}() or roots=)",
                    {"requiredCapabilities": {capability: {}}},
                )
            calls.append((key, handler, request.get("params") or {}))
        responses: dict[str, Any] = {}
        with _handler_signal(signal, deadline, method) as handler_signal:
            for done, (key, handler, params) in enumerate(calls):
                deadline.check(method, f"after answering {done} of {len(calls)} input requests")
                try:
                    responses[key] = handler(params, handler_signal)
                except Exception as exc:
                    if deadline.passed():
                        # (a handler that gave up when its signal fired at the deadline)
                        detail = f"while answering input request {key!r}"
                        raise deadline.expired(method, detail) from exc
                    raise
        deadline.check(method, f"while answering {len(calls)} input requests")
        return responses

    def _note_server_info(self, raw: Any) -> None:
        """A result's ``_meta`` may carry newer server info: keep it."""
        meta = raw.get("_meta") if isinstance(raw, dict) else None
        info = meta.get(SERVER_INFO_KEY) if isinstance(meta, dict) else None
        link = self._link
        state = link.server
        if (
            isinstance(info, dict)
            and state is not None
            and info != (state.server_info.to_wire() if state.server_info else None)
        ):
            with contextlib.suppress(pydantic.ValidationError):
                new_info = Implementation.from_wire(info)
                link.server = dataclasses.replace(state, server_info=new_info)

    # -- tools and their parameter headers ----------------------------------------------

    def accept_tools(self, tools: Iterable[Tool]) -> list[Tool]:
        """The listed tools minus those with invalid ``x-mcp-header`` annotations (dropped,
        with a warning); those with valid ones are remembered for their parameter headers."""
        accepted = [tool for tool in tools if _headers_valid(tool)]
        # Only tools that ask for headers: computing them walks the schema on every call
        # (16 us for a small nested schema, a third of a whole stdio call).
        self._tools = {
            t.name: t for t in accepted if _mentions(t.input_schema, headers.X_MCP_HEADER)
        }
        return accepted

    def _param_headers(self, outgoing: Outgoing) -> Mapping[str, str]:
        """The headers of a request: with the ``Mcp-Param-*`` headers a ``tools/call`` of a
        tool whose schema asks for them gets (from the tool as last listed)."""
        params = outgoing.params
        if outgoing.method != "tools/call" or not self._tools or params is None:
            return outgoing.headers
        tool = self._tools.get(str(params.get("name")))
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return outgoing.headers
        found = headers.param_headers(tool.input_schema, arguments)
        return headers.merge(dict(outgoing.headers), found) if found else outgoing.headers

    # -- notifications, listen, recovery ------------------------------------------------

    def route_inline(self, notification: Notification) -> None:
        """On the reader thread: a ``subscriptions/listen`` acknowledgement (quick)."""
        listener = self._listens.get(stateless.subscription_id(notification.params))
        if listener is not None:
            listener.deliver(notification)

    def on_notification(self, notification: Notification) -> None:
        """On the dispatcher thread: stale cache entries, the listen callbacks."""
        if self.cache is not None:
            self.cache.invalidate(notification.method, notification.params)
        listener = self._listens.get(stateless.subscription_id(notification.params))
        if listener is not None:
            listener.notify_user(notification)

    def listen(
        self, filters: dict[str, Any], callback: NotificationCallback, deadline: Deadline
    ) -> StatelessListen:
        """Start a ``subscriptions/listen`` request; returns once the server acknowledged, by
        ``deadline`` (the ``listen()`` call's)."""
        listener = StatelessListen(self, filters, callback)
        listener.start(deadline)
        return listener

    def reconnected(self, era_is_stateless: bool, deadline: Deadline) -> None:
        """The connection was replaced: the cache may be stale, the listens forgotten (they
        are started again by ``deadline``, that of the call that reconnected)."""
        if self.cache is not None:
            self.cache.clear()
        if era_is_stateless:
            for listen in list(self._active_listens):
                listen.restart(deadline)  # before the call that reconnected goes out


def _headers_valid(tool: Tool) -> bool:
    problems = headers.tool_header_problems(tool.input_schema)
    if problems:
        logger.warning(
            "dropping tool %r: invalid x-mcp-header annotations: %s",
            tool.name,
            "; ".join(problems),
        )
    return not problems


def _mentions(schema: object, key: str) -> bool:
    """True if ``key`` is a key anywhere in the JSON value ``schema``."""
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            if key in node:
                return True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return False


@contextlib.contextmanager
def _handler_signal(
    signal: AbortSignal | None, deadline: Deadline, method: str
) -> Iterator[AbortSignal]:
    """The signal the handlers of one round get: the caller's, and the call's deadline (a
    handler waiting for a human sees it fire when the call's time is up)."""
    if deadline.at == math.inf:
        yield signal or AbortController().signal
        return
    controller = AbortController()
    remove = signal.on_abort(controller.abort) if signal is not None else None
    # A timer only for the rounds that run handlers under a deadline, joined before the call
    # goes on: no thread outlives the round.
    timer = threading.Timer(
        max(deadline.at - time.monotonic(), 0.0),
        controller.abort,
        args=(deadline.expired(method, "the call's deadline passed while its handlers ran"),),
    )
    timer.name = "mcp-sync-call-deadline"
    timer.daemon = True
    timer.start()
    try:
        yield controller.signal
    finally:
        timer.cancel()
        timer.join()
        if remove is not None:
            remove()


def authorization_context(transport: object, extra_headers: Mapping[str, str]) -> str | None:
    """A digest of the credentials a request through ``transport`` carries (the transport's
    static headers, its auth provider's token, the request's ``extra_headers``): the
    authorization context a ``"private"`` cached result belongs to. A transport without any
    (stdio, in-memory) has one context, ``""``; None when the provider fails (nothing private
    is then served or kept)."""
    headers = {**dict(getattr(transport, "headers", None) or {}), **extra_headers}
    # The HTTP transports' provider is not public API; its token() is called before every
    # request anyway ("should be cheap"), so asking it once more per cacheable call costs
    # what the request itself would.
    auth = getattr(transport, "_auth", None)
    if not headers and auth is None:
        return ""
    try:
        token = auth.token() if auth is not None else None
    except Exception:  # the request itself will say what is wrong with the provider
        return None
    material = json.dumps([sorted((str(k).lower(), str(v)) for k, v in headers.items()), token])
    return hashlib.sha256(material.encode()).hexdigest()


def listen_filters(
    tools: bool, prompts: bool, resources: bool, uris: Iterable[str]
) -> dict[str, Any]:
    """The ``notifications`` filter of a ``subscriptions/listen`` request."""
    filters: dict[str, Any] = {}
    if tools:
        filters["toolsListChanged"] = True
    if prompts:
        filters["promptsListChanged"] = True
    if resources:
        filters["resourcesListChanged"] = True
    uri_list = list(uris)
    if uri_list:
        filters["resourceSubscriptions"] = uri_list
    return filters


class StatelessListen:
    """One ``subscriptions/listen`` request, re-issued when its stream drops.

    Its notifications carry its id in ``_meta`` (stdio) or arrive on its response stream
    (HTTP); the era object routes them here by that id.
    """

    def __init__(
        self, era: StatelessEra, filters: dict[str, Any], callback: NotificationCallback
    ) -> None:
        self._era = era
        self._link = era._link
        self._filters = filters
        self._callback = callback
        self._pending: PendingRequest | None = None
        self._acknowledged = threading.Event()
        self._cancelled = False

    def start(self, deadline: Deadline, limit: float | None = None) -> None:
        """Send the request and wait for the server's acknowledgement, by ``deadline`` (that
        of the call that listens, or recovers), or ``limit`` seconds if that ends sooner.
        The request itself stays open (no deadline): it lasts until it is cancelled."""
        self._acknowledged.clear()
        session = self._link.connected_session(deadline)
        self._era._active_listens.add(self)
        params = stateless.with_meta({"notifications": self._filters}, self._era.meta(LISTEN))

        def file(pending: PendingRequest) -> None:  # (its acknowledgement may come first)
            self._pending = pending
            self._era._listens[pending.id] = self

        try:
            pending = session.begin(Outgoing(LISTEN, params, Deadline(None)), file)
        except BaseException:
            if self._pending is not None:
                self._era._listens.pop(self._pending.id, None)
            raise
        pending.future.add_done_callback(lambda _f: self._ended(pending))
        wait = deadline.left() if limit is None else deadline.within(limit)
        acknowledged = self._acknowledged.wait(None if wait == math.inf else wait)
        if not acknowledged and not pending.future.done():
            self.cancel()
            if deadline.passed():
                raise deadline.expired(LISTEN, "the server did not acknowledge it")
            raise RequestTimeout(LISTEN, wait)
        if pending.future.done() and not self._acknowledged.is_set():
            error = pending.future.exception()
            raise (
                error
                if error is not None
                else ProtocolError("subscriptions/listen ended before it was acknowledged")
            )

    def deliver(self, notification: Notification) -> None:
        """Route one notification of this subscription (reader thread for the ack)."""
        if notification.method == ACKNOWLEDGED:
            self._acknowledged.set()

    def notify_user(self, notification: Notification) -> None:
        """Hand a notification to the user's callback (dispatcher thread)."""
        if notification.method != ACKNOWLEDGED and not self._cancelled:
            self._callback(notification)

    def _ended(self, pending: PendingRequest) -> None:
        self._era._listens.pop(pending.id, None)
        try:
            connected = self._link.state == "connected"
        except ReferenceError:  # ended by the finaliser of a client dropped unclosed
            return
        if self._cancelled or not connected:
            return
        error = pending.future.exception()
        if not isinstance(error, TransportError):
            return  # cancelled by us, refused, or ended by the server with a result
        logger.debug("subscriptions/listen dropped (%s); listening again", error)
        self._link.submit(self._restart)

    def restart(self, deadline: Deadline) -> None:
        """Listen again (after the client reconnected, by the ``deadline`` of the call that
        did, and within ``request_timeout``: a side task of that call): the server forgot the
        old request."""
        if not self._cancelled:
            self._restart(deadline, self._link.request_timeout)

    def _restart(self, deadline: Deadline | None = None, limit: float | None = None) -> None:
        if deadline is None:  # (after a drop, on the dispatcher thread: a call of its own)
            link = self._link
            deadline = call_deadline(
                None, link.max_total_timeout, what=LISTEN, default=link.request_timeout
            )
        try:
            self.start(deadline, limit)
        except McpError as exc:
            logger.warning("could not listen again after a drop: %s", exc)

    def cancel(self) -> None:
        """End the subscription: ``notifications/cancelled`` on stdio, stream closed on HTTP."""
        self._cancelled = True
        self._era._active_listens.discard(self)
        pending, self._pending = self._pending, None
        try:
            session = self._link.current_session()
        except ReferenceError:  # the client was dropped, and its connection closed
            return
        if pending is not None and session is not None and not session.closed:
            session.cancel(pending, "unsubscribed")
