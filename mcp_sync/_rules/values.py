"""The check of a string, an environment or a callback given as an option, where it is given
(as :mod:`.numbers` checks numbers): what the operating system or a thread would otherwise
refuse later, naming nothing (``ValueError: embedded null byte`` from ``Popen``, a
``TypeError`` in the stderr reader), is refused at once, naming the option. A value is never
quoted: an argument or an environment value may be a secret."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["callback", "environment", "os_text"]

F = TypeVar("F", bound=Callable[..., Any])


def os_text(value: object, what: str) -> str:
    """``value`` (a string or an ``os.PathLike``) as a string a system call takes: no NUL."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    if "\0" in text:
        raise ValueError(f"{what} holds a NUL character, which the operating system refuses")
    return text


def environment(env: Mapping[str, str | None] | None, what: str) -> dict[str, str | None] | None:
    """``env`` as a new dict, each name a non-empty string without ``=`` or NUL, each value
    a string without NUL (or None: unset)."""
    if env is None:
        return None
    if not isinstance(env, Mapping):
        raise TypeError(f"{what} must be a mapping of names to strings, not {type(env).__name__}")
    checked: dict[str, str | None] = {}
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise ValueError(f"{what}: {name!r} is not a variable's name")
        checked[name] = None if value is None else os_text(value, f"{what}[{name!r}]")
    return checked


def callback(value: F | None, what: str) -> F | None:
    """``value`` if it can be called (or None)."""
    if value is not None and not callable(value):
        raise TypeError(f"{what} must be callable (or None), not {type(value).__name__}")
    return value
