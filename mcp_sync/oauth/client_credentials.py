"""``ClientCredentialsProvider``: machine-to-machine tokens (the client credentials grant).

No user and no redirect: the client authenticates itself at the token endpoint with
``client_secret_basic`` (a secret) or ``private_key_jwt`` (a PEM private key; needs the
``oauth-jwt`` extra), gets an access token, and gets a new one when it expires or a 401 says so.
"""

from __future__ import annotations

import logging
import threading

import requests

from ..auth import UnauthorizedContext
from ._http import DEFAULT_TIMEOUT, Limits, limits, origin
from .discovery import ServerMetadata, canonical_resource, discover
from .errors import OAuthError
from .flow import TokenSet, client_credentials_grant
from .registration import ClientInfo, choose_auth_method
from .store import MemoryStateStore, StateStore

__all__ = ["ClientCredentialsProvider"]

logger = logging.getLogger("mcp_sync.oauth")


class ClientCredentialsProvider:
    """Tokens for ``server_url`` from the client credentials grant.

    Give ``client_secret`` (``client_secret_basic``, or ``client_secret_post`` if that is all
    the authorization server supports) or ``private_key`` (PEM) with ``signing_algorithm``
    (``private_key_jwt``). ``scope``: the scope to ask for (default: the challenge's, else the
    protected resource metadata's ``scopes_supported``).
    """

    def __init__(
        self,
        server_url: str,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str = "ES256",
        scope: str | None = None,
        store: StateStore | None = None,
        refresh_margin: float = 60.0,
        timeout: float = DEFAULT_TIMEOUT,
        session: requests.Session | None = None,
    ) -> None:
        self.timeout = timeout
        if client_secret is None and private_key is None:
            raise ValueError("ClientCredentialsProvider needs client_secret or private_key")
        self.server_url = server_url
        self.client_id = client_id
        self._secret = client_secret
        self._private_key = (private_key, signing_algorithm) if private_key is not None else None
        self.scope = scope
        self.store = store if store is not None else MemoryStateStore()
        self.refresh_margin = refresh_margin
        self.session = session or requests.Session()
        self._key = canonical_resource(server_url) + "#client_credentials"
        self._lock = threading.RLock()
        self._server: ServerMetadata | None = None
        self._resource: str | None = None
        stored = (self.store.load(self._key) or {}).get("tokens")
        self._tokens = TokenSet.from_json(stored) if isinstance(stored, dict) else None

    def __repr__(self) -> str:
        return f"<ClientCredentialsProvider {self.server_url} client={self.client_id}>"

    def check_url(self, url: str) -> None:
        if origin(url) != origin(self.server_url):
            raise OAuthError(
                f"this provider holds credentials for {self.server_url}; not sent to {url}"
            )

    def token(self) -> str | None:
        tokens = self._tokens
        if tokens is not None and tokens.refresh_due(self.refresh_margin) and self._server:
            try:
                with limits(Limits(self.timeout)):
                    return self._fetch(self._scope(None)).access_token
            except Exception as exc:
                logger.warning("client credentials grant failed: %s", type(exc).__name__)
        return tokens.access_token if tokens is not None else None

    def handle_challenge(self, ctx: UnauthorizedContext) -> bool:
        self.check_url(ctx.url)
        with self._lock, limits(Limits(self.timeout, ctx.cancelled)) as bound:
            bound.check()
            current = self._tokens
            if current is not None and current.access_token != ctx.token:
                return True
            discovery = discover(
                self.session, self.server_url, ctx.resource_metadata, authorization_code=False
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

    def _scope(self, challenged: str | None) -> str | None:
        if self.scope is not None:
            return self.scope
        if challenged is not None:
            return challenged
        return self._tokens.scope if self._tokens is not None else None

    def _fetch(self, scope: str | None) -> TokenSet:
        with self._lock:
            assert self._server is not None
            if self._private_key is not None:
                method = "private_key_jwt"
            else:
                method = choose_auth_method(
                    self._server.token_endpoint_auth_methods_supported, True
                )
            client = ClientInfo(self.client_id, self._secret, method, self._server.issuer)
            tokens = client_credentials_grant(
                self.session,
                self._server,
                client,
                scope=scope,
                resource=self._resource,
                private_key=self._private_key,
            )
            self.store.save(self._key, {"tokens": tokens.to_json()})
            self._tokens = tokens
            return tokens
