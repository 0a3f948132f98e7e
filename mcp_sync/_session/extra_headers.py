"""Extra HTTP headers for the requests a block of code makes (:func:`extra_headers`).

The headers live in a :class:`contextvars.ContextVar`: they follow the code that set them
(this thread, or a context copied with :func:`contextvars.copy_context`), never another
thread's calls on the same client. A request takes them on the caller's thread, where it is
made (:class:`~mcp_sync._session.outgoing.Outgoing`), into its
:class:`~mcp_sync.transports.base.MessageOptions`, so a transport that sends later, from its
own thread, still sends them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

from ..protocol.headers import checked_headers, merge
from ..redaction import hold_fields

__all__ = ["current", "extra_headers"]

_NONE: Mapping[str, str] = MappingProxyType({})
_current: ContextVar[Mapping[str, str]] = ContextVar("mcp_sync_extra_headers", default=_NONE)


class _Headers(dict[str, str]):
    """A block's headers: the owner of their secrets in ``mcp_sync.redaction``, which holds
    them for as long as anything may still send them (the block, a message's options)."""


@contextmanager
def extra_headers(headers: Mapping[str, str]) -> Iterator[None]:
    """Send ``headers`` with every request made inside the ``with`` block (HTTP transports;
    stdio and in-memory ignore them), on this thread only::

        with mcp_sync.extra_headers({"X-Tenant": "acme"}):
            client.call_tool("search", {"q": "mcp"})

    Blocks nest (the inner value of a header wins). The transport's own ``headers=`` give
    way to them; the headers of the protocol (session, version, ``Mcp-Param-*``) and an auth
    provider's ``Authorization`` win over them. Without a provider, an ``Authorization``
    here is a credential for these calls alone. Cached results (2026-07-28) are kept apart
    per set of extra headers, as per credential.

    Headers are checked as a transport's ``headers=`` are
    (:func:`~mcp_sync.protocol.headers.checked_headers`): a name that is not an HTTP token, a
    framing or hop-by-hop header (``Transfer-Encoding``, ``Connection``...), one the protocol
    sets (``Mcp-Session-Id``, ``Content-Type``...), a value with a line break or a control
    character raise :class:`~mcp_sync.errors.InvalidHeaderValue` (a ``ValueError``) naming it.
    A value secret by its name (``X-Api-Key``) or marked
    :class:`~mcp_sync.redaction.Secret` is redacted from every error and log record made
    while the block lasts.
    """
    merged = merge(_Headers(_current.get()), checked_headers(headers))
    hold_fields(merged, merged)
    token = _current.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _current.reset(token)


#: ``current()``: the extra headers in force here (empty outside any :func:`extra_headers`
#: block). The context variable's own method: every request reads it.
current: Callable[[], Mapping[str, str]] = _current.get
