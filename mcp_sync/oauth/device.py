"""``DeviceFlowProvider``: sign-in on a machine with no browser (the device authorization
grant, RFC 8628).

The client asks the authorization server's ``device_authorization_endpoint`` (advertised in
its metadata, RFC 8414) for a device code and a user code, shows the user where to go
(``verification_uri``, ``verification_uri_complete``) and what to type, and polls the token
endpoint until the user approves or denies it there, on any other device.

Polling honours the server: every ``interval`` seconds (5 by default), 5 more after each
``slow_down`` (never more than :data:`MAX_INTERVAL`), until ``expires_in`` (at most
:data:`MAX_EXPIRY`: :class:`DeviceCodeExpired`), ``access_denied``
(:class:`AuthorizationDenied`), the call's abort signal (:class:`~mcp_sync.errors.Aborted`)
or its deadline (:class:`DeviceSignInTimeout`). The waits are on the abort event, so an abort
ends them at once. The server names what is shown: it is checked to be an https (or loopback)
URL and shown with control characters escaped, and bounded; the device code and the tokens
never reach a log record or an error.

Opt-in only, by choosing this provider: a script that wanted a browser never finds itself
printing a code instead (see "Headless sign-in" in docs/oauth.md).
"""

from __future__ import annotations

import html
import importlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from .._rules.numbers import call_timeout
from ..errors import Aborted
from ..redaction import hold
from ..terminal import safe
from . import _state
from ._deadline import inherited
from ._http import Limits, current_limits, exchange, limits, require_secure
from .discovery import Discovery, ServerMetadata, discover
from .dpop import DPoPKey
from .errors import (
    AuthorizationDenied,
    DeviceCodeExpired,
    DeviceGrantNotSupported,
    DeviceSignInTimeout,
    OAuthError,
    TokenError,
    token_error,
)
from .flow import TokenSet, client_authentication, token_request
from .provider import OAuthProvider
from .registration import ClientInfo, ClientMetadata

__all__ = [
    "DEVICE_CODE_GRANT",
    "MAX_EXPIRY",
    "MAX_INTERVAL",
    "DeviceCode",
    "DeviceCodeHandler",
    "DeviceFlowProvider",
    "show_device_code",
]

logger = logging.getLogger("mcp_sync.oauth")

#: RFC 8628's grant type at the token endpoint.
DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
#: RFC 8628 section 3.2: the interval when the server gives none, and what slow_down adds.
DEFAULT_INTERVAL = 5.0
SLOW_DOWN_STEP = 5.0
# A server saying 0 would have the client hammer its token endpoint.
_MIN_INTERVAL = 1.0
# RFC 8628 sets no upper bound: a server's 1e9 would be 31 years between polls, and 1e12 or
# Infinity more than a wait can be given (OverflowError).
#: The longest wait between polls, ``slow_down`` included.
MAX_INTERVAL = 60.0
#: The longest a user code is waited for (servers issue codes for 5 to 30 minutes).
MAX_EXPIRY = 3600.0
# expires_in is required; a server that leaves it out gets what a browser sign-in gets.
_DEFAULT_EXPIRY = 900.0
#: What is shown of a user code, and of a verification URI: a code is a few characters a
#: person types, a URI fits an address bar (a hostile server's may be megabytes).
_SHOWN_CODE = 100
_SHOWN_URI = 2048


@dataclass(frozen=True)
class DeviceCode:
    """What the user needs to approve a device sign-in: open ``verification_uri`` and type
    ``user_code`` (or open ``verification_uri_complete``, which carries the code). Renders
    itself in Jupyter (``_repr_html_``, ``_repr_markdown_``) and as one line in ``str()``,
    with control characters escaped."""

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    #: Seconds the code was valid for when issued.
    expires_in: float
    #: Seconds between polls, as the server asked.
    interval: float
    device_code: str = field(repr=False)
    issued_at: float = field(default_factory=time.monotonic, repr=False)

    def __str__(self) -> str:
        uri, user_code, complete = self.shown()
        text = f"To sign in, open {uri} and enter the code {user_code}"
        if complete:
            text += f" (or open {complete})"
        return text

    def _repr_markdown_(self) -> str:
        uri, user_code, complete = self.shown()
        code = "`" + user_code.replace("`", "'") + "`"
        text = f"**Sign in:** open <{html.escape(uri)}> and enter the code {code}"
        if complete:
            text += f" (or open <{html.escape(complete)}>)"
        return text

    def _repr_html_(self) -> str:
        def link(url: str) -> str:
            shown = html.escape(url)
            return f'<a href="{shown}" target="_blank" rel="noopener noreferrer">{shown}</a>'

        uri, user_code, complete = self.shown()
        text = (
            f"<div><b>Sign in:</b> open {link(uri)} and enter the code "
            f"<code style='font-size:1.3em'>{html.escape(user_code)}</code>"
        )
        if complete:
            text += f" (or open {link(complete)})"
        return text + "</div>"

    def shown(self) -> tuple[str, str, str | None]:
        """The verification URI, the user code and the complete URI as every rendering shows
        them (the CLI's too): the server wrote them, so each is escaped and bounded."""
        complete = self.verification_uri_complete
        return (
            safe(self.verification_uri, limit=_SHOWN_URI),
            safe(self.user_code, limit=_SHOWN_CODE),
            safe(complete, limit=_SHOWN_URI) if complete else None,
        )


