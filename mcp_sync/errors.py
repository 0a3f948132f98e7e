"""The exceptions mcp_sync raises, in one hierarchy.

Catch :class:`McpError` for "anything MCP went wrong", or one of the groups under it for
what went wrong: the server (:class:`ServerError`), the connection (:class:`ConnectionFailure`),
the call itself (:class:`InvalidUsage`), or the sign-in (``OAuthError``). Every error sits under
exactly one group (``tests/test_errors.py`` walks them); the one under two is
``UnsafeStateFile``, an OAuth store's file that is also a ``ConfigError``. Tool failures are not
exceptions: they come back as results with ``result.is_error`` set.

::

    McpError
    ├── ServerError                 the server answered, and not as asked
    │   ├── RpcError                the peer answered with a JSON-RPC error
    │   │   ├── UrlElicitationRequired  -32042: the user must open URLs first (2025-11-25)
    │   │   └── MissingClientCapability -32021: the request needed a capability we did not
    │   │                           declare
    │   ├── ProtocolError           the peer broke the protocol (bad JSON-RPC, bad result shape)
    │   │   ├── InvalidMessage      a JSON value that is not a JSON-RPC 2.0 message
    │   │   └── OutputValidationError  a tool's structuredContent does not match its
    │   │                           outputSchema, or the schema cannot be used
    │   ├── UnsupportedProtocolVersion  no protocol version both sides speak
    │   ├── CapabilityError         the server did not advertise what this call needs
    │   ├── NotSupportedInEra       the negotiated protocol era has no such concept
    │   ├── ToolError               a tool result with isError, raised where a framework's
    │   │                           tools signal failure by raising (mcp_sync.integrations,
    │   │                           client.functions)
    │   ├── ToolChanged             a tool's definition is not the one pinned (mcp_sync.pins)
    │   ├── SkillVerificationError  a skill file does not match its entry (digest, size, ...)
    │   └── TaskCancelled           the result of a task that was cancelled was asked for
    ├── ConnectionFailure           the call got no answer
    │   ├── RequestTimeout          also a builtin TimeoutError
    │   ├── Aborted                 the caller's AbortSignal fired (or Ctrl-C)
    │   ├── ConnectionClosed        the transport closed; carries the cause
    │   │   └── CrashLoop           recovery= gave up for now: the server keeps failing
    │   ├── TransportError          I/O failed
    │   │   ├── WriteTimeout        a message could not be written in time (also TimeoutError)
    │   │   ├── NetworkError        an HTTP exchange failed in the network (.sent)
    │   │   │   ├── ConnectFailed   no connection was made: the request never left
    │   │   │   ├── TlsError        TLS failed (an untrusted certificate, a refused client one)
    │   │   │   └── ProxyError      the proxy refused (407: its credentials) or failed the tunnel
    │   │   ├── ServerStartError    a stdio server could not be started
    │   │   │   └── SandboxUnavailable  the sandbox asked for cannot be set up here
    │   │   ├── HttpError           an HTTP status the transport could not use
    │   │   ├── InvalidHeaderValue  a header that cannot be sent (a token ending in a newline,
    │   │   │                       Transfer-Encoding); also a builtin ValueError
    │   │   └── SessionExpired      the server forgot our Mcp-Session-Id (HTTP 404)
    │   ├── StdioServerError        a command is not an MCP stdio server (it printed
    │   │                           something else, e.g. the URL of an HTTP server)
    │   ├── ServerConnectError      one server of a config's group could not be connected
    │   └── ServerUnavailable       a group's server is skipped: its circuit breaker is open
    ├── InvalidUsage                the call was wrong, whatever the server
    │   ├── UnencodableValue        a message holds what JSON over UTF-8 cannot carry (a lone
    │   │                           surrogate, NaN, an object); nothing was sent (also a
    │   │                           builtin TypeError and ValueError)
    │   ├── ToolArgumentError       a typed tool function's arguments do not fit the tool's
    │   │                           inputSchema (also a builtin TypeError and ValueError)
    │   ├── UnknownName             a name or URI nobody offers (also a builtin KeyError)
    │   ├── InvalidStateError       the client is not in a state that allows the call
    │   ├── ConfigError             an mcpServers config is unreadable or an entry is wrong
    │   │                           (also a builtin ValueError)
    │   ├── GroupError              a ClientGroup was misused (a taken or invalid server name)
    │   ├── MissingExtra            an option needs an optional extra (also an ImportError)
    │   └── CassetteError           a recorded session (mcp_sync.cassette) is unreadable
    │       └── CassetteMismatch    a request the recording has no answer for
    └── OAuthError                  the OAuth client's errors: their own subtree in
                                    mcp_sync.oauth.errors (loaded with mcp_sync.oauth)

Two warnings live here too, ``UserWarning`` subclasses outside the tree (and ``__all__``):
``ToolChangedWarning``, a pinned tool changed under the ``"warn"`` policy;
``HiddenCharactersWarning``, invisible characters were stripped from a tool's text on its way
to a model. Both are exported by ``mcp_sync``.

Messages never hold a credential the client holds: a token, a client secret or a secret
header value in them is replaced by ``[redacted]`` when the error is made (``mcp_sync.redaction``).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from ._presentation.stderr_text import shown_stderr
from .redaction import redact, scrub

__all__ = [
    "Aborted",
    "CapabilityError",
    "CassetteError",
    "CassetteMismatch",
    "ConfigError",
    "ConnectFailed",
    "ConnectionClosed",
    "ConnectionFailure",
    "CrashLoop",
    "GroupError",
    "HttpError",
    "InvalidHeaderValue",
    "InvalidMessage",
    "InvalidUsage",
    "InvalidStateError",
    "McpError",
    "MissingClientCapability",
    "NetworkError",
    "MissingExtra",
    "NotSupportedInEra",
    "OutputValidationError",
    "ProtocolError",
    "ProxyError",
    "RequestTimeout",
    "RpcError",
    "ServerConnectError",
    "ServerError",
    "SandboxUnavailable",
    "ServerStartError",
    "ServerUnavailable",
    "SessionExpired",
    "SkillVerificationError",
    "StdioServerError",
    "TaskCancelled",
    "TlsError",
    "ToolArgumentError",
    "ToolChanged",
    "ToolError",
    "TransportError",
    "UnencodableValue",
    "UnknownName",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
    "WriteTimeout",
]


class McpError(Exception):
    """Base class of every error mcp_sync raises.

    An error is a value: ``copy.copy`` and a pickle round trip (Dask, Ray,
    ``multiprocessing``) give the same type with the same message, attributes, notes and
    cause, whatever its ``__init__`` takes. A copy starts with no traceback; a pickled cause
    that cannot itself be pickled arrives as an ``Exception`` holding its type and text.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(arg) if isinstance(arg, str) else arg for arg in args))
        scrub(sys.exc_info()[1])  # what is being handled becomes this error's context

    # A subclass's __init__ takes its own arguments (CrashLoop's attempts), not its message:
    # the builtin way, calling it again with ``args``, cannot rebuild it. These rebuild it
    # from its message and attributes as they are, without running it.
    def __copy__(self) -> McpError:
        cause, suppress = self.__cause__, self.__suppress_context__
        return _rebuilt(type(self), self.args, vars(self), cause, suppress)

    def __reduce__(self) -> tuple[Any, ...]:
        state = {name: _portable(value) for name, value in vars(self).items()}
        cause = _portable(self.__cause__)
        return _rebuilt, (type(self), self.args, state, cause, self.__suppress_context__)


