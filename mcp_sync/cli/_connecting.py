"""The CLI's target (a command, a URL or a config entry, with its options) as a connected
client."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any

from . import _render
from ._command_line import UsageError

if TYPE_CHECKING:
    from ..client import Client

__all__ = ["connect", "inputs"]


class _LinePrefixer:
    """Writes chunks of a server's stderr to ours, each line prefixed."""

    def __init__(self, stream: IO[str], prefix: str) -> None:
        self.stream, self.prefix = stream, prefix
        self._pending = ""
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        with self._lock:
            self._pending += text
            *lines, self._pending = self._pending.split("\n")
            for line in lines:
                self.stream.write(f"{self.prefix}{_render.safe(line, lines=True)}\n")
            self.stream.flush()


def _headers(raw: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in raw:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header must look like 'Name: value', not {item!r}")
        headers[name.strip()] = value.strip()
    return headers


def inputs(raw: Sequence[str]) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for item in raw:
        ident, sep, value = item.partition("=")
        if not sep or not ident:
            raise UsageError(f"--input must look like ID=VALUE, not {item!r}")
        inputs[ident] = value
    return inputs


def connect(args: argparse.Namespace, err: IO[str]) -> Client:
    from .. import ClientOptions
    from .. import connect as connect_target

    on_stderr = _LinePrefixer(err, "[server stderr] ") if args.verbose else None
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