#: ``on_code(code)``: show the user the code; called once per sign-in, before polling.
DeviceCodeHandler = Callable[[DeviceCode], None]


def _kernel() -> Any:
    """The running IPython kernel's shell, or None (IPython is never imported here)."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    shell = get() if get is not None else None
    return shell if getattr(shell, "kernel", None) is not None else None


def show_device_code(code: DeviceCode, stream: IO[str] | None = None) -> None:
    """The default ``on_code``: a rich display in a Jupyter kernel, else one line on
    ``stream`` (default stderr)."""
    if stream is None and _kernel() is not None:
        # (a kernel has IPython loaded already: imported only here, never at module import)
        importlib.import_module("IPython.display").display(code)
        return
    out = stream if stream is not None else sys.stderr
    out.write(f"{code}\n")
    out.flush()


def request_device_code(
    session: Any,
    server: ServerMetadata,
    client: ClientInfo,
    *,
    scope: str | None,
    resource: str | None,
) -> DeviceCode:
    """POST to the device authorization endpoint (RFC 8628 section 3.1)."""
    endpoint = device_endpoint(server)
    form: dict[str, str] = {}
    headers = client_authentication(client, server, form, None)
    if scope:
        form["scope"] = scope
    if resource:
        form["resource"] = resource
    answer = exchange(
        session, "POST", endpoint, "device authorization endpoint", data=form, headers=headers
    )
    body = answer.json
    if answer.status != 200 or body is None:
        error = body.get("error") if body else None
        description = body.get("error_description") if body else None
        raise token_error(
            error if isinstance(error, str) else "invalid_response",
            description if isinstance(description, str) else None,
            answer.status,
        )
    fields = {name: body.get(name) for name in ("device_code", "user_code", "verification_uri")}
    missing = [name for name, value in fields.items() if not isinstance(value, str) or not value]
    if missing:
        raise OAuthError(f"the device authorization response at {endpoint} lacks {missing[0]}")
    # Never fetched by the client, only shown: still only a web URL a user may be sent to.
    verification_uri = require_secure(str(fields["verification_uri"]), "verification URI")
    complete = body.get("verification_uri_complete")
    if isinstance(complete, str) and complete:
        require_secure(complete, "verification URI")
    else:
        complete = None
    return DeviceCode(
        user_code=str(fields["user_code"]),
        verification_uri=verification_uri,
        verification_uri_complete=complete,
        expires_in=min(MAX_EXPIRY, _seconds(body.get("expires_in"), _DEFAULT_EXPIRY)),
        interval=min(
            MAX_INTERVAL, max(_MIN_INTERVAL, _seconds(body.get("interval"), DEFAULT_INTERVAL))
        ),
        device_code=str(fields["device_code"]),
    )


def device_endpoint(server: ServerMetadata) -> str:
    """The server's ``device_authorization_endpoint``, or :class:`DeviceGrantNotSupported`."""
    endpoint = server.raw.get("device_authorization_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise DeviceGrantNotSupported(
            f"the authorization server {server.issuer} does not offer device sign-in: its "
            "metadata has no device_authorization_endpoint (RFC 8628)"
        )
    return require_secure(endpoint, "device authorization endpoint")


def _seconds(value: Any, default: float) -> float:
    """A non-negative number of seconds (Infinity too: the caller caps it), else ``default``
    (NaN, a string, a bool, a negative number)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return default


def poll(
    session: Any,
    server: ServerMetadata,
    client: ClientInfo,
    code: DeviceCode,
    *,
    scope: str | None,
    resource: str | None,
    dpop: DPoPKey | None,
) -> TokenSet:
    """Poll the token endpoint until the user approves (RFC 8628 section 3.4), under this
    thread's limits: their abort event and deadline end the wait."""
    bound = current_limits()
    interval = code.interval
    expires = code.issued_at + code.expires_in
    while True:
        now = time.monotonic()
        end = expires if bound.deadline is None else min(expires, bound.deadline)
        if bound.cancelled.wait(max(0.0, min(interval, end - now))):
            raise Aborted("the request that needed authorization was aborted")
        now = time.monotonic()
        if now >= expires:
            raise DeviceCodeExpired(
                f"the device code expired after {code.expires_in:g} s without approval"
            )
        if bound.deadline is not None and now >= bound.deadline:
            raise DeviceSignInTimeout(
                "the device sign-in was not approved within the call's timeout"
            )
        data = {"grant_type": DEVICE_CODE_GRANT, "device_code": code.device_code}
        if resource:
            data["resource"] = resource
        try:
            return token_request(
                session, server, client, data, requested_scope=scope, resource=resource, dpop=dpop
            )
        except TokenError as exc:
            if exc.error == "authorization_pending":
                continue
            if exc.error == "slow_down":
                interval = min(interval + SLOW_DOWN_STEP, MAX_INTERVAL)
                logger.debug("the token endpoint asked to slow down: polling every %g s", interval)
                continue
            if exc.error == "expired_token":
                raise DeviceCodeExpired(
                    "the device code expired before the user approved it"
                ) from None
            if exc.error == "access_denied":
                raise AuthorizationDenied("access_denied", exc.description) from None
            raise


