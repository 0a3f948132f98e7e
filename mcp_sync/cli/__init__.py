"""``mcp-sync`` (also ``python -m mcp_sync``): talk to an MCP server from the shell.

::

    mcp-sync tools -- mcp-server-time
    mcp-sync call get_current_time timezone=UTC -- mcp-server-time
    mcp-sync tools https://example.com/mcp
    mcp-sync --config mcp.json --server time tools

Exit codes (also in ``mcp-sync --help`` and ``docs/cli.md``) are the ``EXIT_*`` constants.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, cast

from ..errors import (
    Aborted,
    CapabilityError,
    ConnectionFailure,
    HttpError,
    InvalidUsage,
    McpError,
    RequestTimeout,
    RpcError,
    ServerError,
    StdioServerError,
)
from ..protocol.jsonrpc import METHOD_NOT_FOUND
from ..redaction import RedactingWriter
from . import _render
from ._arguments import ArgumentError, parse_arguments, parse_json_object, unknown_arguments
from ._command_line import UsageError, build_parser, parse_command_line
from ._connecting import connect, inputs, stderr_relay
from ._output import OutputClosed, closed, guarded

if TYPE_CHECKING:
    from ..client import Client

__all__ = [
    "EXIT_AUTH",
    "EXIT_CONNECTION",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PROTOCOL",
    "EXIT_TIMEOUT",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "StdioServerError",
    "UsageError",
    "build_parser",
    "connect",
    "exit_code_for",
    "main",
    "parse_command_line",
]

#: Success; also when the reader of the output stopped reading (``mcp-sync ... | head``): the
#: command ends quietly, whether or not a write found the pipe closed.
EXIT_OK = 0
#: The tool ran and reported an error (``isError: true``).
EXIT_TOOL_ERROR = 1
#: Bad command line, config, or arguments that do not fit the tool's schema; unknown tool: any
#: :class:`~mcp_sync.errors.InvalidUsage`.
EXIT_USAGE = 2
#: The server reported an error (a JSON-RPC error), broke the protocol, or lacks the capability:
#: a :class:`~mcp_sync.errors.ServerError`.
EXIT_PROTOCOL = 3
#: The server could not be started or reached, or the connection broke: a
#: :class:`~mcp_sync.errors.ConnectionFailure` (or an ``OSError``).
EXIT_CONNECTION = 4
#: The request timed out (``--timeout``).
EXIT_TIMEOUT = 5
#: Authorization is needed or failed: an HTTP 401 or 403 whatever its body, or OAuth
#: (``mcp-sync login URL`` signs in where the server offers it; else ``-H``).
EXIT_AUTH = 6
#: Interrupted with Ctrl-C (SIGINT), or aborted; the request was cancelled on the wire.
EXIT_INTERRUPTED = 130

# -- verbs ----------------------------------------------------------------------------------


class Runner:
    def __init__(self, args: argparse.Namespace, client: Client, out: IO[str], err: IO[str]):
        self.args, self.client, self.out, self.err = args, client, out, err
        self.timeout: float | None = args.timeout

    def json(self, value: Any) -> None:
        _render.dump_json(value, self.out)

    def tools(self) -> int:
        tools = self.client.list_tools(timeout=self.timeout)
        if self.args.json:
            self.json([tool.to_wire() for tool in tools])
            return EXIT_OK
        if not tools:
            self.out.write("no tools\n")
            return EXIT_OK
        rows = [
            [tool.name, _render.param_lines(tool.input_schema), _render.describe(tool.description)]
            for tool in tools
        ]
        self.out.write(_render.table(["TOOL", "PARAMETERS (* required)", "DESCRIPTION"], rows))
        self.out.write("\n")
        return EXIT_OK

    def _arguments_base(self) -> dict[str, Any] | None:
        raw = self.args.arguments
        if raw is None:
            return None
        if raw == "-":
            raw = sys.stdin.read()
        try:
            return parse_json_object(raw)
        except ArgumentError as exc:
            raise UsageError(str(exc)) from None

    def call(self) -> int:
        from ..abort import AbortController

        name = self.args.name
        tools = {tool.name: tool for tool in self.client.list_tools(timeout=self.timeout)}
        tool = tools.get(name)
        if tool is None:
            known = ", ".join(sorted(tools)) or "none"
            raise UsageError(f"the server has no tool {name!r} (tools: {known})")
        try:
            arguments = parse_arguments(
                self.args.words, tool.input_schema, base=self._arguments_base()
            )
        except ArgumentError as exc:
            raise UsageError(f"{name}: {exc}") from None
        self._warn_unknown(name, arguments, tool.input_schema, "parameters")
        progress = _render.Progress(self.err, verbose=bool(self.args.verbose))
        controller = AbortController()
        try:
            result = self.client.call_tool(
                name,
                arguments,
                timeout=self.timeout,
                on_progress=progress,
                signal=controller.signal,
            )
        finally:
            progress.clear()
        if self.args.json:
            self.json(result.to_wire())
        elif result.is_error:
            self.err.write("tool error: ")
            _render.render_result(result, self.err)
        else:
            _render.render_result(result, self.out)
        return EXIT_TOOL_ERROR if result.is_error else EXIT_OK

    def _warn_unknown(
        self, name: str, arguments: dict[str, Any], schema: dict[str, Any], what: str
    ) -> None:
        """A key the schema does not name is probably a typo: say so (it is still sent)."""
        properties = schema.get("properties")
        known = ", ".join(properties) if isinstance(properties, dict) and properties else "none"
        for key in unknown_arguments(arguments, schema):
            self.err.write(
                _render.safe(
                    f"mcp-sync: warning: {name}: unknown argument {key!r} ({what}: {known}); "
                    "sent anyway"
                )
                + "\n"
            )

    def pin(self) -> int:
        from ..pins import record

        count = record(self.client, self.args.file, timeout=self.timeout)
        self.out.write(f"pinned {count} tools to {_render.safe(self.args.file)}\n")
        return EXIT_OK

    def resources(self) -> int:
        resources = self.client.list_resources(timeout=self.timeout)
        if self.args.json:
            self.json([r.to_wire() for r in resources])
            return EXIT_OK
        rows = [
            [r.uri, r.name, r.mime_type or "", _render.describe(r.description)] for r in resources
        ]
        self._table(["URI", "NAME", "TYPE", "DESCRIPTION"], rows, "no resources")
        return EXIT_OK

    def templates(self) -> int:
        templates = self.client.list_resource_templates(timeout=self.timeout)
        if self.args.json:
            self.json([t.to_wire() for t in templates])
            return EXIT_OK
        rows = [
            [t.uri_template, t.name, t.mime_type or "", _render.describe(t.description)]
            for t in templates
        ]
        self._table(["URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"], rows, "no templates")
        return EXIT_OK

    def _table(self, headers: list[str], rows: list[list[Any]], empty: str) -> None:
        self.out.write((_render.table(headers, rows) if rows else empty) + "\n")

    def read(self) -> int:
        result = self.client.read_resource(self.args.uri, timeout=self.timeout)
        if self.args.json:
            self.json(result.to_wire())
            return EXIT_OK
        _render.render_result(result, self.out)
        return EXIT_OK

    def prompts(self) -> int:
        prompts = self.client.list_prompts(timeout=self.timeout)
        if self.args.json:
            self.json([p.to_wire() for p in prompts])
            return EXIT_OK
        rows = [
            [
                p.name,
                [f"{a.name}{'*' if a.required else ''}" for a in (p.arguments or [])] or ["-"],
                _render.describe(p.description),
            ]
            for p in prompts
        ]
        self._table(["PROMPT", "ARGUMENTS (* required)", "DESCRIPTION"], rows, "no prompts")
        return EXIT_OK

    def prompt(self) -> int:
        from ..llm import to_llm_content

        name = self.args.name
        prompts = {p.name: p for p in self.client.list_prompts(timeout=self.timeout)}
        prompt = prompts.get(name)
        if prompt is None:
            known = ", ".join(sorted(prompts)) or "none"
            raise UsageError(f"the server has no prompt {name!r} (prompts: {known})")
        declared = prompt.arguments or []
        # Prompt arguments are strings on the wire: "007" stays "007".
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {argument.name: {"type": "string"} for argument in declared},
            "required": [argument.name for argument in declared if argument.required],
        }
        try:
            parsed = parse_arguments(self.args.words, schema, base=self._arguments_base())
        except ArgumentError as exc:
            raise UsageError(f"{name}: {exc}") from None
        arguments = {k: v if isinstance(v, str) else json.dumps(v) for k, v in parsed.items()}
        self._warn_unknown(name, arguments, schema, "arguments")
        result = self.client.get_prompt(self.args.name, arguments, timeout=self.timeout)
        if self.args.json:
            self.json(result.to_wire())
            return EXIT_OK
        if result.description:
            _render.write_lines(f"# {result.description}", self.out)
        for message in result.messages:
            self.out.write(f"[{_render.safe(message.role)}]\n")
            for item in to_llm_content([message.content]):
                text = item.get("text") or f"[image: {item.get('mimeType')}]"
                _render.write_lines(text, self.out, limit=None)
        return EXIT_OK

    def complete(self) -> int:
        from ..protocol.types import PromptReference, ResourceTemplateReference

        kind, sep, target = self.args.ref.partition(":")
        ref: PromptReference | ResourceTemplateReference
        if sep and kind == "prompt":
            ref = PromptReference(name=target)
        elif sep and kind == "resource":
            ref = ResourceTemplateReference(uri=target)
        else:
            raise UsageError(f"the reference must be prompt:NAME or resource:URI, not {kind!r}")
        context = {}
        for word in self.args.words:
            key, sep, raw = word.partition("=")
            if not sep:
                raise UsageError(f"expected key=value, got {word!r}")
            context[key] = raw
        result = self.client.complete(
            ref, self.args.argument, self.args.value, context or None, timeout=self.timeout
        )
        if self.args.json:
            self.json(result.to_wire())
            return EXIT_OK
        for value in result.completion.values:
            self.out.write(f"{_render.safe(value)}\n")
        return EXIT_OK

    def stubs(self) -> int:
        from ..functions import stubs

        info = self.client.server_info
        self.out.write(stubs(self.client, server=info.name if info else None))
        return EXIT_OK

    def record(self) -> int:
        from ._record import explore

        return explore(self.client, self.out, self.args.output, self.timeout)

    def ping(self) -> int:
        started = time.perf_counter()
        self.client.ping(timeout=self.timeout)
        elapsed = (time.perf_counter() - started) * 1000
        if self.args.json:
            self.json({"ok": True, "milliseconds": round(elapsed, 3)})
        else:
            self.out.write(f"pong ({elapsed:.1f} ms)\n")
        return EXIT_OK

    def info(self) -> int:
        client = self.client
        server = client.server_info
        caps = client.server_capabilities.to_wire()
        info = {
            "server": server.to_wire() if server is not None else None,
            "protocolVersion": client.protocol_version,
            "era": client.era,
            "capabilities": caps,
            "instructions": client.instructions,
        }
        if self.args.json:
            self.json(info)
            return EXIT_OK
        rows: list[list[Any]] = []
        if server is not None:
            rows.append(["server", f"{server.name} {server.version}"])
            if server.title:
                rows.append(["title", server.title])
        rows.append(["protocol", f"{client.protocol_version} ({client.era} era)"])
        rows.append(["capabilities", [_capability(k, v) for k, v in caps.items()] or ["none"]])
        self.out.write(_render.table(["", ""], rows).split("\n", 1)[1] + "\n")
        if client.instructions:
            self.out.write("instructions:\n")
            _render.write_lines(_indent(client.instructions), self.out)
        return EXIT_OK


def _capability(name: str, value: Any) -> str:
    if isinstance(value, dict) and value:
        # a false flag is a "no": only the ones set are shown ({} marks a sub-feature as on)
        flags = [k for k, v in value.items() if v is not None and v is not False]
        if flags:
            return f"{name} ({', '.join(flags)})"
    return name


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.rstrip().splitlines())


# -- errors ---------------------------------------------------------------------------------


def exit_code_for(exc: BaseException) -> int:
    """The exit code for an exception that ended a command (see the module constants)."""
    if isinstance(exc, (KeyboardInterrupt, Aborted)):
        return EXIT_INTERRUPTED
    if isinstance(exc, StdioServerError):
        cause = exc.__cause__
        return EXIT_CONNECTION if exc.looks_like_http or cause is None else exit_code_for(cause)
    if isinstance(exc, InvalidUsage):  # also a file the user gave: a pin file, a config
        return EXIT_USAGE
    if _auth_error(exc) is not None:
        return EXIT_AUTH
    if isinstance(exc, RequestTimeout):
        return EXIT_TIMEOUT
    if isinstance(exc, ServerError):
        return EXIT_PROTOCOL
    if isinstance(exc, (ConnectionFailure, OSError)):
        return EXIT_CONNECTION
    return EXIT_PROTOCOL


def _auth_error(exc: BaseException) -> BaseException | None:
    """The OAuth error or HTTP 401/403 in ``exc``'s chain, if there is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__module__.startswith("mcp_sync.oauth"):
            return current
        if isinstance(current, HttpError) and current.status in (401, 403):
            return current
        current = current.__cause__ or current.__context__
    return None


