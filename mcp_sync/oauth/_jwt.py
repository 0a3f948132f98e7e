"""Signed JWTs: ``private_key_jwt`` client assertions (RFC 7523 section 2.2) and the signing
DPoP proofs use, on ``cryptography``.

``cryptography`` is an optional dependency (``pip install 'mcp-sync-client[oauth-jwt]'``),
imported only when an assertion is signed.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from typing import Any

__all__ = ["b64url", "client_assertion", "load_private_key", "sign_jwt"]

_HASHES = {"256": "SHA256", "384": "SHA384", "512": "SHA512"}
_EC_SIZES = {"ES256": 32, "ES384": 48, "ES512": 66}


def b64url(data: bytes) -> str:
    """Base64url without padding (JOSE)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "signed JWTs (private_key_jwt, DPoP) need the 'cryptography' package: "
            "pip install 'mcp-sync-client[oauth-jwt]'"
        ) from exc
    return hashes, serialization, ec, padding, rsa, utils


def load_private_key(private_key_pem: str | bytes) -> Any:
    """A ``cryptography`` private key from PEM (no password)."""
    _, serialization, *_ = _crypto()
    pem = private_key_pem.encode() if isinstance(private_key_pem, str) else private_key_pem
    return serialization.load_pem_private_key(pem, password=None)


def sign_jwt(header: dict[str, Any], claims: dict[str, Any], key: Any, algorithm: str) -> str:
    """A compact JWS over ``claims`` with ``header`` (``alg`` is set), signed by ``key``."""
    hashes, _, ec, padding, rsa, utils = _crypto()
    header = {**header, "alg": algorithm}
    signing_input = (
        b64url(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + b64url(json.dumps(claims, separators=(",", ":")).encode())
    ).encode("ascii")
    digest = getattr(hashes, _HASHES.get(algorithm[-3:], ""), None)
    if digest is None:
        raise ValueError(f"unsupported signing algorithm {algorithm!r}")
    if algorithm.startswith("ES") and isinstance(key, ec.EllipticCurvePrivateKey):
        der = key.sign(signing_input, ec.ECDSA(digest()))
        r, s = utils.decode_dss_signature(der)
        size = _EC_SIZES[algorithm]
        signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
    elif algorithm.startswith("RS") and isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(signing_input, padding.PKCS1v15(), digest())
    elif algorithm.startswith("PS") and isinstance(key, rsa.RSAPrivateKey):
        signature = key.sign(
            signing_input, padding.PSS(padding.MGF1(digest()), digest.digest_size), digest()
        )
    else:
        raise ValueError(f"the private key does not fit the signing algorithm {algorithm!r}")
    return signing_input.decode("ascii") + "." + b64url(signature)


def client_assertion(
    client_id: str,
    audience: str,
    private_key_pem: str | bytes,
    algorithm: str = "ES256",
    *,
    lifetime: float = 300.0,
) -> str:
    """A signed JWT with ``iss`` = ``sub`` = ``client_id`` and ``aud`` = ``audience``."""
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + int(lifetime),
        "jti": secrets.token_urlsafe(16),
    }
    return sign_jwt({"typ": "JWT"}, claims, load_private_key(private_key_pem), algorithm)
