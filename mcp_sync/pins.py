"""Pinned tool definitions: a server's tools as first seen, and what changed since.

A server can change a tool's description or schema after the user (or a reviewer) approved
it. With ``Client(pin=...)`` the client keeps a fingerprint of each tool's definition (its
name, title, description, input and output schemas and annotations, as canonical JSON,
SHA-256) from the first listing, in a file or in memory; every later listing (after
``notifications/tools/list_changed``, a reconnect or a recovery) is compared with it, and a
call to a tool whose definition differs is stopped before it is sent:

- ``"raise"`` (the default): :class:`~mcp_sync.errors.ToolChanged`, naming the tool and
  showing a diff; ``list_tools()`` raises it too, for every tool that changed, so a changed
  description never reaches a model;
- ``"warn"``: a :class:`~mcp_sync.errors.ToolChangedWarning` once per change, and the call
  goes ahead; the pins are kept;
- ``"accept"``: the new definition replaces the pin (logged), and the call goes ahead.

New and removed tools are reported the same way. The pin file is JSON, written whole to a
temporary file and renamed over the old one (never half-written), under a lock on a
``.lock`` file beside it, so clients in several processes can share one file. One pin file
is for one server: ``mcp-sync pin`` (or :func:`record`) writes or refreshes it.

A missing pin file means nothing is pinned yet; ``{"tools": {}}`` pins "no tools", so a tool
that appears later is new. Checking reads the file only (the lock is taken to write), so a
user who may read a pin file but not write it can check against it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ._rules.warn import warn
from .errors import ConfigError, ToolChanged, ToolChangedWarning
from .protocol.types import Tool
from .terminal import safe

__all__ = ["PinSource", "Pins", "ToolChange", "definition", "fingerprint", "record"]

logger = logging.getLogger("mcp_sync.pins")

Policy = Literal["raise", "warn", "accept"]
ChangeKind = Literal["changed", "added", "removed"]
FORMAT = 1
#: The fields of a tool that are pinned (wire names); ``_meta`` and icons are not.
PINNED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


@dataclass(frozen=True)
class Pins:
    """Where the pins live and what a change does: ``Client(pin=Pins("tools.pins.json"))``.

    ``path`` None keeps the pins in memory for the client's lifetime. ``on_change`` is
    ``"raise"``, ``"warn"`` or ``"accept"`` (see :mod:`mcp_sync.pins`).
    """

    path: str | os.PathLike[str] | None = None
    on_change: Policy = "raise"

    def __post_init__(self) -> None:
        if self.on_change not in ("raise", "warn", "accept"):
            raise ValueError(
                f"on_change must be 'raise', 'warn' or 'accept', not {self.on_change!r}"
            )


#: What ``Client(pin=...)`` takes: a path (a pin file), True (in memory), a :class:`Pins`.
PinSource = Pins | str | os.PathLike[str] | bool | None


@dataclass(frozen=True)
class ToolChange:
    """One tool that differs from its pin: ``kind`` is ``"changed"``, ``"added"`` (not
    pinned) or ``"removed"`` (pinned, no longer listed); ``diff`` a unified diff of the
    pretty-printed definitions, fit for a terminal (:func:`mcp_sync.terminal.safe`): the
    name and every character that is not printable shown as escapes (``\\u202e``), each
    line at most :data:`~mcp_sync.terminal.LIMIT` characters."""

    name: str
    kind: ChangeKind
    diff: str
    #: The definition now listed (None when removed).
    new: dict[str, Any] | None = None

    @property
    def summary(self) -> str:
        verb = {"changed": "changed since it was pinned", "added": "is new: it was not pinned"}
        return f"tool {self.name!r} " + verb.get(self.kind, "was pinned but is no longer listed")


def definition(tool: Tool) -> dict[str, Any]:
    """The pinned part of a tool's definition, as wire JSON."""
    wire = tool.to_wire()
    return {key: wire[key] for key in PINNED_FIELDS if wire.get(key) is not None}


