"""Walking an exception's causes: one helper for the modules that classify failures (HTTP
transports, recovery), importable by both without an import circle."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["causes_of"]


def causes_of(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it wraps (each once): the exceptions in its ``args``, its
    ``reason`` (urllib3's wrappers), ``__cause__`` and ``__context__``, followed recursively."""
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo.extend(arg for arg in item.args if isinstance(arg, BaseException))
        for attr in ("reason", "__cause__", "__context__"):
            nested = getattr(item, attr, None)
            if isinstance(nested, BaseException):
                todo.append(nested)
