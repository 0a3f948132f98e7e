"""The tools of one connection: listing, calling, and checking a result against its tool.

The tools last listed are kept by name, for ``call_tool(validate=True)`` to find a tool's
``outputSchema`` without listing again; they are forgotten when the server says its tools
changed and when the connection is made again. In the stateless era (2026-07-28) a listing
keeps only the tools whose parameter-header annotations are valid, and a call the server
refuses because those headers no longer match the tool is sent once more after listing again.

With pins (``Client(pin=...)``, :mod:`mcp_sync.pins`) every listing is compared with them, and
a call to a tool not listed since the tools were forgotten lists them first: a definition that
changed after ``list_changed``, a reconnect or a recovery is caught before the call is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._connection.connection import Connection, ProgressHandler
from .._connection.lifecycle import weak_callback
from .._rules.deadline import call_deadline, under
from ..abort import AbortSignal
from ..backoff import Backoff
from ..errors import RpcError
from ..pins import PinSource, pin_book
from ..protocol import methods, stateless
from ..protocol.types import CallToolResult, Tool
from . import calls as _calls

#: A ``tools/call`` refused for ``Mcp-Param-*`` headers the server no longer expects (the
#: tool's ``x-mcp-header`` annotations changed since it was listed) is sent once more, at once,
#: after listing the tools again.
RELIST_ON_HEADER_MISMATCH = Backoff(max_retries=1, initial_delay=0.0, jitter=0.0)

__all__ = ["PinSource", "Tools"]


class Tools:
    """``tools/list`` and ``tools/call`` over one connection, and the tools last listed."""

    def __init__(self, connection: Connection, pin: PinSource = None) -> None:
        self._connection = connection
        self._listed: dict[str, Tool] = {}
        self._fresh = False  # _listed is the server's listing since the last forget
        self._verified: set[str] = set()  # names of _listed checked against the pins
        self._pins = pin_book(pin)
        # Weak: the session's threads reach these, and must not keep the client alive.
        connection.on_notification("notifications/tools/list_changed", weak_callback(self._forget))
        connection.on_reconnect(weak_callback(self._forget))

    def _fetch(
        self,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
    ) -> list[Tool]:
        connection = self._connection
        tools: list[Tool] = _calls.every(
            connection, methods.TOOLS_LIST, timeout, signal, on_progress
        )
        if connection.is_stateless:
            tools = connection.stateless.accept_tools(tools)
        self._listed = {tool.name: tool for tool in tools}
        self._fresh = True
        self._verified = set()
        return tools

    def check_pinned(self, name: str, timeout: float | None, signal: AbortSignal | None) -> None:
        """Raise (or warn, or re-pin) before calling ``name`` if it differs from its pin (no
        pins: nothing to check)."""
        if self._pins is None:
            return
        # A lost connection is healed by the listing, which then comes from the new server
        if not self._fresh or self._connection.state != "connected":
            self._fetch(timeout, signal, None)
        elif name in self._verified:
            return  # this listing's tool was checked: no file read, no hashing, per call
        listed = self._listed
        self._pins.check(list(listed.values()), only=name)
        if listed is self._listed:
            self._verified.add(name)

    def list(
        self,
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
    ) -> list[Tool]:
        """Every tool the server offers (all pages); with pins, checked against them."""
        tools = self._fetch(timeout, signal, on_progress)
        if self._pins is not None:
            self._pins.check(tools)
        return tools

    def call(
        self,
        params: Mapping[str, Any],
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
        validate: bool,
    ) -> CallToolResult:
        """``tools/call`` with ``params``; ``validate`` checks the structured content. The
        listings it may need (for the pins, for changed headers, for the output schema) and
        the call share one deadline, ``timeout`` from now."""
        connection = self._connection
        options = connection.options
        deadline = call_deadline(
            timeout, options.max_total_timeout, what="tools/call", default=options.request_timeout
        )
        with under(deadline):
            return self._call(params, timeout, signal, on_progress, validate)

    def _call(
        self,
        params: Mapping[str, Any],
        timeout: float | None,
        signal: AbortSignal | None,
        on_progress: ProgressHandler | None,
        validate: bool,
    ) -> CallToolResult:
        connection = self._connection
        if self._pins is not None:
            self.check_pinned(params["name"], timeout, signal)
        policy = RELIST_ON_HEADER_MISMATCH
        while True:
            try:
                result = _calls.call(
                    connection, methods.TOOLS_CALL, params, timeout, signal, on_progress
                )
                break
            except RpcError as exc:
                policy = policy.increment()
                if policy.is_exhausted() or exc.code != stateless.HEADER_MISMATCH:
                    raise
                if not connection.is_stateless:
                    raise
                # The tool's x-mcp-header annotations changed since we listed it: list, retry.
                self._fetch(timeout, signal, None)
                if self._pins is not None:
                    self._pins.check(list(self._listed.values()), only=params["name"])
        if validate and not result.is_error:
            self._validate(params["name"], result, timeout)
        return result

    def _validate(self, name: str, result: CallToolResult, timeout: float | None) -> None:
        from ..protocol.validation import validate_structured

        tool = self._listed.get(name)
        if tool is None:
            self._fetch(timeout, None, None)
            tool = self._listed.get(name)
        if tool is not None and tool.output_schema is not None:
            validate_structured(name, tool.output_schema, result.structured_content)

    def _forget(self, _event: object = None) -> None:
        self._listed = {}
        self._fresh = False
