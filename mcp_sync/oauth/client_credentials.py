"""``ClientCredentialsProvider``: machine-to-machine tokens (the client credentials grant).

No user and no redirect: the client authenticates itself at the token endpoint with
``client_secret_basic`` (a secret) or ``private_key_jwt`` (a PEM private key; needs the
``oauth-jwt`` extra), gets an access token, and gets a new one when it expires or a 401 says so.
"""

from __future__ import annotations

from collections.abc import Iterable

import requests

from ._http import DEFAULT_TIMEOUT
from ._machine import MachineProvider
from .discovery import ServerMetadata
from .dpop import DPoPKey
from .flow import TokenSet, client_credentials_grant
from .store import StateStore

__all__ = ["ClientCredentialsProvider"]


class ClientCredentialsProvider(MachineProvider):
    """Tokens for ``server_url`` from the client credentials grant.

    Give ``client_secret`` (``client_secret_basic``, or ``client_secret_post`` if that is all
    the authorization server supports) or ``private_key`` (PEM) with ``signing_algorithm``
    (``private_key_jwt``). ``scope``: the scope to ask for (default: the challenge's, else the
    protected resource metadata's ``scopes_supported``). ``dpop``,
    ``authorization_server_metadata_url`` and ``allow_hosts`` (the server-named URLs'
    rules): as for :class:`OAuthProvider`.
    """

    kind = "client_credentials"
    client_id: str

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
        dpop: DPoPKey | bool | None = None,
        authorization_server_metadata_url: str | None = None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        if client_secret is None and private_key is None:
            raise ValueError("ClientCredentialsProvider needs client_secret or private_key")
        super().__init__(
            server_url,
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            signing_algorithm=signing_algorithm,
            scope=scope,
            store=store,
            refresh_margin=refresh_margin,
            timeout=timeout,
            session=session,
            dpop=dpop,
            authorization_server_metadata_url=authorization_server_metadata_url,
            allow_hosts=allow_hosts,
        )

    def _grant(
        self, server: ServerMetadata, scope: str | None, resource: str | None, dpop: DPoPKey | None
    ) -> TokenSet:
        return client_credentials_grant(
            self.session,
            server,
            self._client(server),
            scope=scope,
            resource=resource,
            private_key=self._private_key,
            dpop=dpop,
        )