def _auth_hint(exc: BaseException, args: argparse.Namespace) -> str:
    """What to do about a refusal: sign in where the server offers OAuth, else send what it
    wants (an API key) in a header."""
    refusal = _auth_error(exc)
    url = _remote_url(args)
    if isinstance(refusal, HttpError) and url:
        from ._login import offers_oauth

        headers = {name.lower(): value for name, value in refusal.headers.items()}
        if not offers_oauth(url, headers.get("www-authenticate", "")):
            return (
                "the server offers no OAuth sign-in: send its credentials with "
                "-H 'Authorization: ...'"
            )
    return "sign in with `mcp-sync login URL`"


def _remote_url(args: argparse.Namespace) -> str | None:
    """The URL of the server the command line names: ``URL``, or a ``--config`` entry's."""
    if not args.config:
        return cast("str | None", args.url)
    from ..config import ConfigError, load

    try:
        config = load(args.config, inputs=inputs(args.input))
        entry = config[args.server] if args.server else next(iter(config.values()))
    except (ConfigError, StopIteration) as exc:
        raise UsageError(str(exc) or "the config has no servers") from None
    return entry.url


def _sign_in_or_out(args: argparse.Namespace, err: IO[str]) -> int:
    from . import _login

    url = _remote_url(args)
    if not url:
        raise UsageError(f"{args.verb} needs a remote server: a URL or a --config entry with url")
    if args.verb == "logout":
        _login.logout(url, err)
        return EXIT_OK
    if args.device:
        _login.device_login(
            url,
            err,
            scope=args.scope,
            timeout=args.timeout or 300.0,
            client_id=args.client_id,
            client_secret=args.client_secret,
        )
        return EXIT_OK
    _login.login(
        url,
        err,
        open_browser=not args.no_browser,
        scope=args.scope,
        timeout=args.timeout or 300.0,
        client_id=args.client_id,
        client_secret=args.client_secret,
        port=args.port,
    )
    return EXIT_OK


