"""What an OAuth provider holds that no text may show, for ``mcp_sync.redaction``.

A provider is watched (:func:`watch_provider`): its tokens, its client secrets, a static JWT
assertion and its private keys (DPoP, ``private_key_jwt``) are read from it when an error is
made, so a refreshed or rotated token is covered without registering each one. A client secret
from dynamic registration lives in the store, not on the provider: :func:`held` holds one as
the provider uses it.
"""

from __future__ import annotations

import base64
import weakref
from collections.abc import Iterator
from typing import Any, TypeVar
from urllib.parse import quote

from ..redaction import hold, watch
from .registration import ClientInfo

__all__ = ["held", "held_sign_in", "watch_provider"]

_Client = TypeVar("_Client", bound="ClientInfo | None")

#: A DPoP key's PEM lines, made once per key (serializing it costs more than an error should).
_pem_lines: weakref.WeakKeyDictionary[Any, tuple[str, ...]] = weakref.WeakKeyDictionary()


def watch_provider(provider: object) -> None:
    """Redact what ``provider`` holds, for as long as it lives."""
    watch(provider, _provider_secrets)


def held(provider: object, client: _Client) -> _Client:
    """``client``, its secret held for as long as ``provider`` lives."""
    if client is not None and client.client_secret:
        hold(provider, *_secret_forms(client.client_id, client.client_secret))
    return client


def held_sign_in(provider: object, code: str, verifier: str) -> None:
    """Hold a sign-in's authorization code and PKCE verifier for as long as ``provider``
    lives: with both, whoever reads an error quoting the code exchange could redeem it."""
    hold(provider, code, verifier)


def _secret_forms(client_id: str | None, secret: str | None) -> Iterator[str | None]:
    """A client secret, and its ``client_secret_basic`` credential (which names the client:
    RFC 6749 2.3.1 form-encodes both before base64)."""
    yield secret
    if secret:
        pair = f"{quote(client_id or '', safe='')}:{quote(secret, safe='')}"
        yield base64.b64encode(pair.encode()).decode("ascii")


def _provider_secrets(provider: Any) -> Iterator[str | None]:
    tokens = getattr(provider, "_tokens", None)
    if tokens is not None:
        yield tokens.access_token
        yield tokens.refresh_token
    pre = getattr(provider, "_pre_registered", None)
    if pre is not None:
        yield from _secret_forms(pre.client_id, pre.client_secret)
    yield from _secret_forms(
        getattr(provider, "client_id", None), getattr(provider, "_secret", None)
    )
    assertion = getattr(provider, "_assertion", None)
    if isinstance(assertion, str):
        yield assertion
    elif assertion is not None:  # an IdJagExchange: this client's secret and ID token at the IdP
        yield from _secret_forms(
            getattr(assertion, "client_id", None), getattr(assertion, "_secret", None)
        )
        id_token = getattr(assertion, "_id_token", None)
        yield id_token if isinstance(id_token, str) else None
    private = getattr(provider, "_private_key", None)
    if private is not None:
        pem = private[0].decode("ascii", "replace") if isinstance(private[0], bytes) else private[0]
        yield from _lines(pem)
    key = getattr(provider, "_proof_key", None)
    if key is not None:
        lines = _pem_lines.get(key)
        if lines is None:
            lines = _pem_lines[key] = tuple(_lines(key.private_pem()))
        yield from lines


def _lines(pem: str) -> Iterator[str]:
    """A PEM key whole, and each line of its body (an error may quote a part of it)."""
    yield pem.strip()
    for line in pem.splitlines():
        if line and not line.startswith("-----"):
            yield line
