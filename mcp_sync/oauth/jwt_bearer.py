"""The JWT bearer grant (RFC 7523): a JWT someone the authorization server trusts is the grant.

Two uses, one provider (:class:`JwtBearerProvider`):

- Workload identity federation: the platform the code runs on (Kubernetes, a cloud, CI)
  issues the workload a JWT; the authorization server trusts that issuer. Pass the JWT, or a
  callable that reads a fresh one.
- Enterprise-managed authorization (SEP-990, identity assertion authorization grant): the
  user signed in to the enterprise identity provider (IdP). :class:`IdJagExchange` trades
  their ID token at the IdP (RFC 8693 token exchange) for an Identity Assertion JWT
  Authorization Grant (ID-JAG) naming the MCP authorization server and the MCP server, and
  that ID-JAG is the JWT bearer grant. No browser, no consent screen: the enterprise decides.

A failed grant is raised, never retried with the same assertion or another grant type.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

import requests

from .._rules.numbers import number
from ._http import DEFAULT_TIMEOUT, Limits, current_limits, exchange, limits
from ._machine import MachineProvider
from .discovery import ServerMetadata, canonical_resource
from .dpop import DPoPKey
from .errors import TokenError, token_error
from .flow import TokenSet, client_authentication, jwt_bearer_grant
from .registration import ClientInfo
from .store import StateStore

__all__ = ["AssertionSource", "IdJagExchange", "JwtBearerProvider"]

logger = logging.getLogger("mcp_sync.oauth")

#: ``source(audience, resource) -> JWT``: the authorization server's issuer (the JWT's
#: ``aud``) and the MCP server's resource identifier.
AssertionSource = Callable[[str, str], str]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


class JwtBearerProvider(MachineProvider):
    """Tokens for ``server_url`` from the JWT bearer grant.

    ``assertion``: the JWT, or an :data:`AssertionSource` called for every grant (a fresh
    assertion each time; an :class:`IdJagExchange` for enterprise-managed authorization).
    ``client_id`` with ``client_secret`` (``client_secret_basic``, or ``client_secret_post``
    where that is all the server supports) or ``private_key`` (``private_key_jwt``), or alone
    for a public client. ``scope``, ``dpop``, ``authorization_server_metadata_url`` and
    ``allow_hosts`` (the server-named URLs' rules): as for :class:`OAuthProvider`.
    """

    kind = "jwt_bearer"

    def __init__(
        self,
        server_url: str,
        assertion: str | AssertionSource,
        *,
        client_id: str | None = None,
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
        self._assertion = assertion

    def _grant(
        self, server: ServerMetadata, scope: str | None, resource: str | None, dpop: DPoPKey | None
    ) -> TokenSet:
        audience_resource = resource or canonical_resource(self.server_url)
        if callable(self._assertion):
            assertion = self._assertion(server.issuer, audience_resource)
        else:
            assertion = self._assertion
        return jwt_bearer_grant(
            self.session,
            server,
            self._client(server),
            assertion,
            scope=scope,
            resource=resource,
            private_key=self._private_key,
            dpop=dpop,
        )


class IdJagExchange:
    """An :data:`AssertionSource` for enterprise-managed authorization (SEP-990).

    Each call trades ``id_token`` (the user's OpenID Connect ID token from the enterprise IdP,
    or a callable returning a current one) at the IdP's ``token_endpoint`` for an ID-JAG
    (RFC 8693 token exchange, ``requested_token_type`` ID-JAG) whose audience is the MCP
    authorization server and whose resource is the MCP server. ``client_id`` /
    ``client_secret``: this client at the IdP.
    """

    def __init__(
        self,
        token_endpoint: str,
        id_token: str | Callable[[], str],
        *,
        client_id: str,
        client_secret: str | None = None,
        scope: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        session: requests.Session | None = None,
    ) -> None:
        self.token_endpoint = token_endpoint
        self._id_token = id_token
        self.client_id = client_id
        self._secret = client_secret
        self.scope = scope
        self.timeout = number(timeout, "IdJagExchange: timeout", positive=True)
        self.session = session or requests.Session()

    def __repr__(self) -> str:
        return f"<IdJagExchange {self.token_endpoint} client={self.client_id}>"

    def __call__(self, audience: str, resource: str) -> str:
        subject = self._id_token() if callable(self._id_token) else self._id_token
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ID_JAG_TYPE,
            "subject_token": subject,
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": audience,
            "resource": resource,
        }
        if self.scope:
            form["scope"] = self.scope
        idp = ServerMetadata(self.token_endpoint, "", self.token_endpoint)
        method = "client_secret_basic" if self._secret is not None else "none"
        headers = client_authentication(
            ClientInfo(self.client_id, self._secret, method), idp, form, None
        )
        outer = current_limits()  # inside a flow: keep its abort signal
        with limits(Limits(self.timeout, outer.cancelled)):
            answer = exchange(
                self.session,
                "POST",
                self.token_endpoint,
                "identity provider token endpoint",
                data=form,
                headers=headers,
            )
        body = answer.json or {}
        token = body.get("access_token")
        if answer.status != 200 or not isinstance(token, str):
            error, description = body.get("error"), body.get("error_description")
            raise token_error(
                error if isinstance(error, str) else "invalid_response",
                description if isinstance(description, str) else None,
                answer.status,
            )
        if body.get("issued_token_type") != ID_JAG_TYPE:
            raise TokenError(
                "invalid_response",
                f"the identity provider issued {body.get('issued_token_type')!r}, not an ID-JAG",
                answer.status,
            )
        logger.info("obtained an ID-JAG for %s from %s", resource, self.token_endpoint)
        return token