def _rebuilt(
    cls: type[McpError],
    args: tuple[object, ...],
    state: dict[str, Any],
    cause: BaseException | None,
    suppress_context: bool,
) -> McpError:
    """An error of type ``cls`` as it was: the builtin bases' ``__init__`` (which set
    ``ImportError.msg``, ``OSError.errno``) with its ``args``, then its attributes."""
    error = cls.__new__(cls, *args)
    super(McpError, error).__init__(*args)
    vars(error).update(state)
    error.__cause__ = cause
    error.__suppress_context__ = suppress_context
    return error


def _portable(value: Any) -> Any:
    """``value``, unless it is another library's exception that cannot be pickled (it holds
    a lock, a socket, a local class): then its type and text, so that the error holding it
    still can be."""
    if not isinstance(value, BaseException) or isinstance(value, McpError):
        return value
    import pickle  # (only an error being pickled loads it)

    try:
        pickle.dumps(value)
    except Exception:
        return Exception(f"{type(value).__qualname__}: {value}")
    return value


# -- the groups a user catches by: every error is under one of them (or OAuthError) ----------


class ServerError(McpError):
    """The server answered, and not as asked: it refused the request (a JSON-RPC error), broke
    the protocol, lacks what the call needs (a capability, a protocol version, an era's
    operation), or what it served failed a check (a tool that failed, a tool that differs from
    its pin, a skill file that differs from its entry, a cancelled task). The same call again
    will not help."""


