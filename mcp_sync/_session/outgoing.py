"""One request on its way down, as one value (:class:`Outgoing`), and what its transport is
told about it (:func:`message_options`).

The connection makes an :class:`Outgoing` once, where the user's call enters it
(:meth:`~mcp_sync._connection.connection.Connection.request`): the method and its row in
:mod:`mcp_sync.protocol.methods`, the params (a copy), the call's
:class:`~mcp_sync._rules.deadline.Deadline`, its abort signal, its progress callback, and the
:func:`~mcp_sync.extra_headers` in force on the caller's thread. Recovery, the era and the
session pass it down whole; a layer that changes something sends a new one
(:meth:`Outgoing.with_params`: the 2026-07-28 era's ``_meta`` and a tool call's
``Mcp-Param-*`` headers, an ``input_required`` round's answers, the tracing hook's context). A
layer that needs one field reads it from the value, never works it out again.

Every message the session sends gets its :class:`MessageOptions` from :func:`message_options`:
the version and era it is sent at (the session's, or a handshake request's own), the facts of
its method's row (it may be sent twice; it starts a session), its headers (a tool call's
``Mcp-Param-*`` over the extra headers), whether it asked for progress, and whether anyone
waits for it (a notification or an answer opens no sign-in), so that no transport reads a
method name.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from .._rules.deadline import Deadline
from ..abort import AbortSignal
from ..protocol import methods
from ..protocol.headers import merge
from ..transports.base import MessageOptions
from .extra_headers import current as current_extra_headers
from .pending import ProgressCallback

__all__ = ["Outgoing", "message_options"]

_NONE: Mapping[str, str] = MappingProxyType({})
# methods.method(), without its frame (0.6k instructions a request): a name is a str here.
_ROWS, _NO_FACTS = methods.METHODS, methods.method(None)


class Outgoing:
    """One request, from the user's call down to the transport (see the module docstring).

    Made on the thread of the call (``Outgoing(method, params, deadline, ...)``), which gives
    it the method's row and the extra headers in force there. Immutable: every field is
    ``Final`` (``mypy --strict`` refuses an assignment), and a layer that changes the request
    sends :meth:`with_params` instead. (Not a frozen dataclass: its ``object.__setattr__`` per
    field cost a request 12k instructions more, 12%; nor a NamedTuple: 1k to 3k more, to make
    and to read; ``python -m bench.instructions``.)"""

    __slots__ = (
        "at",
        "deadline",
        "extra_headers",
        "headers",
        "method",
        "on_progress",
        "params",
        "row",
        "signal",
    )

    def __init__(
        self,
        method: str,
        params: dict[str, Any] | None,
        deadline: Deadline,
        signal: AbortSignal | None = None,
        on_progress: ProgressCallback | None = None,
        at: MessageOptions | None = None,
        # (not keyword-only: a keyword-only default is looked up by name on every call)
        row: methods.Method[Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        headers: Mapping[str, str] = _NONE,
    ) -> None:
        #: The method's name, as sent (a method the table lacks has a row of no facts).
        self.method: Final = method
        #: Its row in :mod:`mcp_sync.protocol.methods`: everything that depends on the method.
        self.row: Final = _ROWS.get(method, _NO_FACTS) if row is None else row
        self.params: Final = params
        #: The user call's deadline: the write, the answer and every round wait by it.
        self.deadline: Final = deadline
        self.signal: Final = signal
        #: Called with each ``notifications/progress`` params for it (dispatcher thread).
        self.on_progress: Final = on_progress
        #: The version and era it is sent at instead of the session's (a handshake request:
        #: ``initialize`` at none, ``server/discover`` at the version it offers).
        self.at: Final = at
        #: The :func:`~mcp_sync.extra_headers` in force where the call was made.
        self.extra_headers: Final = (
            current_extra_headers() if extra_headers is None else extra_headers
        )
        #: Its own headers (a tool call's ``Mcp-Param-*``), which the extra ones never
        #: override.
        self.headers: Final = headers

    def with_params(
        self, params: dict[str, Any] | None, headers: Mapping[str, str] | None = None
    ) -> Outgoing:
        """This request with other ``params`` (and ``headers``, if given): what a layer that
        changes it sends down (the era's ``_meta``, a round's answers, a trace context)."""
        return Outgoing(
            self.method,
            params,
            self.deadline,
            self.signal,
            self.on_progress,
            self.at,
            row=self.row,
            extra_headers=self.extra_headers,
            headers=self.headers if headers is None else headers,
        )

    def __repr__(self) -> str:
        return f"<Outgoing {self.method}>"


def message_options(
    at: MessageOptions | None,
    row: methods.Method[Any] = _NO_FACTS,
    headers: Mapping[str, str] = _NONE,
    extra: Mapping[str, str] = _NONE,
    progress: bool = False,
    attended: bool = True,
    opens_session: bool = False,
) -> MessageOptions | None:
    """The options of one message, the one place they are made: sent at ``at``'s version and
    era (its ``version`` and ``standalone``; None: at none), with what ``row`` says of its
    method (``safe_to_resend``, ``begins_session``), ``headers`` over ``extra``, and
    ``streams_progress``, ``interactive_auth`` (``attended``) and ``opens_session``.

    ``at`` itself when nothing is added (a tool call, most of all): no allocation per call.
    """
    if headers or extra or progress:
        # (the extra headers themselves when alone: they own their secrets' redaction)
        own = merge(dict(extra), headers) if extra and headers else headers or extra
        return _made(at, row, own, progress, attended, opens_session)
    if attended and not (row.reads_only or row.begins_session or opens_session):
        return at
    # The same few flags on a session's options, for every tools/list and every answer:
    # made once per session and kind, not per message.
    key = (id(at), row.reads_only, row.begins_session, attended, opens_session)
    known = _DERIVED.get(key)
    if known is not None and known[0] is at:
        return known[1]
    options = _made(at, row, _NONE, False, attended, opens_session)
    if len(_DERIVED) >= 256:
        _DERIVED.clear()  # (options of sessions long gone)
    _DERIVED[key] = (at, options)
    return options


def _made(
    at: MessageOptions | None,
    row: methods.Method[Any],
    headers: Mapping[str, str],
    progress: bool,
    attended: bool,
    opens_session: bool,
) -> MessageOptions:
    base = _AT_NONE if at is None else at
    return MessageOptions(
        version=base.version,
        standalone=base.standalone,
        headers=headers,
        opens_session=opens_session,
        streams_progress=progress,
        interactive_auth=attended,
        begins_session=row.begins_session,
        safe_to_resend=row.reads_only,
    )


_AT_NONE = MessageOptions()
_Key = tuple[int, bool, bool, bool, bool]
_DERIVED: dict[_Key, tuple[MessageOptions | None, MessageOptions]] = {}
