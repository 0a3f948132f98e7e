"""PKCE (RFC 7636, S256 only) and the random ``state`` value."""

from __future__ import annotations

import base64
import hashlib
import secrets

__all__ = ["challenge", "new_state", "new_verifier"]


def new_verifier() -> str:
    """A code verifier: 43 characters of base64url (32 random bytes), within RFC 7636's 43..128."""
    return secrets.token_urlsafe(32)


def challenge(verifier: str) -> str:
    """The S256 code challenge: base64url(SHA-256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_state() -> str:
    """An unguessable ``state`` value for one authorization request."""
    return secrets.token_urlsafe(24)
