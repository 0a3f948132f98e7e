"""``mcp_sync.oauth``: the MCP authorization client (2025-03-26 .. 2026-07-28).

It plugs into the HTTP transports through :class:`mcp_sync.auth.AuthProvider`::

    from mcp_sync.oauth import CallbackServer, FileStateStore, OAuthProvider

    with CallbackServer.listen() as callbacks:
        provider = OAuthProvider(
            "https://example.com/mcp", callbacks.redirect_url,
            store=FileStateStore("~/.config/my-app/oauth.json"),
            on_redirect=callbacks.redirect_handler(),
        )
        with mcp_sync.connect("https://example.com/mcp", auth=provider) as client:
            print(client.list_tools())

Discovery (:mod:`.discovery`), PKCE (:mod:`.pkce`), client registration
(:mod:`.registration`), the exchanges (:mod:`.flow`), orchestration (:mod:`.provider`),
storage (:mod:`.store`; sealed at rest, :mod:`.sealing`) and redirects (:mod:`.callback`)
each live in their own module; so do the grants without a user (:mod:`.client_credentials`,
:mod:`.jwt_bearer` for workload identity federation and enterprise-managed authorization),
DPoP (:mod:`.dpop`) and the device grant for machines without a browser (:mod:`.device`).
It is not an authorization server and does not open browsers unless asked to.
"""

from .adapter import TokenSource, adapt
from .callback import CallbackServer, PendingCallback, default_page, headless_redirect
from .client_credentials import ClientCredentialsProvider
from .device import DeviceCode, DeviceFlowProvider, show_device_code
from .discovery import Discovery, ResourceMetadata, ServerMetadata, discover
from .dpop import DPoPKey
from .errors import (
    AuthorizationDenied,
    AuthorizationRequired,
    CallbackError,
    DeviceCodeExpired,
    DeviceGrantNotSupported,
    DeviceSignInTimeout,
    DiscoveryError,
    EndpointUnreachable,
    ExchangeTimeout,
    ForbiddenEndpointError,
    InsecureEndpointError,
    InsufficientScopeError,
    InvalidClientError,
    InvalidGrantError,
    InvalidSealingKey,
    IssuerMismatchError,
    LockLost,
    LockTimeout,
    OAuthError,
    PkceNotSupportedError,
    PlaintextDPoPKeyRefused,
    RegistrationError,
    ResourceMismatchError,
    SealedStateError,
    SignInDeferred,
    StateMismatchError,
    StateStoreError,
    TokenError,
    UnsafeStateFile,
)
from .flow import CallbackResult, PendingAuthorization, TokenSet
from .jwt_bearer import AssertionSource, IdJagExchange, JwtBearerProvider
from .provider import OAuthProvider, RedirectHandler
from .registration import ClientInfo, ClientMetadata
from .sealing import AesGcmSealer, Sealer
from .store import FileStateStore, MemoryStateStore, StateStore

__all__ = [
    "AesGcmSealer",
    "AssertionSource",
    "AuthorizationDenied",
    "AuthorizationRequired",
    "CallbackError",
    "CallbackResult",
    "CallbackServer",
    "ClientCredentialsProvider",
    "ClientInfo",
    "ClientMetadata",
    "DPoPKey",
    "DeviceCode",
    "DeviceCodeExpired",
    "DeviceFlowProvider",
    "DeviceGrantNotSupported",
    "DeviceSignInTimeout",
    "Discovery",
    "DiscoveryError",
    "EndpointUnreachable",
    "ExchangeTimeout",
    "ForbiddenEndpointError",
    "FileStateStore",
    "InsecureEndpointError",
    "InsufficientScopeError",
    "InvalidClientError",
    "IdJagExchange",
    "InvalidGrantError",
    "InvalidSealingKey",
    "IssuerMismatchError",
    "JwtBearerProvider",
    "LockLost",
    "LockTimeout",
    "MemoryStateStore",
    "OAuthError",
    "OAuthProvider",
    "PendingAuthorization",
    "PendingCallback",
    "PkceNotSupportedError",
    "PlaintextDPoPKeyRefused",
    "RedirectHandler",
    "RegistrationError",
    "ResourceMetadata",
    "ResourceMismatchError",
    "Sealer",
    "SealedStateError",
    "ServerMetadata",
    "SignInDeferred",
    "StateMismatchError",
    "StateStoreError",
    "StateStore",
    "TokenError",
    "TokenSet",
    "TokenSource",
    "UnsafeStateFile",
    "adapt",
    "default_page",
    "discover",
    "headless_redirect",
    "show_device_code",
]
