"""The two descriptors :class:`~mcp_sync.client.Client` is built from besides its methods.

- :class:`Option`: a client option its connection keeps (``client.request_timeout``), read and
  set through the client.
- :class:`Moved`: a method that moved to a namespace (``client.get_task`` is now
  ``client.tasks.get``); the old name still works, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Generic, TypeVar, overload

from .._rules.warn import REMOVED_IN, deprecated

__all__ = ["Moved", "Option"]


_V = TypeVar("_V")


class Option(Generic[_V]):
    """A client option: the field of the same name of its connection's frozen
    :class:`~mcp_sync._connection.options.ConnectionOptions` (setting it swaps in a new value)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, client: None, owner: type) -> Option[_V]: ...

    @overload
    def __get__(self, client: object, owner: type) -> _V: ...

    def __get__(self, client: object, owner: type) -> _V | Option[_V]:
        if client is None:
            return self
        return getattr(client._connection.options, self._name)  # type: ignore[attr-defined,no-any-return]

    def __set__(self, client: object, value: _V) -> None:
        connection = client._connection  # type: ignore[attr-defined]
        connection.options = replace(connection.options, **{self._name: value})


class Moved:
    """The old name of a method now at ``client.<namespace>.<name>``."""

    def __init__(self, namespace: str, name: str) -> None:
        self._path = (namespace, name)
        self.__doc__ = f"Deprecated (goes in {REMOVED_IN}): use ``client.{namespace}.{name}``."

    def __set_name__(self, owner: type, old: str) -> None:
        self._old = old

    def __get__(self, client: object, owner: type) -> Any:
        if client is None:
            return self
        namespace, name = self._path
        deprecated(f"client.{self._old} is now client.{namespace}.{name}")
        return getattr(getattr(client, namespace), name)
