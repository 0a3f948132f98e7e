"""Sealing the OAuth state at rest: tokens, client secrets and DPoP keys, encrypted in the store.

A state store keeps one JSON object per MCP server: access and refresh tokens, the client
registration (with its secret), the DPoP private key, discovered metadata. Given a
:class:`Sealer`, :class:`~mcp_sync.oauth.redis_store.RedisStateStore` and
:class:`~mcp_sync.oauth.store.FileStateStore` store each object sealed instead of as plain
JSON::

    sealer = AesGcmSealer([os.environ["MY_NEW_KEY"], os.environ["MY_OLD_KEY"]])
    store = RedisStateStore("redis://cache:6379/0", sealer=sealer)

or, with no ``sealer=``, from the environment variable ``MCP_SYNC_OAUTH_KEYS`` (keys separated
by commas, newest first). :meth:`AesGcmSealer.generate_key` makes a key.

:class:`AesGcmSealer` is AES-256-GCM (``cryptography``: ``pip install
'mcp-sync-client[oauth-encryption]'``). It is chosen over Fernet because GCM authenticates
associated data: each value is bound to its server's key in the store, so a value copied
under another server's key does not open; and because each value names the key that sealed
it, so an error can say which key is missing and an operator can see what still needs the old
one. Keys rotate: the first key seals, any of them opens, and a value opened with an older key
is sealed with the newest on its next save.

A KMS plugs in as any object with ``seal`` and ``open`` (the :class:`Sealer` protocol).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from typing import Any, Protocol

from ..redaction import hold
from .errors import InvalidSealingKey, PlaintextDPoPKeyRefused, SealedStateError

__all__ = ["ENV_KEYS", "AesGcmSealer", "Sealer", "StateCodec", "default_sealer", "stored_key_id"]

#: The environment variable a store reads its keys from when given no ``sealer=``.
ENV_KEYS = "MCP_SYNC_OAUTH_KEYS"

# How a sealed value starts in the store (text: Redis values and the file's JSON strings).
_MARKER = "mcp-sync-sealed:1:"
_VERSION = 1
_KEY_ID_BYTES = 4
_NONCE_BYTES = 12
_KEY_FORMS = (base64.urlsafe_b64encode, base64.b64encode)


class Sealer(Protocol):
    """Encrypts and decrypts one state object (your KMS, or :class:`AesGcmSealer`).

    ``context`` is the state's key in the store (the MCP server URL, UTF-8): a value sealed
    under one context must not open under another (AEAD associated data, a KMS encryption
    context). ``open`` raises on a value it cannot authenticate; the store raises
    :class:`~mcp_sync.oauth.errors.SealedStateError` naming itself and the key, with your
    error as its cause (an error with a ``key_id`` attribute has it named too).
    """

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        """``plaintext`` encrypted and authenticated, bound to ``context``."""
        ...

    def open(self, sealed: bytes, context: bytes) -> bytes:
        """The plaintext :meth:`seal` was given; raises if ``sealed`` does not authenticate."""
        ...


def _aesgcm() -> Any:
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "sealing the OAuth state needs the 'cryptography' package: "
            "pip install 'mcp-sync-client[oauth-encryption]'"
        ) from exc
    return AESGCM, InvalidTag


def _key_id(key: bytes) -> bytes:
    # A digest, not the key: naming a key in an error or a log gives nothing away.
    return hashlib.sha256(b"mcp-sync oauth key id\0" + key).digest()[:_KEY_ID_BYTES]


def _decode_key(key: str | bytes, where: str) -> bytes:
    if isinstance(key, bytes) and len(key) == 32:
        return key
    text = key.decode("ascii", "replace") if isinstance(key, bytes) else key
    text = text.strip()
    try:
        raw = base64.urlsafe_b64decode(
            text.replace("+", "-").replace("/", "_") + "=" * (-len(text) % 4)
        )
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise InvalidSealingKey(
            f"{where} is not a sealing key: expected 32 bytes, base64 (as "
            "AesGcmSealer.generate_key() makes)"
        )
    return raw


class AesGcmSealer:
    """AES-256-GCM with rotating keys: ``keys`` newest first (32 bytes each, raw or base64).

    The newest key seals; any of them opens. Each sealed value carries the id of its key (a
    digest of it, :attr:`key_ids`) and is bound to its ``context``. Nonces are random (96
    bits), so rotate a key well before 2**32 saves.
    """

    def __init__(self, keys: Sequence[str | bytes], *, source: str = "keys") -> None:
        if isinstance(keys, (str, bytes)) or not keys:
            raise InvalidSealingKey(f"{source}: give a non-empty list of keys, newest first")
        decoded = [_decode_key(key, f"{source}[{index}]") for index, key in enumerate(keys)]
        self._keys: dict[bytes, bytes] = {}
        for key in decoded:
            self._keys.setdefault(_key_id(key), key)
        self._newest = _key_id(decoded[0])
        # (out of every error message and log record while this sealer lives)
        hold(self, *(encode(key).decode() for key in decoded for encode in _KEY_FORMS))
        #: The ids of the keys, newest first (hex), as errors name them.
        self.key_ids: tuple[str, ...] = tuple(kid.hex() for kid in self._keys)

    def __repr__(self) -> str:
        return f"<AesGcmSealer keys={list(self.key_ids)}>"

    @staticmethod
    def generate_key() -> str:
        """A new random key, base64url (keep it as secret as the tokens it protects)."""
        return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii")

    @classmethod
    def from_env(cls, name: str = ENV_KEYS) -> AesGcmSealer:
        """The keys in environment variable ``name``: separated by commas, newest first."""
        keys = [part for part in os.environ.get(name, "").replace(",", " ").split() if part]
        return cls(keys, source=f"${name}")

    @staticmethod
    def _header(kid: bytes) -> bytes:
        return bytes([_VERSION]) + kid

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        aesgcm, _ = _aesgcm()
        header = self._header(self._newest)
        nonce = secrets.token_bytes(_NONCE_BYTES)
        sealed: bytes = aesgcm(self._keys[self._newest]).encrypt(nonce, plaintext, header + context)
        return header + nonce + sealed

    def open(self, sealed: bytes, context: bytes) -> bytes:
        aesgcm, invalid_tag = _aesgcm()
        kid = key_id_of(sealed)
        if kid is None:
            raise SealedStateError("it is not a value AesGcmSealer sealed")
        key = self._keys.get(bytes.fromhex(kid))
        if key is None:
            raise SealedStateError(
                f"it was sealed with a key this sealer does not have (it has {list(self.key_ids)})",
                key_id=kid,
            )
        start = 1 + _KEY_ID_BYTES
        nonce, body = sealed[start : start + _NONCE_BYTES], sealed[start + _NONCE_BYTES :]
        try:
            plaintext: bytes = aesgcm(key).decrypt(nonce, body, sealed[:start] + context)
        except invalid_tag:
            raise SealedStateError(
                "it does not authenticate: tampered with, truncated, or copied from another "
                "server's entry",
                key_id=kid,
            ) from None
        return plaintext


def key_id_of(sealed: bytes) -> str | None:
    """The key id in a value :class:`AesGcmSealer` sealed, or None if it is not one."""
    if len(sealed) < 1 + _KEY_ID_BYTES + _NONCE_BYTES + 16 or sealed[0] != _VERSION:
        return None
    return sealed[1 : 1 + _KEY_ID_BYTES].hex()


def stored_key_id(stored: bytes | str) -> str | None:
    """The id of the key that sealed a value as the store holds it (what ``redis-cli GET``
    shows, or a ``FileStateStore`` entry), None if it is unsealed or not
    :class:`AesGcmSealer`'s: during a rotation, what still needs the old key."""
    text = stored.decode("ascii", "replace") if isinstance(stored, bytes) else stored
    if not text.startswith(_MARKER):
        return None
    try:
        return key_id_of(base64.urlsafe_b64decode(text[len(_MARKER) :]))
    except (binascii.Error, ValueError):
        return None