class DeviceFlowProvider(OAuthProvider):
    """An :class:`OAuthProvider` that signs the user in with the device authorization grant
    (RFC 8628) instead of a browser redirect: for scripts, containers and remote kernels.

    ``on_code``: shows the user the code (default :func:`show_device_code`: a rich display in
    Jupyter, else a line on stderr). ``client_id`` (with ``client_secret`` for a confidential
    client): most device-grant servers want a pre-registered client; without one, dynamic
    registration asks for the device and refresh grants. The rest as for
    :class:`OAuthProvider` (there is no ``redirect_url``). A sign-in started by a request
    waits by that request's timeout; :meth:`sign_in` waits by its own.
    """

    def __init__(
        self,
        server_url: str,
        *,
        on_code: DeviceCodeHandler | None = None,
        client_metadata: ClientMetadata | None = None,
        **options: Any,
    ) -> None:
        metadata = client_metadata or ClientMetadata(
            grant_types=(DEVICE_CODE_GRANT, "refresh_token"),
            response_types=(),
            application_type="native",
        )
        super().__init__(server_url, None, client_metadata=metadata, **options)
        self.on_code: DeviceCodeHandler = on_code or show_device_code

    def __repr__(self) -> str:
        return "<DeviceFlowProvider" + super().__repr__()[len("<OAuthProvider") :]

    def sign_in(
        self,
        *,
        scope: str | None = None,
        timeout: float | None = None,
        cancelled: threading.Event | None = None,
    ) -> TokenSet:
        """Sign in now: show the code and wait up to ``timeout`` seconds (None: until the
        code expires) for the user, or until ``cancelled`` is set. Tokens already in the
        store are returned as they are (they refresh as usual): no code is shown."""
        timeout = call_timeout(timeout, "sign_in")
        deadline = None if timeout is None else time.monotonic() + timeout
        with limits(Limits(self.timeout, cancelled or threading.Event(), True, deadline)):
            discovery = self._discover(None)
            self._remember(discovery)
            self._authorize(discovery, scope or self._initial_scope(None, discovery))
        tokens = self._tokens
        assert tokens is not None
        return tokens

    def start_authorization(self, *, scope: str | None = None) -> str:
        """Not for the device grant: there is no authorization URL (use :meth:`sign_in`)."""
        raise OAuthError("a DeviceFlowProvider signs in with sign_in(), not a redirect")

    def _discover(self, resource_metadata_url: str | None) -> Discovery:
        discovery = discover(
            self.session,
            self.server_url,
            resource_metadata_url,
            server_metadata_url=self.authorization_server_metadata_url,
            authorization_code=False,  # (no PKCE here: the device code is the secret)
        )
        device_endpoint(discovery.server)
        return discovery

    def _authorize(
        self,
        discovery: Discovery,
        scope: str | None,
        step_up: bool = False,
        *,
        stale: str | None = None,
    ) -> bool:
        current_limits().check_interactive(self.server_url)  # a notification shows no code
        with self.store.sign_in_lock(self._key):
            fresher = _state.fresher_tokens(self._load(), stale, scope if step_up else None)
            if fresher is not None:  # another worker signed in while this one waited
                self._tokens = fresher
                return True
            server = discovery.server
            client = self._client_for(server)
            code = request_device_code(
                self.session, server, client, scope=scope, resource=discovery.resource
            )
            hold(self, code.device_code)  # no error or log record shows it
            current_limits().check()
            self.on_code(code)
            tokens = poll(
                self.session,
                server,
                client,
                code,
                scope=scope,
                resource=discovery.resource,
                dpop=self._dpop_for(server),
            )
            # approved: kept even past the request's deadline (the code is spent)
            with limits(inherited(self.timeout, deadline=False)):
                self._set_tokens(tokens, extra=None if step_up else {"stepUp": {}})
            logger.info("signed in to %s (device grant)", self.server_url)
            return True
