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
    "MODERN_VERSIONS",
    "SUPPORTED",
    "Era",
    "era_of",
    "is_supported",
]

Era = Literal["legacy", "modern"]

#: Handshake-era versions, newest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Stateless-era versions, newest first (negotiated through ``server/discover``).
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[0]
#: The version ``initialize`` offers by default.
LATEST = LATEST_HANDSHAKE
#: Every version a handshake can settle on.
SUPPORTED: tuple[str, ...] = HANDSHAKE_VERSIONS


def is_supported(version: object) -> bool:
    """True if ``version`` is a protocol version string this client speaks."""
    return version in SUPPORTED or version in MODERN_VERSIONS


def era_of(version: str) -> Era:
    """The era a protocol version belongs to."""
    return "modern" if version >= MODERN_VERSIONS[-1] else "legacy"


def at_least(version: str | None, minimum: str) -> bool:
    """True if ``version`` is ``minimum`` or newer (dates compare as strings)."""
    return version is not None and version >= minimum
