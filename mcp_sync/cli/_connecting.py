"""The CLI's target (a command, a URL or a config entry, with its options) as a connected
client."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

from ..terminal import LIMIT, safe
from ._command_line import UsageError

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["connect", "inputs", "stderr_relay"]


class _LinePrefixer:
    """Writes chunks of a server's stderr to ours, each line prefixed and escaped. A line is
    kept up to :data:`~mcp_sync.terminal.LIMIT` characters (the rest is counted, not kept),
    so a server writing without newlines costs linear time and bounded memory; :meth:`flush`
    shows a last line that never got its newline."""

    def __init__(self, stream: IO[str], prefix: str) -> None:
        self.stream, self.prefix = stream, prefix
        self._parts: list[str] = []
        self._kept = 0
        self._dropped = 0
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            start = 0
            while (end := text.find("\n", start)) >= 0:
                self._keep(text[start:end])
                self._show()
                start = end + 1
            self._keep(text[start:])
            self.stream.flush()

    def flush(self) -> None:
        with self._lock:
            if self._kept or self._dropped:
                self._show()
                self.stream.flush()

    def _keep(self, piece: str) -> None:
        room = max(LIMIT - self._kept, 0)
        if room:
            self._parts.append(piece[:room])
            self._kept += min(len(piece), room)
        self._dropped += max(len(piece) - room, 0)

    def _show(self) -> None:
        line = "".join(self._parts).removesuffix("\r")
        self._parts, self._kept = [], 0
        dropped, self._dropped = self._dropped, 0
        self.stream.write(f"{self.prefix}{safe(line, lines=True, left_out=dropped)}\n")


def _headers(raw: Sequence[str]) -> dict[str, str]:
    """The ``-H 'Name: value'`` headers, checked as ``headers=`` checks them. The refusals
    never quote a value: it is often a token."""
    from ..errors import InvalidHeaderValue
    from ..protocol.headers import checked_headers

    headers: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError("--header must look like 'Name: value' (one has no name and colon)")
        headers[name.strip()] = value.strip()
    try:
        return checked_headers(headers)
    except InvalidHeaderValue as exc:
        raise UsageError(f"--header: {exc}") from None


def inputs(raw: Sequence[str]) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for item in raw:
        ident, sep, value = item.partition("=")
        if not sep or not ident:
            raise UsageError(f"--input must look like ID=VALUE, not {item!r}")
        inputs[ident] = value
    return inputs


def stderr_relay(args: argparse.Namespace, err: IO[str]) -> _LinePrefixer | None:
    """With ``-v``, what passes a stdio server's stderr on to ours."""
    return _LinePrefixer(err, "[server stderr] ") if args.verbose else None


def connect(
    args: argparse.Namespace, err: IO[str], on_stderr: Callable[[str], None] | None = None
) -> Client:
    from .. import ClientOptions
    from .. import connect as connect_target

    options: ClientOptions = {"name": "mcp-sync-cli"}
    if args.timeout is not None:
        options["request_timeout"] = args.timeout  # (the probe waits no longer: one deadline)
    if args.ignore_capabilities:
        options["strict_capabilities"] = False
    if args.protocol is not None:
        options["protocol"] = args.protocol
    if args.pin and args.verb != "pin":  # docs/pins.md
        options["pin"] = args.pin
    headers = _headers(args.header)
    tls = _tls_options(args)

    from ._record import output_of, recording

    if output_of(args):
        connect_target = recording(str(output_of(args)), connect_target)
    if args.config:
        from ..config import ConfigError, load

        try:
            config = load(args.config, inputs=inputs(args.input))
            name = args.server
            if name is None:
                if len(config) != 1:
                    raise UsageError(
                        f"{args.config} has {len(config)} servers: choose one with --server "
                        f"({', '.join(config) or 'none'})"
                    )
                name = next(iter(config))
            entry = config[name]
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        return connect_target(
            entry,
            headers=headers or None,
            on_stderr=on_stderr,
            sandbox=True if args.sandbox else None,
            **tls,
            **options,
        )
    if args.url:
        auth = None
        if not any(name.lower() == "authorization" for name in headers):
            from ._login import auth_for

            auth = auth_for(args.url)
        if args.sandbox:
            raise UsageError("--sandbox runs a command's server: it does not apply to --url")
        return connect_target(args.url, headers=headers or None, auth=auth, **tls, **options)
    # connect() watches the command's stdout while connecting: an HTTP server given as a
    # command fails at once with StdioServerError naming its URL
    return connect_target(
        args.command, on_stderr=on_stderr, sandbox=True if args.sandbox else None, **options
    )


def _tls_options(args: Any) -> dict[str, Any]:
    """``--verify``, ``--cert``/``--key`` and ``--proxy`` as ``connect()``'s keywords."""
    tls: dict[str, Any] = {}
    if args.verify is not None:
        tls["verify"] = False if args.verify.lower() in ("no", "false") else args.verify
    if args.key is not None and args.cert is None:
        raise UsageError("--key needs --cert (the certificate it belongs to)")
    if args.cert is not None:
        tls["cert"] = (args.cert, args.key) if args.key is not None else args.cert
    if args.proxy is not None:
        tls["proxy"] = args.proxy
    return tls
