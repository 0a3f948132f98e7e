"""What a request's method tells its transport, from the method's row in
:mod:`mcp_sync.protocol.methods`: it may be sent twice (``safe_to_resend``), it starts a session
(``begins_session``). The session adds these to the request's :class:`MessageOptions`, so that
no transport reads a method name.
"""

from __future__ import annotations

import dataclasses

from ..protocol import methods
from ..transports.base import MessageOptions

__all__ = ["for_method"]

#: The options of a session request of each method whose row asks for any (computed once).
_PLAIN = {
    row.name: MessageOptions(safe_to_resend=row.reads_only, begins_session=row.begins_session)
    for row in methods.METHODS.values()
    if row.reads_only or row.begins_session
}


def for_method(method: str, options: MessageOptions | None) -> MessageOptions | None:
    """``options`` with what the method's row tells the transport (it may be sent twice; it
    starts a session): the transport never reads the method itself."""
    row = methods.method(method)
    if not (row.reads_only or row.begins_session):
        return options
    if options is None:
        return _PLAIN[method]
    if options.safe_to_resend is row.reads_only and options.begins_session is row.begins_session:
        return options
    # A session's options live as long as it does: derive each method's once, not per call
    # (dataclasses.replace costs microseconds; every tools/list would pay them).
    key = (method, id(options))
    known = _DERIVED.get(key)
    if known is not None and known[0] is options:
        return known[1]
    derived = dataclasses.replace(
        options, safe_to_resend=row.reads_only, begins_session=row.begins_session
    )
    if len(_DERIVED) >= 256:
        _DERIVED.clear()  # (options of sessions long gone)
    _DERIVED[key] = (options, derived)
    return derived


_DERIVED: dict[tuple[str, int], tuple[MessageOptions, MessageOptions]] = {}
