"""Getting the authorization redirect back: a loopback HTTP listener, and a headless handler.

:class:`CallbackServer` listens on 127.0.0.1 for the browser's redirect::

    with CallbackServer.listen() as callbacks:
        provider = OAuthProvider(
            url, callbacks.redirect_url, on_redirect=callbacks.redirect_handler()
        )
        client = mcp_sync.connect(url, auth=provider)

``wait_for_callback(state)`` registers interest in one redirect *before* the browser is sent
off, so that a fast redirect is never missed; ``PendingCallback.wait()`` blocks for it.

:func:`headless_redirect` follows nothing: it GETs the authorization URL and reads the
``Location`` header, for authorization servers that approve without a user (test servers,
automation, the conformance suite), by the provider's rules for server-named URLs.
"""

from __future__ import annotations

import html
import logging
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import requests

from .._rules.numbers import call_timeout, number, whole
from ..transports._http.user_agent import with_user_agent
from ._egress import Egress, current_rules, guard_session
from ._http import DEFAULT_TIMEOUT, current_limits, require_secure
from .errors import AuthorizationDenied, CallbackError, OAuthError, StateMismatchError
from .flow import CallbackResult

__all__ = ["CallbackServer", "PendingCallback", "default_page", "headless_redirect"]

logger = logging.getLogger("mcp_sync.oauth")

#: How often a wait for the redirect looks whether its flow was aborted.
_SLICE = 0.05

#: ``page(result, error) -> HTML`` for the browser tab after the redirect.
PageRenderer = Callable[[CallbackResult, "Exception | None"], str]


def default_page(result: CallbackResult, error: Exception | None) -> str:
    """A plain page: signed in, or what went wrong (escaped)."""
    if error is None and not result.error:
        title, text = "Signed in", "You can close this tab and return to the application."
    else:
        title = "Sign-in failed"
        if error is not None:
            text = html.escape(str(error))
        else:
            described = f": {result.error_description}" if result.error_description else ""
            text = html.escape(f"{result.error}{described}")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        f"{title}</title></head><body style='font-family:sans-serif;margin:3em'>"
        f"<h1>{title}</h1><p>{text}</p></body></html>"
    )


class PendingCallback:
    """One expected redirect, registered by :meth:`CallbackServer.wait_for_callback`."""

    def __init__(self, server: CallbackServer, state: str) -> None:
        self.state = state
        self._server = server
        self._done = threading.Event()
        self._result: CallbackResult | None = None
        self._error: Exception | None = None

    def __repr__(self) -> str:
        return f"<PendingCallback state={self.state[:6]}... done={self._done.is_set()}>"

    def _settle(self, result: CallbackResult | None, error: Exception | None) -> None:
        if not self._done.is_set():
            self._result, self._error = result, error
            self._done.set()

    def wait(self, timeout: float | None = None, *, raise_on_error: bool = True) -> CallbackResult:
        """Block until the redirect arrives; its code, state and iss.

        Raises :class:`CallbackError` on timeout (default: the server's) or when the server is
        closed, :class:`~mcp_sync.errors.Aborted` when the request that needed the sign-in
        was aborted or its client closed, :class:`StateMismatchError` when a redirect with
        another state arrived, and :class:`AuthorizationDenied` for an ``error=`` redirect
        (unless ``raise_on_error`` is False: the provider checks ``iss`` before it looks at
        an error).
        """
        limit = self._server.timeout if timeout is None else call_timeout(timeout, "wait")
        # The user may be away for minutes: meanwhile the request that needed this sign-in
        # can be aborted, or its client closed, which ends the flow's limits (a no-op
        # outside a flow). Short slices see that at once.
        flow = current_limits()
        deadline = time.monotonic() + limit
        try:
            while not self._done.wait(min(_SLICE, max(deadline - time.monotonic(), 0.0))):
                flow.check()
                if time.monotonic() >= deadline:
                    raise CallbackError(f"no redirect arrived within {limit:g} s")
        finally:
            self._server._forget(self)
        if self._error is not None:
            raise self._error
        assert self._result is not None
        if raise_on_error and self._result.error:
            raise AuthorizationDenied(self._result.error, self._result.error_description)
        return self._result


