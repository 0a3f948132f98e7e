"""The errors of the OAuth client, all under :class:`OAuthError`: one of the four groups under
``McpError`` a caller catches by (the sign-in; see :mod:`mcp_sync.errors`).

Messages name endpoints, issuers and OAuth error codes; they never contain a token, a
client secret, a code or a PKCE verifier. A description an authorization server sent that
echoes a token or a secret the client holds has it redacted (``[redacted]``), in the message
and in ``description`` alike.

::

    OAuthError
    ├── AuthorizationRequired     a user must sign in: open ``authorization_url``
    ├── SignInDeferred            a sign-in is needed, but not for a message nobody waits for
    ├── InsecureEndpointError     an OAuth endpoint is not https (and not on a loopback host)
    │   └── ForbiddenEndpointError  a server-named URL points where the client never connects
    │                             (link-local, private or loopback ranges: SSRF); names the rule
    ├── DiscoveryError            no usable protected-resource / authorization-server metadata
    │   ├── ResourceMismatchError the metadata is for another resource than this server
    │   └── PkceNotSupportedError the authorization server does not advertise PKCE S256
    ├── IssuerMismatchError       metadata ``issuer`` or the redirect's ``iss`` is not the AS's
    ├── StateMismatchError        the redirect's ``state`` is not the one we sent, or the
    │                             pasted redirect is not this client's redirect URI
    ├── AuthorizationDenied       the redirect carried ``error=...`` (e.g. access_denied)
    ├── RegistrationError         dynamic client registration failed
    ├── TokenError                the token endpoint answered with an OAuth error
    │   ├── InvalidGrantError     ``invalid_grant``: the code or refresh token is dead
    │   └── InvalidClientError    ``invalid_client`` / ``unauthorized_client``: the client is dead
    ├── InsufficientScopeError    step-up authorization gave up after its retry limit
    ├── ExchangeTimeout           an OAuth endpoint did not answer within ``timeout`` (also a
    │                             ``TimeoutError``)
    ├── EndpointUnreachable       an OAuth endpoint (token, registration, metadata) could not
    │                             be reached: refused, unresolvable, TLS, reset; names it
    ├── StateStoreError           the state store (Redis, the file) failed; names the store
    │   ├── UnsafeStateFile       a state file others could write (its mode, its owner):
    │   │                         refused; also a ConfigError
    │   ├── SealedStateError      a sealed value did not open (wrong or unknown key, tampered,
    │   │                         unsealed where sealing is on); names the store, key, key id
    │   └── PlaintextDPoPKeyRefused  a DPoP private key would go into a shared store
    │                             unsealed; names ``allow_plaintext_dpop_key``
    ├── InvalidSealingKey         a sealing key is not 32 bytes of base64 (also a ``ValueError``)
    ├── CallbackError             the local redirect listener failed (timeout, closed)
    ├── LockTimeout               a shared store's lock stayed taken longer than ``lock_wait``
    │                             (also a ``TimeoutError``; :mod:`.redis_store`)
    └── LockLost                  a worker's store lock expired and another worker took it
"""

from __future__ import annotations

from ..errors import ConfigError, McpError
from ..redaction import redact

__all__ = [
    "AuthorizationDenied",
    "AuthorizationRequired",
    "CallbackError",
    "DiscoveryError",
    "EndpointUnreachable",
    "ExchangeTimeout",
    "ForbiddenEndpointError",
    "InsecureEndpointError",
    "InsufficientScopeError",
    "InvalidClientError",
    "InvalidGrantError",
    "InvalidSealingKey",
    "IssuerMismatchError",
    "LockLost",
    "LockTimeout",
    "OAuthError",
    "PkceNotSupportedError",
    "PlaintextDPoPKeyRefused",
    "RegistrationError",
    "ResourceMismatchError",
    "SealedStateError",
    "SignInDeferred",
    "StateMismatchError",
    "StateStoreError",
    "TokenError",
    "UnsafeStateFile",
]


class OAuthError(McpError):
    """Base class of the OAuth client's errors."""


