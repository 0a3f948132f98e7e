"""Extra HTTP headers for the requests a block of code makes (:func:`extra_headers`).

The headers live in a :class:`contextvars.ContextVar`: they follow the code that set them
(this thread, or a context copied with :func:`contextvars.copy_context`), never another
thread's calls on the same client. The session copies them into each message's
:class:`~mcp_sync.transports.base.MessageOptions` on the caller's thread, so a transport that
sends later, from its own thread, still sends them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

from .protocol.headers import merge
from .transports.base import MessageOptions

__all__ = ["current", "extra_headers", "with_extra_headers"]

_NONE: Mapping[str, str] = MappingProxyType({})
_current: ContextVar[Mapping[str, str]] = ContextVar("mcp_sync_extra_headers", default=_NONE)

#: A header name (RFC 9110's token).
_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
#: Headers the protocol sets for each message: an extra one would be overridden silently.
_PROTOCOL_OWNED = frozenset(
    {"accept", "content-type", "content-length", "host", "mcp-session-id",
     "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"}
)  # fmt: skip


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

    Raises ``ValueError`` for a name that is not an HTTP token, a value with a line break or
    NUL, or a header the protocol sets itself (``Mcp-Session-Id``, ``Content-Type``, ...).
    """
    merged = merge(dict(_current.get()), _checked(headers))
    token = _current.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Mapping[str, str]:
    """The extra headers in force here (empty outside any :func:`extra_headers` block)."""
    return _current.get()


def with_extra_headers(options: MessageOptions | None) -> MessageOptions | None:
    """``options`` with the extra headers in force added below the message's own headers
    (``Mcp-Param-*``, which they never override)."""
    extra = _current.get()
    if not extra:
        return options
    if options is None:
        return MessageOptions(headers=extra)
    return dataclasses.replace(options, headers=merge(dict(extra), options.headers))


def _checked(headers: Mapping[str, str]) -> dict[str, str]:
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"extra_headers: {name!r} is not a valid HTTP header name")
        if not isinstance(value, str):
            raise ValueError(
                f"extra_headers: the value of {name!r} must be a str, not {type(value).__name__}"
            )
        if any(c in value for c in "\r\n\0"):
            raise ValueError(
                f"extra_headers: the value of {name!r} holds a line break or NUL "
                "(it would end the header and start another)"
            )
        if name.lower() in _PROTOCOL_OWNED:
            raise ValueError(
                f"extra_headers: {name!r} is set by the protocol for each message and "
                "cannot be given here"
            )
        checked[name] = value
    return checked
