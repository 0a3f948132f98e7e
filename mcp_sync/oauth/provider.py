"""``OAuthProvider``: the MCP authorization client, an :class:`~mcp_sync.auth.AuthProvider`
(``mcp_sync.connect(url, auth=provider)``).

What happens on a challenge from the MCP server (:meth:`OAuthProvider.on_unauthorized`):

- 401 carrying a token that is no longer ours: another thread (or process, through the store)
  already replaced it; retry.
- 401 otherwise: discover again (the protected resource metadata may name a new authorization
  server; tokens and registrations of the old one are then not used), refresh if there is a
  refresh token, else start a new authorization. ``invalid_grant`` on refresh drops the tokens
  and ``invalid_client`` also the registration, then a new authorization follows; any other
  refresh failure (network, 5xx, an abort) propagates and never starts a new authorization.
- 403 ``insufficient_scope``: step-up, a new authorization for the union of the scopes asked
  for so far and the challenged ones, at most ``max_step_up`` times for the same scope set.

A new authorization sends the user to the authorization URL through ``on_redirect``: a handler
that returns the redirect (a :class:`CallbackResult` or the URL the browser was sent to) lets the
provider finish inline and the request is retried; a handler returning None, or no handler,
raises :class:`AuthorizationRequired`, and ``provider.authorize(redirected_url)`` finishes later.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import requests

from .._rules.numbers import number, whole
from ..auth import AuthProvider, RequestContext, UnauthorizedContext
from . import _state
from ._deadline import inherited, limits_for, waited
from ._egress import Egress, guard_session, signing_in_through
from ._http import DEFAULT_TIMEOUT, Limits, current_limits, limits, origin, require_secure
from ._secrets import held, held_sign_in, watch_provider
from ._store_guard import guarded
from .discovery import Discovery, ServerMetadata, canonical_resource, discover
from .dpop import DPoPKey, authorization_headers, note_nonce, supported_by, take_nonce
from .errors import (
    AuthorizationRequired,
    InsufficientScopeError,
    InvalidClientError,
    InvalidGrantError,
    OAuthError,
    StateMismatchError,
)
from .flow import (
    CallbackResult,
    PendingAuthorization,
    TokenSet,
    check_callback,
    check_landed,
    exchange_code,
    refresh,
    revoke,
    start_authorization,
)
from .registration import ClientInfo, ClientMetadata, select_client
from .store import MemoryStateStore, StateStore

__all__ = ["OAuthProvider", "RedirectHandler"]

logger = logging.getLogger("mcp_sync.oauth")

#: ``on_redirect(authorization_url)``: return the redirect (to finish now) or None (later).
RedirectHandler = Callable[[str], "CallbackResult | str | None"]

_PENDING_TTL = 900.0
_WHAT = "the OAuth provider's lock"
_MAX_PENDING = 8


class OAuthProvider(AuthProvider):
    """The MCP authorization client (authorization code + PKCE) for one MCP server: an
    :class:`~mcp_sync.auth.AuthProvider`, the ``auth=`` of ``mcp_sync.connect`` or a transport.

    ``server_url``: the MCP server; tokens are bound to it and never sent to another origin.
    ``redirect_url``: where the authorization server sends the browser back
    (e.g. ``CallbackServer.redirect_url``).
    ``client_metadata``: sent in dynamic client registration.
    ``client_metadata_url``: an https URL serving this client's metadata document (CIMD),
    used as ``client_id`` where the authorization server supports it.
    ``client_id`` / ``client_secret``: a pre-registered client, tried first; with
    ``client_issuer`` only at that authorization server.
    ``authorization_server_metadata_url``: the authorization server's metadata document, for
    deployments without protected resource metadata (replaces that part of discovery).
    ``dpop``: proof-of-possession tokens (RFC 9449, see :mod:`.dpop`): None (the default) uses
    them when the authorization server advertises ES256 in
    ``dpop_signing_alg_values_supported``, True always, False never; a :class:`DPoPKey` uses
    that key (else one is made and kept in the store).
    ``store``: where tokens and registrations live (:class:`FileStateStore` to keep them).
    ``on_redirect``: see the module docstring. ``scope``: request exactly this scope instead of
    the spec's choice. ``offline_access``: add ``offline_access`` when the authorization server
    lists it (to get a refresh token). ``refresh_margin``: refresh this many seconds before
    expiry (at most a quarter of the token's lifetime). ``timeout``: seconds one exchange with
    an OAuth endpoint may take in total. ``session``: the ``requests.Session`` for OAuth
    requests. ``allow_hosts``: hosts or networks (``"10.0.0.0/8"``) the server may point to
    in a private or loopback range it is not in (see "Server-named URLs" in docs/oauth.md).
    """

    def __init__(
        self,
        server_url: str,
        redirect_url: str | None = None,
        *,
        client_metadata: ClientMetadata | None = None,
        client_metadata_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        authorization_server_metadata_url: str | None = None,
        dpop: DPoPKey | bool | None = None,
        store: StateStore | None = None,
        on_redirect: RedirectHandler | None = None,
        scope: str | None = None,
        offline_access: bool = True,
        max_step_up: int = 2,
        refresh_margin: float = 60.0,
        timeout: float = DEFAULT_TIMEOUT,
        session: requests.Session | None = None,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.server_url = server_url
        self.timeout = number(timeout, f"{type(self).__name__}: timeout", positive=True)
        self.authorization_server_metadata_url = authorization_server_metadata_url
        self.dpop = dpop
        self._proof_key: DPoPKey | None = dpop if isinstance(dpop, DPoPKey) else None
        self.redirect_url = redirect_url
        self.client_metadata = client_metadata or ClientMetadata()
        if client_metadata_url is not None:
            require_secure(client_metadata_url, "client metadata document URL")
        self.client_metadata_url = client_metadata_url
        self._pre_registered = (
            ClientInfo(
                client_id, client_secret, token_endpoint_auth_method or "auto", client_issuer
            )
            if client_id
            else None
        )
        self.store = guarded(store) if store is not None else MemoryStateStore()
        self.on_redirect = on_redirect
        self.scope = scope
        self.offline_access = offline_access
        self.max_step_up = whole(max_step_up, f"{type(self).__name__}: max_step_up")
        # (negative: only once that long past expiry, which leaves it to the server's 401)
        self.refresh_margin = number(
            refresh_margin, f"{type(self).__name__}: refresh_margin", minimum=-math.inf
        )
        self.session = guard_session(session or requests.Session(), Egress(server_url, allow_hosts))
        self._key = canonical_resource(server_url)
        self._lock = threading.RLock()
        self._tokens: TokenSet | None = _state.stored_tokens(self.store.load(self._key) or {})
        watch_provider(self)  # no error or log record shows its tokens, secrets or key

    def __repr__(self) -> str:
        signed_in = "signed in" if self._tokens is not None else "not signed in"
        return f"<OAuthProvider {self.server_url} {signed_in}>"

    # -- what the transport calls ---------------------------------------------------------

    def token(self) -> str | None:
        """The current access token, refreshed first when it is about to expire."""
        tokens = self._tokens
        if tokens is None:
            return None
        if tokens.refresh_token and tokens.refresh_due(self.refresh_margin):
            try:
                with limits(inherited(self.timeout)):  # (the request's deadline, if any)
                    fresh = self._refresh(tokens.access_token)
            except (InvalidGrantError, InvalidClientError) as exc:
                logger.info("refreshing the token for %s failed (%s)", self.server_url, exc.error)
                return None
            except Exception as exc:
                if tokens.expires_within(0):
                    # Sent, an expired token is only refused (and a server may revoke its
                    # refresh token on seeing it): this failure is the request's.
                    raise
                # still valid: sent, and a 401 that follows tries again and reports it
                logger.warning(
                    "refreshing the token for %s failed: %s", self.server_url, type(exc).__name__
                )
                return tokens.access_token
            return fresh.access_token if fresh is not None else None
        return tokens.access_token

    def bind(self, url: str) -> None:
        """Refuse a server on another origin than ``server_url`` (see :meth:`check_url`)."""
        self.check_url(url)

    def headers_for(self, method: str, url: str, ctx: RequestContext) -> dict[str, str]:
        """:meth:`authorization`, refreshing (if due) by the request's deadline."""
        with limits(limits_for(self.timeout, ctx)):
            return self.authorization(method, url)

    def authorization(self, method: str, url: str) -> dict[str, str]:
        """The headers for one request to the MCP server: ``Authorization: Bearer``, or for a
        DPoP-bound token ``Authorization: DPoP`` and a fresh ``DPoP`` proof."""
        token = self.token()
        tokens = self._tokens
        if token is None or tokens is None:
            return {}
        key = self._dpop_key() if tokens.token_type == "DPoP" else None
        return authorization_headers(token, tokens.token_type, key, method, url)

    def on_response(self, url: str, headers: Mapping[str, str]) -> None:
        """Keep a new DPoP nonce the server sent."""
        note_nonce(self._proof_key, url, headers)

    def on_unauthorized(self, ctx: UnauthorizedContext) -> bool:
        """Handle a 401 / 403 insufficient_scope; True to retry the request (see module doc)."""
        self.check_url(ctx.url)
        if ctx.params.get("error") == "use_dpop_nonce":
            return take_nonce(self._proof_key, ctx)
        with limits(limits_for(self.timeout, ctx)) as bound, waited(self._lock, _WHAT):
            bound.check()
            state = self._load()
            current = _state.stored_tokens(state)
            self._tokens = current
            if ctx.insufficient_scope:
                return self._step_up(ctx, state, current)
            if current is not None and current.access_token != ctx.token:
                return True  # replaced since that request was sent
            discovery = self._discover(ctx.resource_metadata)
            self._remember(discovery)
            if current is not None and current.issuer != discovery.server.issuer:
                logger.info(
                    "%s now uses the authorization server %s",
                    self.server_url,
                    discovery.server.issuer,
                )
                self._set_tokens(None)
                current = None
            if current is not None and current.refresh_token:
                try:
                    if self._refresh(current.access_token) is not None:
                        return True
                except InvalidGrantError:
                    logger.info(
                        "the refresh token for %s was refused: signing in again", self.server_url
                    )
                except InvalidClientError:
                    logger.info(
                        "the client registration for %s was refused: registering again",
                        self.server_url,
                    )
            scope = self._initial_scope(ctx.scope, discovery)
            return self._authorize(discovery, scope, stale=ctx.token)

    # The names these had before OAuth providers were AuthProviders.
    authorization_headers = authorization
    handle_challenge = on_unauthorized

    # -- public operations ----------------------------------------------------------------

    @property
    def tokens(self) -> TokenSet | None:
        """The current tokens (their repr hides the token values)."""
        return self._tokens

    def check_url(self, url: str) -> None:
        """Raise :class:`OAuthError` if ``url`` is not on this provider's server's origin."""
        if origin(url) != origin(self.server_url):
            raise OAuthError(
                f"this OAuthProvider holds credentials for {self.server_url}; "
                f"they are not sent to {url}"
            )

    def start_authorization(self, *, scope: str | None = None) -> str:
        """Begin a sign-in without waiting for a challenge; returns the authorization URL.

        Finish it with :meth:`authorize`.
        """
        with self._lock, limits(Limits(self.timeout)):
            discovery = self._discover(None)
            self._remember(discovery)
            pending = self._new_pending(discovery, scope or self._initial_scope(None, discovery))
            return pending.authorization_url

    def authorize(
        self,
        callback_url: str | None = None,
        *,
        code: str | None = None,
        state: str | None = None,
        iss: str | None = None,
        error: str | None = None,
    ) -> TokenSet:
        """Finish a sign-in with the redirect the user came back with.

        Pass the full redirect URL, or its ``code``, ``state`` and ``iss``. Checks ``state``
        (:class:`StateMismatchError`) and ``iss`` (:class:`IssuerMismatchError`) before the
        code is exchanged.
        """
        if callback_url is not None:
            result = CallbackResult.from_url(callback_url)
        else:
            result = CallbackResult(code=code, state=state, iss=iss, error=error)
        with limits(Limits(self.timeout)):
            return self._finish(result, callback_url)

    def refresh(self) -> TokenSet:
        """Refresh the tokens now (raises :class:`InvalidGrantError` if that is impossible)."""
        tokens = self._tokens
        with limits(Limits(self.timeout)):
            fresh = self._refresh(tokens.access_token if tokens else None, force=True)
        if fresh is None:
            raise InvalidGrantError("invalid_grant", "not signed in")
        return fresh

    def revoke(self) -> None:
        """Revoke the tokens at the authorization server (RFC 7009, when it has an endpoint)
        and forget them, whether or not the revocation worked (a failure is logged)."""
        with self._lock, self.store.lock(self._key), limits(Limits(self.timeout)):
            state = self._load()
            tokens = _state.stored_tokens(state)
            if tokens is not None and tokens.issuer is not None:
                server = _state.stored_server(state, tokens.issuer)
                client = self._client(state, server) if server is not None else None
                if server is not None and client is not None:
                    revoke(self.session, server, client, tokens)
            state.pop("tokens", None)
            self._save(state)
            self._tokens = None

    def forget(self) -> None:
        """Drop everything stored for this server: tokens, registrations, pending sign-ins."""
        with self._lock, self.store.lock(self._key):
            self.store.save(self._key, None)
            self._tokens = None

    # -- internals ------------------------------------------------------------------------

    def _dpop_for(self, server: ServerMetadata) -> DPoPKey | None:
        """The key to bind tokens from ``server`` to, or None for bearer tokens."""
        if self.dpop is False:
            return None
        if self.dpop is None and not supported_by(server):
            return None
        return self._dpop_key()

    def _dpop_key(self) -> DPoPKey:
        with waited(self._lock, _WHAT):
            if self._proof_key is None:
                with self.store.lock(self._key):
                    state = self._load()
                    pem = state.get("dpopKey")
                    if isinstance(pem, str):
                        self._proof_key = DPoPKey.from_pem(pem)
                    else:
                        key = DPoPKey()
                        self._save({**state, "dpopKey": key.private_pem()})
                        self._proof_key = key  # (once saved: a refusing store refuses again)
            return self._proof_key

    def _discover(self, resource_metadata_url: str | None) -> Discovery:
        return discover(
            self.session,
            self.server_url,
            resource_metadata_url,
            server_metadata_url=self.authorization_server_metadata_url,
        )

    def _load(self) -> dict[str, Any]:
        return {**(self.store.load(self._key) or {}), "serverUrl": self.server_url}

    def _save(self, state: dict[str, Any]) -> None:
        self.store.save(self._key, state)

    def _set_tokens(
        self, tokens: TokenSet | None, *, extra: Mapping[str, Any] | None = None
    ) -> None:
        self._tokens = tokens  # (kept here even if the store fails: they are the newest)
        with self.store.lock(self._key):
            state = self._load()
            if tokens is None:
                state.pop("tokens", None)
            else:
                state["tokens"] = tokens.to_json()
            state.update(extra or {})
            self._save(state)
            self._tokens = tokens

    def _remember(self, discovery: Discovery) -> None:
        with self.store.lock(self._key):
            state = self._load()
            servers = state.setdefault("authorizationServers", {})
            servers[discovery.server.issuer] = discovery.server.to_json()
            if discovery.resource_metadata is not None:
                state["resourceMetadata"] = dict(discovery.resource_metadata.raw)
            self._save(state)

    def _client(self, state: Mapping[str, Any], server: ServerMetadata) -> ClientInfo | None:
        stored = held(self, _state.stored_client(state, server.issuer))
        if stored is not None:
            return stored
        pre = self._pre_registered
        if pre is not None and pre.issuer in (None, server.issuer):
            return select_client(
                self.session,
                server,
                pre_registered=pre,
                stored=None,
                metadata_url=None,
                metadata=self.client_metadata,
                redirect_url=self.redirect_url,
            )
        return None

    def _forget_client(self, issuer: str) -> None:
        with self.store.lock(self._key):
            state = self._load()
            clients = state.get("clients") or {}
            client = clients.get(issuer)
            if isinstance(client, dict) and client.get("source") != "pre-registered":
                clients.pop(issuer, None)
                state["clients"] = clients
                self._save(state)

    def _client_for(self, server: ServerMetadata) -> ClientInfo:
        # one registration for everything sharing the store: read and written in one turn
        with self.store.sign_in_lock(self._key):
            kept = _state.stored_client(self._load(), server.issuer)
            client = select_client(
                self.session,
                server,
                pre_registered=self._pre_registered,
                stored=kept,
                metadata_url=self.client_metadata_url,
                metadata=self.client_metadata,
                redirect_url=self.redirect_url,
            )
            held(self, client)
            if client.source != "pre-registered" and client is not kept:
                with self.store.lock(self._key):
                    state = self._load()
                    state.setdefault("clients", {})[server.issuer] = client.to_json()
                    self._save(state)
        return client

    def _initial_scope(self, challenged: str | None, discovery: Discovery) -> str | None:
        return _state.initial_scope(self.scope, challenged, discovery, self._offline())

    def _offline(self) -> bool:
        return self.offline_access and "refresh_token" in self.client_metadata.grant_types

    def _step_up(
        self, ctx: UnauthorizedContext, state: dict[str, Any], current: TokenSet | None
    ) -> bool:
        scopes: list[str] = []
        for source in (
            current.scope if current else None,
            (state.get("stepUp") or {}).get("scope"),
            ctx.scope,
        ):
            for item in (source or "").split():
                if item not in scopes:
                    scopes.append(item)
        target = " ".join(scopes) or None
        previous = state.get("stepUp") or {}
        attempts = int(previous.get("attempts", 0)) + 1 if previous.get("scope") == target else 1
        if attempts > self.max_step_up:
            raise InsufficientScopeError(
                f"{self.server_url} still asks for more scope ({ctx.scope}) after "
                f"{self.max_step_up} step-up authorizations; giving up"
            )
        with self.store.lock(self._key):
            fresh = self._load()
            fresh["stepUp"] = {"scope": target, "attempts": attempts}
            self._save(fresh)
        discovery = self._discover(ctx.resource_metadata)
        self._remember(discovery)
        if target is not None:
            target = " ".join(
                _state.with_offline_access(target.split(), discovery.server, self._offline())
            )
        return self._authorize(discovery, target, step_up=True, stale=ctx.token)

    def _new_pending(
        self, discovery: Discovery, scope: str | None, step_up: bool = False
    ) -> PendingAuthorization:
        if not self.redirect_url:
            raise OAuthError("OAuthProvider needs a redirect_url to sign a user in")
        client = self._client_for(discovery.server)
        pending = start_authorization(
            discovery.server,
            client,
            self.redirect_url,
            scope=scope,
            resource=discovery.resource,
            step_up=step_up,
        )
        with self.store.lock(self._key):
            state = self._load()
            now = time.time()
            kept = {
                key: value
                for key, value in (state.get("pending") or {}).items()
                if isinstance(value, dict)
                and now - float(value.get("createdAt") or 0) < _PENDING_TTL
            }
            kept[pending.state] = pending.to_json()
            state["pending"] = dict(list(kept.items())[-_MAX_PENDING:])
            self._save(state)
        return pending

    def _authorize(
        self,
        discovery: Discovery,
        scope: str | None,
        step_up: bool = False,
        *,
        stale: str | None = None,
    ) -> bool:
        """Sign in, once for everything sharing the store: the others wait for that sign-in
        (by their deadline) and use its tokens."""
        current_limits().check_interactive(self.server_url)  # a notification opens no browser
        with self.store.sign_in_lock(self._key), signing_in_through(self.session):
            fresher = _state.fresher_tokens(self._load(), stale, scope if step_up else None)
            if fresher is not None:  # another worker signed in while this one waited
                self._tokens = fresher
                return True
            pending = self._new_pending(discovery, scope, step_up)
            current_limits().check()  # an aborted request opens no browser
            answer = self.on_redirect(pending.authorization_url) if self.on_redirect else None
            if answer is None:
                raise AuthorizationRequired(pending.authorization_url, pending.state)
            # The user has answered: the code is exchanged even if the request that started
            # the sign-in was aborted meanwhile (the next request uses the tokens).
            with limits(Limits(self.timeout)):
                if isinstance(answer, CallbackResult):
                    self._finish(answer)
                else:
                    self._finish(CallbackResult.from_url(answer), answer)
            return True

    def _finish(self, result: CallbackResult, landed_url: str | None = None) -> TokenSet:
        """Exchange the redirect's code; ``landed_url`` (a pasted redirect URL) must be on the
        redirect URI's origin and path."""
        with waited(self._lock, _WHAT):
            with self.store.lock(self._key):
                state = self._load()
                pending_all = state.get("pending") or {}
                raw = pending_all.get(result.state) if result.state else None
                if not isinstance(raw, dict):
                    raise StateMismatchError(
                        "the redirect's state matches no sign-in this client started "
                        "(or that sign-in was already finished)"
                    )
                check_landed(landed_url, str(raw.get("redirectUri") or ""))
                del pending_all[result.state]
                state["pending"] = pending_all
                self._save(state)
            pending = PendingAuthorization.from_json(raw)
            code = check_callback(pending, result)
            server = _state.stored_server(state, pending.issuer)
            if server is None:
                raise OAuthError(
                    f"no metadata stored for the authorization server {pending.issuer}"
                )
            client = self._client(state, server)
            if client is None or client.client_id != pending.client_id:
                raise OAuthError("the client this sign-in was started with is no longer registered")
            held_sign_in(self, code, pending.code_verifier)
            try:
                tokens = exchange_code(
                    self.session, server, client, pending, code, dpop=self._dpop_for(server)
                )
            except InvalidClientError:
                self._forget_client(server.issuer)
                raise
            extra: dict[str, Any] = {}
            if not pending.step_up:
                extra["stepUp"] = {}
            self._set_tokens(tokens, extra=extra)
            logger.info("signed in to %s", self.server_url)
            return tokens

    def _refresh(self, stale: str | None, *, force: bool = False) -> TokenSet | None:
        """Refresh once across threads and processes; None when there is nothing to refresh."""
        with waited(self._lock, _WHAT), self.store.lock(self._key):
            state = self._load()
            tokens = _state.stored_tokens(state)
            if tokens is None:
                self._tokens = None
                return None
            if (
                not force
                and tokens.access_token != stale
                and not tokens.refresh_due(self.refresh_margin)
            ):
                self._tokens = tokens  # someone else refreshed already
                return tokens
            if not tokens.refresh_token or tokens.issuer is None:
                return None
            server = _state.stored_server(state, tokens.issuer)
            client = self._client(state, server) if server is not None else None
            if server is None or client is None:
                return None
            try:
                fresh = refresh(
                    self.session,
                    server,
                    client,
                    tokens,
                    dpop=self._dpop_key() if tokens.token_type == "DPoP" else None,
                )
            except InvalidGrantError:
                self._set_tokens(None)
                raise
            except InvalidClientError:
                self._set_tokens(None)
                self._forget_client(server.issuer)
                raise
            # The refresh token is spent: what replaced it is saved even past the request's
            # deadline (else the store keeps a used one, and the fleet signs in again).
            with limits(inherited(self.timeout, deadline=False)):
                self._set_tokens(fresh)
            logger.info("refreshed the token for %s", self.server_url)
            return fresh