class AuthorizationRequired(OAuthError):
    """A user must sign in: send them to ``authorization_url``, then call
    ``OAuthProvider.authorize(<the URL they were redirected to>)`` and connect again."""

    def __init__(self, authorization_url: str, state: str) -> None:
        super().__init__(f"authorization required: open {authorization_url}")
        self.authorization_url = authorization_url
        self.state = state


class SignInDeferred(OAuthError):
    """A sign-in is needed, but the rejected message is one nobody waits for (a notification,
    an answer to the server): no sign-in starts for it, and it is dropped. The next request
    signs in."""

    def __init__(self, server_url: str) -> None:
        super().__init__(
            f"{server_url} refused the token and a refresh did not help; a sign-in is not "
            "started for a message nobody waits for (a notification or an answer): it was "
            "dropped, and the next request signs in"
        )
        self.server_url = server_url


class InsecureEndpointError(OAuthError):
    """An OAuth endpoint is plain http on a host that is not loopback."""

    def __init__(self, url: str, what: str) -> None:
        super().__init__(
            f"refusing the {what} {url}: it must be https (or http on a loopback host)"
        )
        self.url = url


class ForbiddenEndpointError(InsecureEndpointError):
    """A URL the MCP server named (or its metadata did) resolves to an address the client
    does not connect to: link-local, or a private or loopback range the MCP server is not in,
    or plain http other than loopback to loopback. ``url`` is the URL, ``rule`` the rule."""

    def __init__(self, url: str, rule: str, what: str = "OAuth endpoint") -> None:
        OAuthError.__init__(self, f"refusing the {what} {url}: {rule}")
        self.url = url
        self.rule = rule
        self.what = what


class DiscoveryError(OAuthError):
    """No usable metadata was found for the server or its authorization server."""


class ResourceMismatchError(DiscoveryError):
    """The protected resource metadata names another resource than the server (RFC 9728 3.3)."""


class PkceNotSupportedError(DiscoveryError):
    """The authorization server metadata does not list S256 in code_challenge_methods_supported."""


class IssuerMismatchError(OAuthError):
    """An issuer did not match: the metadata ``issuer``, or the redirect's ``iss`` (RFC 9207)."""


class StateMismatchError(OAuthError):
    """The redirect's ``state`` matches no authorization this client started."""


class AuthorizationDenied(OAuthError):
    """The authorization server redirected back with an error (``error``, ``description``)."""

    def __init__(self, error: str, description: str | None = None) -> None:
        text = f"authorization failed: {error}"
        description = redact(description) if description else description
        if description:
            text += f" ({description[:300]})"
        super().__init__(text)
        self.error = error
        self.description = description


class DeviceGrantNotSupported(DiscoveryError):
    """The authorization server's metadata has no ``device_authorization_endpoint``
    (RFC 8628): it offers no device sign-in."""


class DeviceCodeExpired(OAuthError):
    """The device sign-in's user code expired (``expired_token``, or its ``expires_in``
    passed) before the user approved it: start a new sign-in."""


class DeviceSignInTimeout(OAuthError, TimeoutError):
    """The user did not approve the device sign-in within the call's timeout (or deadline)."""


class RegistrationError(OAuthError):
    """Dynamic client registration failed, or no way to get a client id was available."""


class TokenError(OAuthError):
    """The token endpoint refused a request (``error`` is the OAuth error code)."""

    def __init__(
        self, error: str, description: str | None = None, status: int | None = None
    ) -> None:
        text = f"token request failed: {error}"
        description = redact(description) if description else description  # before the cut
        if status is not None:
            text += f" (HTTP {status})"
        if description:
            text += f": {description[:300]}"
        super().__init__(text)
        self.error = error
        self.description = description
        self.status = status


class InvalidGrantError(TokenError):
    """``invalid_grant``: the authorization code or refresh token is invalid or expired."""


class InvalidClientError(TokenError):
    """``invalid_client`` or ``unauthorized_client``: the authorization server no longer
    accepts this client (for this grant); ``error`` says which."""


class InsufficientScopeError(OAuthError):
    """The server keeps asking for more scope; step-up stopped after its retry limit."""