def main(
    argv: Sequence[str] | None = None, *, out: IO[str] | None = None, err: IO[str] | None = None
) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    # every byte the CLI prints goes through the redaction of the secrets the client holds,
    # and a reader that stopped reading (`| head`) ends the command quietly (OutputClosed)
    out = cast(IO[str], RedactingWriter(guarded(out or sys.stdout)))
    err = cast(IO[str], RedactingWriter(guarded(err or sys.stderr)))
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args = parse_command_line(argv)
        except UsageError as exc:
            err.write(f"mcp-sync: error: {exc}\n")
            return EXIT_USAGE
        except SystemExit as exc:  # argparse: --help, --version, bad options
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except BrokenPipeError:  # argparse writes --help to sys.stdout itself
            closed(sys.stdout)
        with _logging(args.verbose, err):
            return _run(args, out, err)
    except OutputClosed:
        return EXIT_OK


def _run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    client: Client | None = None
    relay = stderr_relay(args, err)
    try:
        if args.verb in ("login", "logout"):
            return _sign_in_or_out(args, err)
        client = connect(args, err, relay)
        if args.verbose:
            _show_server_logs(client, err, args.verbose)
        runner = Runner(args, client, out, err)
        handler: Callable[[], int] = getattr(runner, args.verb)
        return handler()
    except UsageError as exc:
        err.write(f"mcp-sync: error: {_render.safe(str(exc), lines=True)}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write("mcp-sync: interrupted\n")
        return EXIT_INTERRUPTED
    except (McpError, OSError) as exc:
        code = exit_code_for(exc)
        kind = {
            EXIT_USAGE: "error",
            EXIT_TIMEOUT: "timeout",
            EXIT_CONNECTION: "connection failed",
            # the server's own failure (a JSON-RPC error it sent) is not a protocol error
            EXIT_PROTOCOL: "the server reported an error"
            if isinstance(exc, RpcError)
            else "protocol error",
            EXIT_AUTH: "authorization",
            EXIT_INTERRUPTED: "interrupted",
        }[code]
        message = str(exc)
        if isinstance(exc, CapabilityError):
            message = (
                f"the server does not advertise the {exc.capability!r} capability needed by "
                f"{exc.method} (add --ignore-capabilities to send the request anyway)"
            )
        elif isinstance(exc, RpcError) and exc.code == METHOD_NOT_FOUND and client is not None:
            message = _refused(args.verb, client) or message
        err.write(f"mcp-sync: {kind}: {_render.safe(message, lines=True)}\n")
        if code == EXIT_AUTH and args.verb not in ("login", "logout"):
            err.write(f"mcp-sync: {_auth_hint(exc, args)}\n")
        return code
    finally:
        if client is not None:
            with contextlib.suppress(KeyboardInterrupt):
                client.close()
        if relay is not None:  # the server is gone: its last line, if it had no newline
            relay.flush()
        with contextlib.suppress(Exception):
            out.flush()


#: The capability a verb's request needs, and the method it sends.
_VERB_METHODS = {
    "tools": ("tools", "tools/list"),
    "call": ("tools", "tools/call"),
    "resources": ("resources", "resources/list"),
    "templates": ("resources", "resources/templates/list"),
    "read": ("resources", "resources/read"),
    "prompts": ("prompts", "prompts/list"),
    "prompt": ("prompts", "prompts/get"),
    "complete": ("completions", "completion/complete"),
}


def _refused(verb: str, client: Client) -> str | None:
    """What the server did when it answers "method not found" to a method of a capability
    it advertises (the SDKs' low-level servers advertise resources without templates)."""
    capability, method = _VERB_METHODS.get(verb, (None, None))
    if capability is None or capability not in client.server_capabilities.to_wire():
        return None
    return (
        f"the server advertises the {capability!r} capability but refused {method} "
        "(JSON-RPC error -32601, method not found): it does not implement that part"
    )


class _EscapingFormatter(logging.Formatter):
    """mcp_sync's log records quote what servers sent (an id-less error's message): escaped."""

    def format(self, record: logging.LogRecord) -> str:
        return _render.safe(super().format(record), lines=True)


class _WarningFormatter(_EscapingFormatter):
    """A warning in the CLI's words: ``mcp-sync: warning: ...`` (the library's messages name
    it ``mcp_sync:`` for a program's log, which the CLI's prefix says already)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        message = record.getMessage().removeprefix("mcp_sync: ")
        return f"mcp-sync: {record.levelname.lower()}: {message}"


@contextlib.contextmanager
def _logging(verbose: int, err: IO[str]) -> Iterator[None]:
    """mcp_sync's warnings (what Python's last-resort handler would print raw) on ``err``,
    escaped; with ``-vv``, its debug log too."""
    logger = logging.getLogger("mcp_sync")
    handler = logging.StreamHandler(err)
    level = logger.level
    if verbose >= 2:
        handler.setFormatter(_EscapingFormatter("[%(name)s] %(levelname)s %(message)s"))
        logger.setLevel(logging.DEBUG)
    else:
        handler.setFormatter(_WarningFormatter())
        handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _show_server_logs(client: Client, err: IO[str], verbose: int) -> None:
    lock = threading.Lock()

    def show(message: Any) -> None:
        data = message.data if isinstance(message.data, str) else json.dumps(message.data)
        source = f" {message.logger}" if message.logger else ""
        with lock:
            err.write(_render.safe(f"[server {message.level}{source}] {data}", lines=True) + "\n")
            err.flush()

    client.on_log(show)
    if client.era == "stateless" or client.server_capabilities.logging is not None:
        with contextlib.suppress(McpError):
            client.set_logging_level("debug" if verbose >= 2 else "info")
