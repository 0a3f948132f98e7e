"""A client's options: declared once (:class:`ClientOptions`), run by as one frozen value
(:class:`ConnectionOptions`).

:class:`ClientOptions` names and types every keyword option of ``Client()``; ``connect()``,
``ClientGroup.add``, the config's ``connect`` methods and the pytest fixtures take them as
``**Unpack[ClientOptions]``, so none of them lists an option again. ``Client.__init__`` spells
each out with its default and its docstring bullet (the API a reader sees), and
:class:`ConnectionOptions` is what they become, handed to the
:class:`~mcp_sync._connection.connection.Connection` as one value, built by keyword. It is
frozen: setting an option on a client (``client.request_timeout = 5``) swaps in a new value,
so a thread reading the options never sees half of a change. ``tests/test_options.py``
fails, naming the option, until the keyword, its docstring bullet, this declaration, the field
and the functions that pass options on agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from .._rules.numbers import number, whole
from .._rules.warn import deprecated
from ..backoff import Backoff
from ..pins import PinSource
from ..protocol.types import Implementation, Root

__all__ = ["ClientOptions", "CloseCallback", "ConnectionOptions"]

#: ``callback(cause)``: the connection ended; ``cause`` is None after ``close()``.
CloseCallback = Callable[[BaseException | None], None]


class ClientOptions(TypedDict, total=False):
    """The keyword options of :class:`~mcp_sync.Client`, as the functions that pass them on
    take them (``connect``, ``ClientGroup.add``, ``connect_all``, ``ServerConfig.connect``, the
    pytest fixtures); see ``Client`` for what each does. Type your own wrapper's options with
    it::

        def my_connect(url: str, **options: Unpack[mcp_sync.ClientOptions]) -> mcp_sync.Client:
            return mcp_sync.connect(url, headers={"X-Team": "a"}, **options)
    """

    name: str
    version: str
    title: str | None
    capabilities: Mapping[str, Any] | None
    protocol_version: str
    request_timeout: float
    max_total_timeout: float | None
    roots: (
        Sequence[Root | str | os.PathLike[str]]
        | Callable[[], Sequence[Root | str | os.PathLike[str]]]
        | None
    )
    strict_capabilities: bool
    protocol: str
    probe_timeout: float
    max_input_rounds: int
    cache: bool
    recovery: Backoff | bool | None
    auto_reinitialize: bool
    on_close: Callable[[BaseException | None], None] | None
    pin: PinSource


@dataclass(frozen=True, kw_only=True)
class ConnectionOptions:
    """What ``Client()``'s keywords become (see :class:`~mcp_sync.Client` for each).

    ``client_info`` is ``name``, ``version`` and ``title``; ``handshake_version`` is
    ``protocol_version``; ``recovery`` is the policy (``recovery=True`` and the older
    ``auto_reinitialize=True`` are a default :class:`Backoff`). ``roots`` and
    ``capabilities`` belong to the client's handlers and ``pin`` to its tools, not here.
    """

    client_info: Implementation
    protocol: str  # "auto", "handshake" or a version to pin
    handshake_version: str
    request_timeout: float
    max_total_timeout: float | None
    strict_capabilities: bool
    probe_timeout: float
    max_input_rounds: int
    cache: bool
    recovery: Backoff | None
    on_close: CloseCallback | None

    def __post_init__(self) -> None:  # so at Client() and at client.<option> = value alike
        number(self.request_timeout, "Client: request_timeout", infinite=True)
        if self.max_total_timeout is not None:
            number(self.max_total_timeout, "Client: max_total_timeout", infinite=True)
        number(self.probe_timeout, "Client: probe_timeout")
        whole(self.max_input_rounds, "Client: max_input_rounds")


def client_info(name: str, version: str, title: str | None) -> Implementation:
    """The client info sent to servers: ``title`` only when given (not ``"title": null``)."""
    if title is None:
        return Implementation(name=name, version=version)
    return Implementation(name=name, version=version, title=title)


def recovery_policy(recovery: Backoff | bool | None, auto_reinitialize: bool) -> Backoff | None:
    """``recovery=``'s policy: ``True`` (or the older ``auto_reinitialize=True``) is a default
    :class:`Backoff`; ``False`` or None is none. ``auto_reinitialize=`` warns: it goes in 0.2.0."""
    if auto_reinitialize:
        deprecated("Client(auto_reinitialize=True) is now Client(recovery=True)")
    if recovery is True or (not recovery and auto_reinitialize):
        return Backoff()
    return recovery if isinstance(recovery, Backoff) else None
