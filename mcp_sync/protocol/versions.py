"""Protocol versions this client speaks, and which era each belongs to.

The handshake era (``initialize``, sessions) covers 2024-11-05 .. 2025-11-25; the stateless
era starts with 2026-07-28.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST",
    "LATEST_HANDSHAKE",
    "STATELESS_VERSIONS",
    "SUPPORTED",
    "Era",
    "era_of",
    "is_supported",
]

Era = Literal["handshake", "stateless"]

#: Handshake-era versions, newest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Stateless-era versions, newest first (negotiated through ``server/discover``).
STATELESS_VERSIONS: tuple[str, ...] = ("2026-07-28",)

#: The version ``initialize`` offers by default (the newest a handshake can settle on).
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[0]
#: The newest version this client speaks.
LATEST = STATELESS_VERSIONS[0]
#: Every version this client speaks, newest first.
SUPPORTED: tuple[str, ...] = (*STATELESS_VERSIONS, *HANDSHAKE_VERSIONS)


def is_supported(version: object) -> bool:
    """True if ``version`` is a protocol version string this client speaks."""
    return version in SUPPORTED


def era_of(version: str) -> Era:
    """The era a protocol version belongs to."""
    return "stateless" if version >= STATELESS_VERSIONS[-1] else "handshake"


def at_least(version: str | None, minimum: str) -> bool:
    """True if ``version`` is ``minimum`` or newer (dates compare as strings)."""
    return version is not None and version >= minimum
