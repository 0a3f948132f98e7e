"""DPoP (RFC 9449): proof-of-possession for access tokens.

A :class:`DPoPKey` is a key pair the client keeps; every token request and every request to
the MCP server carries a fresh ``DPoP`` proof (a JWT signed by that key naming the method and
URL, with a new ``jti``). The authorization server binds the tokens it issues to the key
(``cnf.jkt``, ``token_type=DPoP``), and a stolen token is useless without the key. Resource
requests then send ``Authorization: DPoP <token>`` and a proof with ``ath``, the token's hash.

Either server may require a nonce: it answers ``use_dpop_nonce`` with a ``DPoP-Nonce`` header,
and the request is sent again with a proof carrying that nonce. Nonces are kept per origin.

Keys and signing are on ``cryptography`` (``pip install 'mcp-sync-client[oauth-jwt]'``).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..auth import UnauthorizedContext
from ._http import origin
from ._jwt import _crypto, b64url, load_private_key, sign_jwt
from .discovery import ServerMetadata

__all__ = ["DPoPKey", "authorization_headers", "note_nonce", "supported_by", "take_nonce"]

#: The JWS algorithm of generated keys (P-256 ECDSA: every DPoP server supports it).
ALGORITHM = "ES256"


class DPoPKey:
    """An EC P-256 key pair for DPoP proofs, and the nonces servers asked for.

    ``DPoPKey()`` makes a new key; :meth:`from_pem` loads one (kept with
    :meth:`private_pem`, e.g. so that tokens bound to it survive a restart). Thread-safe.
    """

    def __init__(self, private_key: Any = None) -> None:
        if private_key is None:
            _, _, ec, *_ = _crypto()
            private_key = ec.generate_private_key(ec.SECP256R1())
        self._key = private_key
        numbers = private_key.public_key().public_numbers()
        size = 32
        #: The public key as a JWK (RFC 7517), sent in every proof's header.
        self.public_jwk: dict[str, str] = {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(size, "big")),
            "y": b64url(numbers.y.to_bytes(size, "big")),
        }
        # RFC 7638: the required members, sorted, no whitespace
        canonical = json.dumps(
            {name: self.public_jwk[name] for name in ("crv", "kty", "x", "y")},
            separators=(",", ":"),
        )
        #: The JWK SHA-256 thumbprint (``cnf.jkt`` of tokens bound to this key).
        self.thumbprint = b64url(hashlib.sha256(canonical.encode()).digest())
        self._nonces: dict[tuple[str, str, int | None], str] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_pem(cls, pem: str | bytes) -> DPoPKey:
        """The key saved by :meth:`private_pem`."""
        return cls(load_private_key(pem))

    def private_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM (keep it as secret as a token)."""
        _, serialization, *_ = _crypto()
        data: bytes = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return data.decode("ascii")

    def __repr__(self) -> str:
        return f"<DPoPKey jkt={self.thumbprint[:8]}...>"

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request (``htm``, ``htu`` without query or fragment, ``iat``,
        a new ``jti``; ``ath`` with an access token; the origin's nonce if it set one)."""
        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        nonce = self.nonce(url)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return sign_jwt(header, claims, self._key, ALGORITHM)

    def nonce(self, url: str) -> str | None:
        """The last nonce the server at ``url``'s origin asked for."""
        with self._lock:
            return self._nonces.get(origin(url))

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep ``nonce`` (a ``DPoP-Nonce`` header) for ``url``'s origin; True if it is new."""
        if not nonce:
            return False
        with self._lock:
            key = origin(url)
            if self._nonces.get(key) == nonce:
                return False
            self._nonces[key] = nonce
            return True


def supported_by(server: ServerMetadata) -> bool:
    """True when ``server`` advertises DPoP with the algorithm our keys use."""
    algorithms = server.raw.get("dpop_signing_alg_values_supported")
    return isinstance(algorithms, list) and ALGORITHM in algorithms


def authorization_headers(
    token: str, token_type: str, key: DPoPKey | None, method: str, url: str
) -> dict[str, str]:
    """``Authorization: Bearer``, or for a DPoP-bound token ``Authorization: DPoP`` and a
    fresh proof for this request."""
    if token_type == "DPoP" and key is not None:
        return {
            "Authorization": f"DPoP {token}",
            "DPoP": key.proof(method, url, access_token=token),
        }
    return {"Authorization": f"Bearer {token}"}


def note_nonce(key: DPoPKey | None, url: str, headers: Mapping[str, str]) -> None:
    """Keep the nonce a server hands out with any answer (RFC 9449 sections 8.2 and 9)."""
    if key is not None:
        key.remember_nonce(url, headers.get("DPoP-Nonce"))


def take_nonce(key: DPoPKey | None, ctx: UnauthorizedContext) -> bool:
    """A resource server's ``use_dpop_nonce`` challenge: keep its nonce; True to retry."""
    nonce = ctx.headers.get("DPoP-Nonce")
    if key is None or not nonce:
        return False
    key.remember_nonce(ctx.url, nonce)
    return True