def default_sealer() -> AesGcmSealer | None:
    """An :class:`AesGcmSealer` from ``$MCP_SYNC_OAUTH_KEYS`` if it is set, else None."""
    return AesGcmSealer.from_env() if os.environ.get(ENV_KEYS, "").strip() else None


class StateCodec:
    """How a store turns a state object into what it stores, and back: plain JSON, or sealed.

    ``shared``: a store other hosts read (Redis), where a DPoP private key is refused unless
    sealed or ``allow_plaintext_dpop_key``. ``accept_plaintext``: with a sealer, also read
    values stored unsealed (a migration; they are sealed on their next save).
    """

    def __init__(
        self,
        store: object,
        sealer: Sealer | None,
        *,
        accept_plaintext: bool = False,
        shared: bool = False,
        allow_plaintext_dpop_key: bool = False,
    ) -> None:
        if sealer is not None and not (
            callable(getattr(sealer, "seal", None)) and callable(getattr(sealer, "open", None))
        ):
            raise TypeError(f"sealer= needs seal() and open() methods (a Sealer), not {sealer!r}")
        self.store = store
        self.sealer = sealer
        self.accept_plaintext = accept_plaintext
        self.shared = shared
        self.allow_plaintext_dpop_key = allow_plaintext_dpop_key

    def _error(self, key: str, reason: str, key_id: str | None) -> SealedStateError:
        return SealedStateError(reason, store=repr(self.store), key=key, key_id=key_id)

    # -- objects (FileStateStore: one item of its JSON document) -----------------------------

    def encode(self, key: str, value: dict[str, Any]) -> dict[str, Any] | str:
        """``value`` as stored: itself when not sealing, else sealed text."""
        if self.sealer is None:
            if self.shared and "dpopKey" in value and not self.allow_plaintext_dpop_key:
                raise PlaintextDPoPKeyRefused(repr(self.store), key)
            return value
        plaintext = json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
        sealed = self.sealer.seal(plaintext, key.encode())
        return _MARKER + base64.urlsafe_b64encode(sealed).decode("ascii")

    def decode(self, key: str, stored: object) -> dict[str, Any] | None:
        """The state object from what the store holds (None: nothing usable there)."""
        if isinstance(stored, dict):
            if self.sealer is not None and not self.accept_plaintext:
                raise self._error(
                    key,
                    "it is stored unsealed and this store seals; to migrate, pass "
                    "accept_plaintext=True (each value is sealed on its next save)",
                    None,
                )
            return stored
        if not isinstance(stored, str) or not stored.startswith(_MARKER):
            return None  # (absent, or garbage: as a store that never sealed reads it)
        try:
            sealed = base64.urlsafe_b64decode(stored[len(_MARKER) :])
        except (binascii.Error, ValueError):
            raise self._error(key, "its sealed text is not base64", None) from None
        if self.sealer is None:
            raise self._error(
                key,
                f"it is sealed and this store has no sealer: pass sealer= or set ${ENV_KEYS}",
                key_id_of(sealed),
            )
        try:
            plaintext = self.sealer.open(sealed, key.encode())
        except SealedStateError as exc:
            raise self._error(key, exc.reason, exc.key_id) from None
        except Exception as exc:
            raise self._error(
                key,
                f"{self.sealer!r} could not open it: {type(exc).__name__}: {exc}",
                getattr(exc, "key_id", None),
            ) from exc
        try:
            value = json.loads(plaintext)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise self._error(key, "it opened, but not to a JSON object", None)
        return value

    # -- text (RedisStateStore: one value per key) ------------------------------------------

    def to_text(self, key: str, value: dict[str, Any]) -> str:
        encoded = self.encode(key, value)
        return encoded if isinstance(encoded, str) else json.dumps(encoded, sort_keys=True)

    def from_text(self, key: str, raw: bytes | str) -> dict[str, Any] | None:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        if text.startswith(_MARKER):
            return self.decode(key, text)
        try:
            value = json.loads(text)
        except ValueError:
            return None
        return self.decode(key, value) if isinstance(value, dict) else None