class ConnectionFailure(McpError):
    """The call got no answer: the server could not be started or reached, I/O failed, the
    connection closed, no answer came in time, or the call was cut short (:class:`Aborted`:
    you asked for that). The server may be fine: a call that is safe to repeat may be tried
    again."""


class InvalidUsage(McpError):
    """The call was wrong, whatever the server: a bad argument, option, name or file (a
    config, a recording), an optional extra not installed, or a call the client's state does
    not allow. Fix the code or the input."""


class RpcError(ServerError):
    """The peer answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        message = redact(message)
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> RpcError:
        """Build the most specific subclass for a JSON-RPC ``error`` object."""
        code = error["code"]
        message = str(error.get("message", ""))
        data = error.get("data")
        if code == UrlElicitationRequired.CODE:
            return UrlElicitationRequired(code, message, data)
        if code == MissingClientCapability.CODE:
            return MissingClientCapability(code, message, data)
        return cls(code, message, data)


class UrlElicitationRequired(RpcError):
    """-32042: the server needs the user to visit URLs before it can answer (2025-11-25).

    ``elicitations`` holds the URL-mode elicitation requests (dicts with ``url``, ``message``
    and ``elicitationId``) from the error's data.
    """

    CODE = -32042

    @property
    def elicitations(self) -> list[dict[str, Any]]:
        data = self.data if isinstance(self.data, dict) else {}
        items = data.get("elicitations", [])
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    @property
    def urls(self) -> list[str]:
        return [str(item["url"]) for item in self.elicitations if "url" in item]


class MissingClientCapability(RpcError):
    """-32021: the request needed a client capability that was not declared (2026-07-28)."""

    CODE = -32021

    @property
    def required_capabilities(self) -> Any:
        return self.data.get("requiredCapabilities") if isinstance(self.data, dict) else None


class RequestTimeout(ConnectionFailure, TimeoutError):
    """A request got no answer within its timeout. It was cancelled on the wire."""

    def __init__(self, method: str, timeout: float, detail: str | None = None) -> None:
        text = f"{method} timed out after {timeout:g} s"
        super().__init__(f"{text}: {detail}" if detail else text)
        self.method = method
        self.timeout = timeout


class Aborted(ConnectionFailure):
    """The request was aborted through its ``signal`` (or by Ctrl-C) and cancelled on the wire."""

    def __init__(self, reason: object = None) -> None:
        super().__init__(f"aborted: {reason}" if reason is not None else "aborted")
        self.reason = reason


class ConnectionClosed(ConnectionFailure):
    """The connection to the server is closed; ``cause`` says why when known.

    For a stdio server that died, ``exit_status`` and ``stderr_tail`` tell how. ``sent`` is
    False when the request it ended never left this process (the connection was already
    closed when it was sent): the server did not run it, so sending it again is safe.
    """

    #: False: the request was never written; None: it may have reached the server.
    sent: bool | None = None

    def __init__(
        self,
        message: str = "connection closed",
        *,
        cause: BaseException | None = None,
        exit_status: int | None = None,
        stderr_tail: str | None = None,
    ) -> None:
        text = message
        if exit_status is not None:
            text += f" (exit status {exit_status})"
        if cause is not None:
            text += f": {cause}"
        if stderr_tail:
            # redacted before it is cut: never half a secret
            text += f"\n--- server stderr (last lines) ---\n{shown_stderr(redact(stderr_tail))}"
        super().__init__(text)
        self.cause = cause
        self.exit_status = exit_status
        self.stderr_tail = stderr_tail
        if cause is not None:
            scrub(cause)
            self.__cause__ = cause


class CrashLoop(ConnectionClosed):
    """With ``recovery=``: the server failed ``attempts`` times in a row (it exits as it starts
    or right after its handshake, an HTTP server keeps refusing or forgetting the session), so
    the ``Backoff`` is spent. Calls fail at once with this for ``retry_in`` seconds (until
    ``retry_at``, a ``time.monotonic()`` value); the first call after that tries once more.
    ``exit_status`` and ``stderr_tail`` are those of the last failure, when a stdio server's."""

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        retry_at: float,
        retry_in: float,
        exit_status: int | None = None,
        stderr_tail: str | None = None,
    ) -> None:
        super().__init__(message, exit_status=exit_status, stderr_tail=stderr_tail)
        self.attempts = attempts
        self.retry_at = retry_at
        self.retry_in = retry_in
        self.sent = False  # nothing was sent: it is safe to call again later