def fingerprint(tool: Tool | Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the tool's pinned definition as canonical JSON (sorted keys, no
    spaces, UTF-8)."""
    value = definition(tool) if isinstance(tool, Tool) else dict(tool)
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class _Lister(Protocol):
    def list_tools(self, *, timeout: float | None = None) -> list[Tool]: ...


def record(client: _Lister, path: str | os.PathLike[str], *, timeout: float | None = None) -> int:
    """List ``client``'s tools and write them as the pins of ``path``, replacing what it
    held (what ``mcp-sync pin`` does). Returns how many tools were pinned."""
    tools = client.list_tools(timeout=timeout)
    store = _FileStore(Path(path))
    with store.locked():
        store.write({tool.name: _entry(tool) for tool in tools})
    return len(tools)


# -- the state behind one client's pins ------------------------------------------------------


def pin_book(source: PinSource) -> PinBook | None:
    """The book for ``Client(pin=source)``, or None when pinning is off."""
    if source is None or source is False:
        return None
    if source is True:
        return PinBook(Pins())
    if isinstance(source, Pins):
        return PinBook(source)
    if isinstance(source, (str, os.PathLike)):
        return PinBook(Pins(source))
    raise TypeError(f"pin= takes a path, True or a Pins, not {type(source).__name__}")


class PinBook:
    """One client's pins, compared with each listing."""

    def __init__(self, pins: Pins) -> None:
        self.pins = pins
        self._store: _FileStore | _MemoryStore = (
            _FileStore(Path(pins.path)) if pins.path is not None else _MemoryStore()
        )
        self._lock = threading.Lock()
        self._warned: set[tuple[str, str]] = set()

    def check(self, tools: Sequence[Tool], only: str | None = None) -> None:
        """Compare ``tools`` (a whole listing) with the pins, for every tool or ``only`` the
        one named; pin them all if nothing is pinned yet. Applies the policy."""
        with self._lock:
            changes = self._settle(tools, only, write=False)
            if changes is None:  # the pins must be written: again, under the store's lock
                with self._store.locked():
                    changes = self._settle(tools, only, write=True)
            if not changes:
                return
            if self.pins.on_change == "raise":
                raise ToolChanged(changes, self._where)
        for change in changes:
            key = (change.name, fingerprint(change.new) if change.new else "removed")
            if key not in self._warned:
                self._warned.add(key)
                warn(ToolChangedWarning(str(ToolChanged([change], self._where))))

    def _settle(
        self, tools: Sequence[Tool], only: str | None, *, write: bool
    ) -> list[ToolChange] | None:
        """The changes left to report once a first listing is pinned or, with ``"accept"``,
        the changes are; None (with ``write`` False) when that needs a write. Checking needs
        only read access to the pin file: its lock is taken for writing only."""
        pinned = self._store.read()
        if pinned is None:  # nothing pinned yet (an empty pin set is a pin: "no tools")
            if write:
                self._store.write({tool.name: _entry(tool) for tool in tools})
                return []
            return None
        changes = _changes(pinned, tools)
        if only is not None:
            changes = [change for change in changes if change.name == only]
        if not changes or self.pins.on_change != "accept":
            return changes
        if not write:
            return None
        for change in changes:
            if change.new is None:
                pinned.pop(change.name, None)
            else:
                pinned[change.name] = {"sha256": fingerprint(change.new), "definition": change.new}
        self._store.write(pinned)
        logger.info("re-pinned %s", ", ".join(change.summary for change in changes))
        return []

    @property
    def _where(self) -> str | None:
        return os.fspath(self.pins.path) if self.pins.path is not None else None


def _entry(tool: Tool) -> dict[str, Any]:
    value = definition(tool)
    return {"sha256": fingerprint(value), "definition": value}


def _pretty(value: Mapping[str, Any] | None) -> list[str]:
    if value is None:
        return []
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    # a tag character or a bidi control hidden in a description must show in the diff: every
    # character that is not printable is escaped; whole lines, so that a change far into a
    # long description is still a changed line
    return safe(text, lines=True, strict=True, limit=None).split("\n")


def _diff(name: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str:
    import difflib  # (only a tool that changed loads it)

    shown = safe(name, strict=True)  # the server chose the name: it must not rewrite the diff
    lines = difflib.unified_diff(
        _pretty(old), _pretty(new), f"pinned {shown}", f"listed {shown}", lineterm=""
    )
    return "\n".join(safe(line) for line in lines)  # each line bounded, once compared


def _changes(pinned: Mapping[str, Any], tools: Sequence[Tool]) -> list[ToolChange]:
    changes: list[ToolChange] = []
    listed = {tool.name: definition(tool) for tool in tools}
    for name, now in listed.items():
        entry = pinned.get(name)
        if entry is None:
            changes.append(ToolChange(name, "added", _diff(name, None, now), now))
        elif entry["sha256"] != fingerprint(now):
            before = entry.get("definition")
            changes.append(ToolChange(name, "changed", _diff(name, before, now), now))
    for name, entry in pinned.items():
        if name not in listed:
            changes.append(ToolChange(name, "removed", _diff(name, entry.get("definition"), None)))
    return changes


# -- where pins are kept ---------------------------------------------------------------------


class _MemoryStore:
    def __init__(self) -> None:
        self._pins: dict[str, Any] | None = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        yield  # the book's own lock is enough within one process

    def read(self) -> dict[str, Any] | None:
        return None if self._pins is None else dict(self._pins)

    def write(self, pins: dict[str, Any]) -> None:
        self._pins = dict(pins)


class _FileStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold an exclusive lock on ``<file>.lock`` (the pin file itself is replaced by
        rename, so a lock on it would be a lock on an old inode)."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a+b") as handle:
            _lock(handle.fileno())
            try:
                yield
            finally:
                _unlock(handle.fileno())

    def read(self) -> dict[str, Any] | None:
        """The pins, or None when the file does not exist (nothing pinned yet)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.path}: cannot read the pin file ({exc})") from None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"{self.path}: not a pin file (invalid JSON: {exc})") from None
        tools = data.get("tools") if isinstance(data, dict) else None
        if not isinstance(tools, dict) or not all(
            isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
            for entry in tools.values()
        ):
            raise ConfigError(
                f'{self.path}: not a pin file (want {{"tools": {{name: {{"sha256"...}}}}}})'
            )
        return tools

    def write(self, pins: dict[str, Any]) -> None:
        """Write the file whole beside it and rename it over the old one. A new pin file
        gets 0666 less the umask, as any file the user makes (pins are no secret, and other
        users may check against them); a rewritten one keeps its mode."""
        text = json.dumps({"mcp_sync_pins": FORMAT, "tools": pins}, indent=2, sort_keys=True)
        try:
            mode: int | None = stat.S_IMODE(os.stat(self.path).st_mode)
        except FileNotFoundError:
            mode = None
        temporary = self.path.with_name(f".{self.path.name}.{secrets.token_hex(8)}")
        try:
            # (not tempfile.mkstemp: its files are 0600 whatever the umask)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


try:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # Windows
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
