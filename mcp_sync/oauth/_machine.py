"""The shared part of providers that get tokens without a user (machine to machine).

A grant at the token endpoint (client credentials, JWT bearer) gives an access token; the
provider asks again when the token is about to expire or a 401 says so, and asks for more
scope on a 403 ``insufficient_scope``. There is no refresh token, no redirect and no
registration: the client's identity is configured. Subclasses say which grant.
"""

from __future__ import annotations

import logging
import threading
from abc import abstractmethod
from collections.abc import Iterable, Mapping

import requests

from .._rules.numbers import number
from ..auth import AuthProvider, RequestContext, UnauthorizedContext
from ._deadline import inherited, limits_for, waited
from ._egress import Egress, guard_session
from ._http import limits, origin
from ._secrets import watch_provider
from ._store_guard import guarded
from .discovery import ServerMetadata, canonical_resource, discover
from .dpop import DPoPKey, authorization_headers, note_nonce, supported_by, take_nonce
from .errors import OAuthError
from .flow import TokenSet
from .registration import ClientInfo, choose_auth_method
from .store import MemoryStateStore, StateStore

__all__ = ["MachineProvider"]

logger = logging.getLogger("mcp_sync.oauth")


class MachineProvider(AuthProvider):
    """Base of :class:`ClientCredentialsProvider` and :class:`JwtBearerProvider`, which are
    kinds of :class:`~mcp_sync.auth.AuthProvider`: pass one as ``auth=``."""

    #: Appended to the store key: each kind of provider keeps its own tokens.
    kind = "machine"

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str | None,
        client_secret: str | None,
        private_key: str | bytes | None,
        signing_algorithm: str,
        scope: str | None,
        store: StateStore | None,
        refresh_margin: float,
        timeout: float,
        session: requests.Session | None,
        dpop: DPoPKey | bool | None,
        authorization_server_metadata_url: str | None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.server_url = server_url
        self.client_id = client_id
        self._secret = client_secret
        self._private_key = (private_key, signing_algorithm) if private_key is not None else None
        self.scope = scope
        self.store = guarded(store) if store is not None else MemoryStateStore()
        self.refresh_margin = number(refresh_margin, f"{type(self).__name__}: refresh_margin")
        self.timeout = number(timeout, f"{type(self).__name__}: timeout", positive=True)
        # what a server names is checked as OAuthProvider checks it (SSRF: see _egress.py)
        self.session = guard_session(session or requests.Session(), Egress(server_url, allow_hosts))
        self.dpop = dpop
        self.authorization_server_metadata_url = authorization_server_metadata_url
        self._proof_key = dpop if isinstance(dpop, DPoPKey) else None
        self._key = canonical_resource(server_url) + "#" + self.kind
        self._lock = threading.RLock()
        self._server: ServerMetadata | None = None
        self._resource: str | None = None
        stored = (self.store.load(self._key) or {}).get("tokens")
        self._tokens = TokenSet.from_json(stored) if isinstance(stored, dict) else None
        watch_provider(self)  # no error or log record shows its tokens, secret or keys

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.server_url} client={self.client_id}>"

    @abstractmethod
    def _grant(
        self, server: ServerMetadata, scope: str | None, resource: str | None, dpop: DPoPKey | None
    ) -> TokenSet:
        """Run this provider's grant at ``server``'s token endpoint."""

    @property
    def tokens(self) -> TokenSet | None:
        """The current tokens (their repr hides the token values)."""
        return self._tokens

    def check_url(self, url: str) -> None:
        """Raise :class:`OAuthError` if ``url`` is not on this provider's server's origin."""
        if origin(url) != origin(self.server_url):
            raise OAuthError(
                f"this provider holds credentials for {self.server_url}; not sent to {url}"
            )

    def bind(self, url: str) -> None:
        """Refuse a server on another origin than ``server_url`` (see :meth:`check_url`)."""
        self.check_url(url)

    def token(self) -> str | None:
        """The current access token, fetched again first when it is about to expire."""
        tokens = self._tokens
        if tokens is not None and tokens.refresh_due(self.refresh_margin) and self._server:
            try:
                with limits(inherited(self.timeout)):  # (the request's deadline, if any)
                    return self._fetch(self._scope(None)).access_token
            except Exception as exc:
                logger.warning("the %s grant failed: %s", self.kind, type(exc).__name__)
        return tokens.access_token if tokens is not None else None

    def headers_for(self, method: str, url: str, ctx: RequestContext) -> dict[str, str]:
        """:meth:`authorization`, fetching a new token (if due) by the request's deadline."""
        with limits(limits_for(self.timeout, ctx)):
            return self.authorization(method, url)

    def authorization(self, method: str, url: str) -> dict[str, str]:
        """``Authorization: Bearer``, or ``DPoP`` with a fresh proof for a DPoP-bound token."""
        token = self.token()
        tokens = self._tokens
        if token is None or tokens is None:
            return {}
        return authorization_headers(token, tokens.token_type, self._proof_key, method, url)

    def on_response(self, url: str, headers: Mapping[str, str]) -> None:
        """Keep a new DPoP nonce the server sent."""
        note_nonce(self._proof_key, url, headers)

    def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
        """A 401 (or a 403 asking for more scope): run the grant again; True to retry."""
        self.check_url(ctx.url)
        if ctx.params.get("error") == "use_dpop_nonce":
            return take_nonce(self._proof_key, ctx)
        with (
            limits(limits_for(self.timeout, ctx)) as bound,
            waited(self._lock, "the provider's lock"),
        ):
            bound.check()
            current = self._tokens
            if current is not None and current.access_token != ctx.token:
                return True
            discovery = discover(
                self.session,
                self.server_url,
                ctx.resource_metadata,
                server_metadata_url=self.authorization_server_metadata_url,
                authorization_code=False,
            )
            self._server = discovery.server
            self._resource = discovery.resource
            scope = ctx.scope
            if ctx.insufficient_scope and current is not None and current.scope:
                scope = " ".join(dict.fromkeys((current.scope + " " + (ctx.scope or "")).split()))
            elif scope is None and discovery.resource_metadata is not None:
                supported = discovery.resource_metadata.scopes_supported
                scope = " ".join(supported) if supported else None
            self._fetch(self._scope(scope))
            return True

    # The names these had before OAuth providers were AuthProviders.
    authorization_headers = authorization
    handle_challenge = on_unauthorized

    def _scope(self, challenged: str | None) -> str | None:
        if self.scope is not None:
            return self.scope
        if challenged is not None:
            return challenged
        return self._tokens.scope if self._tokens is not None else None

    def _client(self, server: ServerMetadata) -> ClientInfo:
        """This client at ``server``'s token endpoint: ``private_key_jwt`` with a private key,
        a secret's method the server supports, else a public client (``none``)."""
        if self._private_key is not None:
            method = "private_key_jwt"
        elif self._secret is not None:
            method = choose_auth_method(server.token_endpoint_auth_methods_supported, True)
        else:
            method = "none"
        # a JWT bearer client may have no client_id: none is sent, the assertion identifies it
        return ClientInfo(self.client_id or "", self._secret, method, server.issuer)

    def _dpop_for(self, server: ServerMetadata) -> DPoPKey | None:
        if self.dpop is False:
            return None
        if self.dpop is None and not supported_by(server):
            return None
        if self._proof_key is None:
            self._proof_key = DPoPKey()
        return self._proof_key

    def _fetch(self, scope: str | None) -> TokenSet:
        with waited(self._lock, "the provider's lock"):
            server = self._server
            assert server is not None
            tokens = self._grant(server, scope, self._resource, self._dpop_for(server))
            self.store.save(self._key, {"tokens": tokens.to_json()})
            self._tokens = tokens
            return tokens