class ExchangeTimeout(OAuthError, TimeoutError):
    """An OAuth endpoint did not answer in full within the exchange's time bound."""


class EndpointUnreachable(OAuthError):
    """An OAuth endpoint could not be reached (connection refused, name not resolved, TLS
    failure, reset): ``what`` says which endpoint (``"token endpoint"``...), ``url`` where."""

    def __init__(self, what: str, url: str, reason: str) -> None:
        super().__init__(f"cannot reach the {what} {url}: {reason}")
        self.what = what
        self.url = url


class StateStoreError(OAuthError):
    """The OAuth state store (``RedisStateStore``, ``FileStateStore``, your own) failed; the
    message names the store and what it was doing, the cause is the store's own error."""


class UnsafeStateFile(StateStoreError, ConfigError):
    """A :class:`~mcp_sync.oauth.FileStateStore` file that another user could have written
    (writable by its group or by everyone, or owned by someone else): refused, not read, as
    ssh refuses such files. Whoever can write it could have put their own token endpoint or
    client there, and fixing the mode would keep what they wrote. Also a
    :class:`~mcp_sync.errors.ConfigError` (a local file to fix: the CLI exits 2). ``path``
    names the file."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class SealedStateError(StateStoreError):
    """A value in the state store could not be opened: sealed with a key the sealer does not
    have, tampered with, moved from another server's entry, sealed where the store has no
    sealer, or unsealed where the store seals. ``store`` and ``key`` (the MCP server URL) say
    where, ``key_id`` which sealing key (None when unknown), ``reason`` what. Never the
    value's content. The state is not treated as empty: signing in again would overwrite
    what the rest of the fleet can still read."""

    def __init__(
        self,
        reason: str,
        *,
        store: str | None = None,
        key: str | None = None,
        key_id: str | None = None,
    ) -> None:
        text = "cannot open the OAuth state"
        if key is not None:
            text += f" of {key}"
        if store is not None:
            text += f" in {store}"
        if key_id is not None:
            text += f" (key id {key_id})"
        super().__init__(f"{text}: {reason}")
        self.reason = reason
        self.store = store
        self.key = key
        self.key_id = key_id


class PlaintextDPoPKeyRefused(StateStoreError):
    """A DPoP private key was about to be saved unsealed into a store other hosts read
    (``RedisStateStore`` with no sealer): anyone who reads Redis could then use the tokens
    bound to it. Give the store a ``sealer=`` (or ``$MCP_SYNC_OAUTH_KEYS``), or pass
    ``allow_plaintext_dpop_key=True`` to accept that."""

    option = "allow_plaintext_dpop_key"

    def __init__(self, store: str, key: str) -> None:
        super().__init__(
            f"refusing to save the DPoP private key of {key} unencrypted into {store}, which "
            "other hosts read: give the store a sealer (sealer=AesGcmSealer([...]) or "
            "$MCP_SYNC_OAUTH_KEYS), or pass allow_plaintext_dpop_key=True to store it in "
            "plain text"
        )
        self.store = store
        self.key = key


class InvalidSealingKey(OAuthError, ValueError):
    """A key given to :class:`~mcp_sync.oauth.sealing.AesGcmSealer` (or in
    ``$MCP_SYNC_OAUTH_KEYS``) is not 32 bytes, base64; the message says which (by position,
    never its value)."""


class CallbackError(OAuthError):
    """Waiting for the redirect failed: timed out, or the callback server was closed."""


def token_error(error: str, description: str | None, status: int | None) -> TokenError:
    """The most specific :class:`TokenError` for an OAuth error code."""
    if error == "invalid_grant":
        return InvalidGrantError(error, description, status)
    if error in ("invalid_client", "unauthorized_client"):
        return InvalidClientError(error, description, status)
    return TokenError(error, description, status)


class LockTimeout(OAuthError, TimeoutError):
    """The store's lock for a server stayed taken for longer than ``lock_wait``."""


class LockLost(OAuthError):
    """This worker's lock expired and another worker took it: its save was refused."""