class TransportError(ConnectionFailure):
    """A transport could not send or receive.

    A transport that can tell which request an error belongs to sets ``request_id``: only that
    request fails. Otherwise the error is reported and the connection goes on.
    """

    def __init__(self, message: str, *, request_id: str | int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


class WriteTimeout(TransportError, TimeoutError):
    """A message could not be written before its deadline (the peer stopped reading).

    ``partial`` is True when part of it was written: the stream is then unrecoverable and
    the transport closes itself. The session turns this into the call's
    :class:`RequestTimeout`.
    """

    def __init__(self, message: str, *, partial: bool) -> None:
        super().__init__(message)
        self.partial = partial


class NetworkError(TransportError):
    """An HTTP exchange failed in the network: refused, unresolvable, reset, timed out, TLS.

    ``sent`` is False when the request provably never reached the server (see
    :class:`ConnectFailed`), so sending it again is safe; None when it may have (a reset or a
    read timeout after the request went out). ``__cause__`` is the HTTP library's exception.
    """

    def __init__(
        self, message: str, *, sent: bool | None = None, request_id: str | int | None = None
    ) -> None:
        super().__init__(message, request_id=request_id)
        self.sent = sent


class ConnectFailed(NetworkError):
    """No connection to the server was made (refused, the host did not resolve, connecting
    timed out): no byte of the request left, so ``sent`` is False."""

    def __init__(self, message: str, *, request_id: str | int | None = None) -> None:
        super().__init__(message, sent=False, request_id=request_id)


class ServerStartError(TransportError):
    """The server process could not be started (missing command, not executable, bad cwd).

    ``command`` is the command as given; ``__cause__`` holds the underlying ``OSError``.
    """

    def __init__(self, message: str, *, command: str) -> None:
        super().__init__(message)
        self.command = command


class SandboxUnavailable(ServerStartError):
    """A stdio server was asked to run in a sandbox that cannot be set up on this machine
    (no ``bwrap``, user namespaces not allowed, another OS, a limit the kernel would not
    enforce). The message says what to install or to allow; the server was not started.
    """


class TlsError(NetworkError):
    """TLS failed: the server's certificate is not trusted or does not name the host, or the
    server refused the client certificate. Names the URL and OpenSSL's reason, never a key."""


class ProxyError(NetworkError):
    """The HTTP proxy refused (407: its credentials are missing or wrong) or failed the
    ``CONNECT`` tunnel. ``proxy`` is its URL without the credentials, which no message holds."""

    def __init__(self, message: str, *, proxy: str, request_id: str | int | None = None) -> None:
        super().__init__(message, request_id=request_id)
        self.proxy = proxy


class HttpError(TransportError):
    """The server answered with an HTTP status the transport could not use.

    ``body`` holds at most the first 8 KiB of the response body (a credential the client
    holds that it echoes is redacted there too).
    """

    def __init__(
        self,
        status: int,
        body: str = "",
        *,
        message: str | None = None,
        request_id: str | int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        text = message or f"HTTP {status}"
        body = redact(body)  # before the summary cuts it: never half a secret
        summary = _body_summary(body)
        if summary:
            text += f": {summary}"
        super().__init__(text, request_id=request_id)
        self.status = status
        self.body = body
        self.headers = headers or {}


def _rpc_error_in(body: str) -> str | None:
    """A JSON-RPC error body said as :class:`RpcError` says it: ``message (JSON-RPC error N)``."""
    if '"error"' not in body:
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    error = value.get("error") if isinstance(value, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    return f"{error['message']} (JSON-RPC error {error.get('code')})"


_TAG = re.compile(r"<(head|script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)
_BODY_SUMMARY_LIMIT = 200


def _body_summary(body: str) -> str:
    """An error body as one short line for a message: a JSON-RPC error's message and code,
    the text of an HTML page without its markup, whitespace collapsed, at most 200 characters
    (``body`` keeps it all)."""
    rpc = _rpc_error_in(body)
    if rpc is not None:
        body = rpc
    elif "<" in body and ">" in body:
        body = _TAG.sub(" ", body)
    text = " ".join(body.split())
    if len(text) > _BODY_SUMMARY_LIMIT:
        text = text[: _BODY_SUMMARY_LIMIT - 1] + "\u2026"
    return text


class InvalidHeaderValue(TransportError, ValueError):
    """A header cannot be sent: its value holds a line break, another control character or a
    character beyond Latin-1 (a token read from a file often ends with a newline), or it is one
    the HTTP library or the protocol sets itself (``Transfer-Encoding``, ``Mcp-Session-Id``...).
    ``header`` names the header; the value, often a credential, is never quoted. Nothing was
    sent."""

    def __init__(self, header: str, problem: str, *, request_id: str | int | None = None) -> None:
        super().__init__(f"the {header!r} header cannot be sent: {problem}", request_id=request_id)
        self.header = header


class SessionExpired(TransportError):
    """The server no longer knows the session (HTTP 404 on a request carrying a session id)."""


class UnencodableValue(InvalidUsage, TypeError, ValueError):
    """A message to send holds a value JSON over UTF-8 cannot carry: a string with a lone
    surrogate (half of a UTF-16 pair: no Unicode text, which UTF-8 has no bytes for), NaN or an
    infinity, or an object JSON has no form for. Nothing was sent. ``path`` is where in the
    message (a JSON pointer, ``/params/arguments/note``), ``method`` the message's method."""

    def __init__(self, message: str, *, path: str = "", method: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.method = method


class ProtocolError(ServerError):
    """The peer sent something the protocol does not allow, or a result of the wrong shape."""


class InvalidMessage(ProtocolError):
    """A JSON value that is not a valid JSON-RPC 2.0 message.

    ``id`` is the message's id when one could be read, so that the request it answers can fail
    at once instead of waiting for its timeout.
    """

    def __init__(self, reason: str, raw: Any, id: str | int | None = None) -> None:
        shown = redact(repr(raw))
        if len(shown) > 200:
            shown = shown[:200] + "..."
        super().__init__(f"invalid JSON-RPC message ({reason}): {shown}")
        self.reason = reason
        self.raw = raw
        self.id = id


class OutputValidationError(ProtocolError):
    """A tool's structured content does not match its output schema, or the schema cannot be
    used (invalid, a ``$ref`` outside it, too deep, a pattern the linear-time engine refuses).

    ``path`` is where the first mismatch is, as a JSON pointer (``/items/0/id``): in the
    content, or, when ``in_schema`` is true, in the schema.
    """

    def __init__(self, tool: str, path: str, message: str, *, in_schema: bool = False) -> None:
        if in_schema:
            text = f"tool {tool!r}: its outputSchema cannot be used (at {path or '/'}): {message}"
        else:
            text = f"tool {tool!r}: structured content at {path or '/'} is invalid: {message}"
        super().__init__(text)
        self.tool = tool
        self.path = path
        self.in_schema = in_schema


class UnsupportedProtocolVersion(ServerError):
    """The server chose, or only supports, protocol versions this client does not speak.

    ``offered``: the version the server chose (None when it listed versions instead);
    ``supported``: the versions this client speaks (or was pinned to); ``server_versions``:
    the versions the server listed, when it listed them.
    """

    def __init__(
        self,
        offered: str | None,
        supported: Sequence[str],
        *,
        server_versions: Sequence[str] | None = None,
    ) -> None:
        if server_versions is None:
            text = (
                f"server protocol version {offered!r} is not supported; "
                f"this client speaks {', '.join(supported)}"
            )
        else:
            text = (
                "no common protocol version: the server speaks "
                f"{', '.join(map(str, server_versions)) or 'none it named'}; "
                f"this client speaks {', '.join(supported)}"
            )
        super().__init__(text)
        self.offered = offered
        self.supported = tuple(supported)
        self.server_versions = None if server_versions is None else tuple(server_versions)


class CapabilityError(ServerError):
    """The server did not advertise the capability a call needs; nothing was sent."""

    def __init__(self, method: str, capability: str) -> None:
        super().__init__(
            f"server does not advertise the {capability!r} capability needed by {method}"
            " (pass strict_capabilities=False to the Client to send anyway)"
        )
        self.method = method
        self.capability = capability


class NotSupportedInEra(ServerError):
    """The protocol era in use has no equivalent of the requested operation."""


class MissingExtra(InvalidUsage, ImportError):
    """An option needs an optional dependency that is not installed; the message names the
    extra to install (``pip install 'mcp-sync-client[EXTRA]'``), ``extra`` holds its name."""

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class InvalidStateError(InvalidUsage):
    """The client is not in a state that allows the call (e.g. not connected yet, or closed)."""


class ConfigError(InvalidUsage, ValueError):
    """A config file is missing, is not valid JSON, or has an entry of the wrong shape.

    The message names the file and the entry (``mcp.json: server "time": "args" must be a list
    of strings``); ``server`` is the entry's name when one is at fault.
    """

    def __init__(self, message: str, *, server: str | None = None) -> None:
        super().__init__(message)
        self.server = server


class ServerConnectError(ConnectionFailure):
    """Connecting one server of a group failed; ``server`` names it, ``__cause__`` says why."""

    def __init__(self, server: str, cause: BaseException) -> None:
        super().__init__(f"server {server!r}: {cause}")
        self.server = server


class StdioServerError(ConnectionFailure):
    """A stdio command could not be used as an MCP server; the message says what it printed
    on stdout. ``looks_like_http``: it announced a local URL (an HTTP server), given as
    ``url``; otherwise ``__cause__`` is the error connecting ended with."""

    def __init__(self, message: str, *, looks_like_http: bool, url: str | None = None) -> None:
        super().__init__(message)
        self.looks_like_http = looks_like_http
        self.url = url


class GroupError(InvalidUsage, ValueError):
    """A :class:`~mcp_sync.ClientGroup` was given a server name that is taken or invalid."""


class ServerUnavailable(ConnectionFailure):
    """A :class:`~mcp_sync.ClientGroup` did not call ``server``: its circuit breaker is open
    after ``failures`` outages in a row (transport failures, timeouts), the last of them
    ``last_error``. ``retry_in``: seconds until a trial call is let through (0 once due), or
    None while another caller's trial call is under way."""

    def __init__(
        self,
        server: str,
        *,
        failures: int,
        retry_in: float | None,
        last_error: McpError | None = None,
    ) -> None:
        last = f" (last: {type(last_error).__name__}: {last_error})" if last_error else ""
        if retry_in is None:
            when = "a trial call is under way"
        else:
            when = f"calls fail fast until a trial call in {round(retry_in, 1):g} s"
        super().__init__(
            f"server {server!r} is unavailable: {failures} calls in a row failed{last}; {when}"
        )
        self.server = server
        self.failures = failures
        self.retry_in = retry_in
        self.last_error = last_error


class UnknownName(InvalidUsage, KeyError):
    """A tool, prompt, resource URI, skill or server name that nobody offers (or that several
    servers offer, when the caller must choose). ``name`` is what was asked for."""

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class SkillVerificationError(ServerError):
    """Content of a skill did not match the entry it was loaded under: a size or digest
    mismatch, a frontmatter discrepancy, or a file the entry does not list. The content is
    not used. ``uri`` is the file; ``reason`` says what differed."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"{uri}: {reason}")
        self.uri = uri
        self.reason = reason


class ToolError(ServerError):
    """A tool's result had ``isError`` set, raised only where a failing tool is expected to
    raise (:mod:`mcp_sync.integrations`, ``client.functions``); ``result`` is the
    :class:`~mcp_sync.types.CallToolResult`, the message its text."""

    def __init__(self, tool: str, result: Any) -> None:
        text = getattr(result, "text", "") or "the tool reported an error"
        super().__init__(f"tool {tool!r} failed: {text}")
        self.tool = tool
        self.result = result


class ToolArgumentError(InvalidUsage, TypeError, ValueError):
    """The arguments given to a typed tool function (``client.functions``) do not fit the
    tool: a misspelt, missing or extra argument, or a value its ``inputSchema`` refuses.
    Nothing was sent. ``tool`` is the tool's name, ``parameter`` the Python name of the
    argument at fault (None when the fault is not one argument's), ``path`` where in its value
    (a JSON pointer into the arguments, ``/person/age``)."""

    def __init__(
        self, tool: str, message: str, *, parameter: str | None = None, path: str = ""
    ) -> None:
        super().__init__(f"tool {tool!r}: {message}")
        self.tool = tool
        self.parameter = parameter
        self.path = path


class TaskCancelled(ServerError):
    """The task whose result was asked for was cancelled; ``task_id`` names it."""

    def __init__(self, task_id: str, status_message: str | None = None) -> None:
        detail = f": {status_message}" if status_message else ""
        super().__init__(f"task {task_id} was cancelled{detail}")
        self.task_id = task_id


class ToolChanged(ServerError):
    """A tool's definition is not the one pinned (:mod:`mcp_sync.pins`): its description,
    schemas or annotations changed, or the tool is new or gone. Raised before the call is sent.
    ``changes`` holds one :class:`~mcp_sync.pins.ToolChange` per tool (``name``, ``kind``:
    ``"changed"``, ``"added"`` or ``"removed"``, ``diff``); ``tools`` their names."""

    def __init__(self, changes: Sequence[Any], pin_file: str | None = None) -> None:
        where = f" ({pin_file})" if pin_file else ""
        parts = [
            f"{change.summary}{where}" + (f"\n{change.diff}" if change.diff else "")
            for change in changes
        ]
        super().__init__("\n".join(parts))
        self.changes = list(changes)
        self.tools = [change.name for change in changes]
        self.pin_file = pin_file


class CassetteError(InvalidUsage):
    """A recorded session (:mod:`mcp_sync.cassette`) cannot be used: the file is missing,
    unreadable, truncated or not a cassette. ``path`` names the file, ``line`` the line."""

    def __init__(
        self, message: str, *, path: str | None = None, line: int | None = None, **more: Any
    ):
        super().__init__(message)
        self.path, self.line = path, line
        self.request, self.nearest, self.diff = (
            more.get("request"),
            more.get("nearest"),
            more.get("diff", ""),
        )


class CassetteMismatch(CassetteError):
    """A request the recording has no answer for. ``request``: it as matched (method and
    params), ``nearest``: the closest recorded one, ``line`` its line, ``diff`` between them."""


class ToolChangedWarning(UserWarning):
    """A pinned tool changed and the pins' policy is ``"warn"``: the call goes ahead."""


class HiddenCharactersWarning(UserWarning):
    """Characters a person cannot see (tag characters, variation selectors, bidirectional
    controls, zero-width and other format characters) were stripped from a tool's name,
    description or schemas on its way to a model; the message names the tool, the field and
    the characters (see :func:`mcp_sync.llm.clean_tool`)."""