class CallbackServer:
    """A loopback HTTP listener for authorization redirects (see the module docstring)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        page: PageRenderer = default_page,
    ) -> None:
        self.path = path if path.startswith("/") else "/" + path
        self.timeout = number(timeout, "CallbackServer: timeout", positive=True)
        port = whole(port, "CallbackServer: port", maximum=65535)
        self.page = page
        self._lock = threading.Lock()
        self._waiters: dict[str, PendingCallback] = {}
        self._closed = False
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        address = self._httpd.server_address
        bound_host = address[0] if isinstance(address[0], str) else address[0].decode()
        bound_port = address[1]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        #: The URL to register as ``redirect_uri``.
        self.redirect_url = f"http://{shown}:{bound_port}{self.path}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="mcp-sync-oauth-callback",
            daemon=True,
        )
        self._thread.start()

    @classmethod
    def listen(
        cls,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        page: PageRenderer = default_page,
    ) -> CallbackServer:
        """Start listening (``port=0``: any free port; see ``redirect_url``)."""
        return cls(host, port, path, timeout, page)

    def __repr__(self) -> str:
        return f"<CallbackServer {self.redirect_url}>"

    def __enter__(self) -> CallbackServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def wait_for_callback(self, state: str) -> PendingCallback:
        """Register for the redirect carrying ``state``; call before opening the browser."""
        pending = PendingCallback(self, state)
        with self._lock:
            if self._closed:
                raise CallbackError("the callback server is closed")
            if state in self._waiters:
                raise CallbackError("a wait for this state is already registered")
            self._waiters[state] = pending
        return pending

    def redirect_handler(
        self, open_browser: Callable[[str], object] | None = webbrowser.open
    ) -> Callable[[str], CallbackResult]:
        """An ``on_redirect`` for :class:`OAuthProvider`: open the browser, wait, return."""

        def on_redirect(authorization_url: str) -> CallbackResult:
            query = parse_qs(urlsplit(authorization_url).query)
            state = (query.get("state") or [""])[0]
            pending = self.wait_for_callback(state)
            opened = open_browser(authorization_url) if open_browser is not None else False
            if not opened:
                print(f"Open this URL to sign in:\n  {authorization_url}", file=sys.stderr)
            return pending.wait(raise_on_error=False)

        return on_redirect

    def close(self) -> None:
        """Stop listening; pending waits raise :class:`CallbackError`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiters = list(self._waiters.values())
            self._waiters.clear()
        for pending in waiters:
            pending._settle(None, CallbackError("the callback server was closed"))
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5.0)

    def _forget(self, pending: PendingCallback) -> None:
        with self._lock:
            if self._waiters.get(pending.state) is pending:
                del self._waiters[pending.state]

    def _deliver(self, result: CallbackResult, path: str) -> Exception | None:
        """Hand a redirect to its waiter; the error that failed the wait(s), if any."""
        with self._lock:
            pending = self._waiters.pop(result.state or "", None)
            failed = [pending] if pending is not None else list(self._waiters.values())
            if pending is None:
                self._waiters.clear()
        error: Exception | None = None
        if path != self.path:
            error = CallbackError(f"a redirect arrived at {path}, not at {self.path}")
        elif pending is None:
            error = StateMismatchError("a redirect arrived with a state no sign-in is waiting for")
        elif not result.code and not result.error:
            error = CallbackError("the redirect carried no code and no error")
        for waiter in failed:
            waiter._settle(None if error is not None else result, error)
        return error

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                result = CallbackResult.from_url("?" + parts.query)
                if parts.path != server.path:
                    # a redirect meant for us on the wrong path fails its wait now, not at
                    # its timeout; other stray requests (a favicon) change nothing
                    if result.state or result.code or result.error:
                        server._deliver(result, parts.path)
                    self.send_error(404)
                    return
                error = server._deliver(result, parts.path)
                body = server.page(result, error).encode("utf-8")
                self.send_response(200 if error is None and not result.error else 400)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # the query carries the code: never log it

        return Handler


def headless_redirect(
    session: requests.Session | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Callable[[str], CallbackResult]:
    """An ``on_redirect`` that fetches the authorization URL itself and reads ``Location``.

    For authorization servers that approve without a user (automation, test servers). The
    URL is the metadata's, so it is fetched by the rules for server-named URLs of the
    provider signing in (refused:
    :class:`~mcp_sync.oauth.errors.ForbiddenEndpointError`); ``session`` gets the adapter
    that checks them mounted, as ``OAuthProvider(session=...)`` does.
    """
    number(timeout, "headless_redirect: timeout", positive=True)

    def on_redirect(authorization_url: str) -> CallbackResult:
        require_secure(authorization_url, "authorization endpoint")
        # Called on its own, outside a provider, no MCP server names a range to trust: the
        # URL's own (link-local and non-host addresses are refused whatever it is).
        egress = current_rules() or Egress(authorization_url)
        http = guard_session(session or requests.Session(), egress)
        try:
            # only the headers matter: the body (a hostile server's, maybe huge) is never read
            with http.get(
                authorization_url,
                headers=with_user_agent({}, http),
                allow_redirects=False,
                timeout=timeout,
                stream=True,
            ) as response:
                status, location = response.status_code, response.headers.get("Location")
        finally:
            if session is None:
                http.close()
        if status not in (301, 302, 303, 307, 308) or not location:
            raise OAuthError(
                f"the authorization endpoint answered HTTP {status} without a redirect: it "
                "needs a user"
            )
        return CallbackResult.from_url(location)

    return on_redirect
