"""Recording what the CLI does (:mod:`mcp_sync.cassette`), for bug reports.

Two ways in: ``--record FILE``, an option of every verb (``mcp-sync --record bug.jsonl call
add a=1 -- server`` writes that session), and the ``record`` verb (``mcp-sync record -o
session.jsonl -- server``), which records a look at the whole server: the handshake, then
the lists of its tools, resources, templates and prompts. The file is rewritten each time
(mode ``"all"``); secrets are redacted as in every cassette. The target is taken as given: a
URL is recorded over Streamable HTTP, with no fallback to the legacy HTTP+SSE transport.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from ..errors import McpError

if TYPE_CHECKING:
    from ..client import Client
    from ..transports.base import Transport

__all__ = ["explore", "output_of", "recording"]


def output_of(args: argparse.Namespace) -> str | None:
    """The file to record to, if any (``record -o FILE`` or ``--record FILE``)."""
    path = getattr(args, "output", None) if args.verb == "record" else None
    return path or getattr(args, "record", None)


def recording(path: str, connect: Callable[..., Client]) -> Callable[..., Client]:
    """``connect`` (:func:`mcp_sync.connect`), with its target's transport recorded to
    ``path``."""
    from .. import TransportOptions, transport_for
    from ..cassette import Cassette

    def connect_recorded(target: Any, **options: Any) -> Client:
        # How the target is reached belongs to the recorded transport, not to the client.
        reach = {k: options.pop(k) for k in list(options) if k in TransportOptions.__annotations__}

        def make() -> Transport:
            return transport_for(target, roots=options.get("roots"), **reach)

        return connect(Cassette(path, make, mode="all"), **options)

    return connect_recorded


def explore(client: Client, out: IO[str], path: str, timeout: float | None) -> int:
    """The ``record`` verb: what the server offers, each list once, then a summary."""
    capabilities = client.server_capabilities
    counts: dict[str, Any] = {}
    steps: list[tuple[str, Any, Callable[[], list[Any]]]] = [
        ("tools", capabilities.tools, lambda: client.list_tools(timeout=timeout)),
        ("resources", capabilities.resources, lambda: client.list_resources(timeout=timeout)),
        (
            "templates",
            capabilities.resources,
            lambda: client.list_resource_templates(timeout=timeout),
        ),
        ("prompts", capabilities.prompts, lambda: client.list_prompts(timeout=timeout)),
    ]
    for name, offered, listing in steps:
        if offered is None and client.era != "stateless":
            continue
        try:
            counts[name] = len(listing())
        except McpError as exc:  # (a refusal is part of the recording too)
            counts[name] = f"error: {exc}"
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as f:
        counts["lines"] = sum(1 for _ in f)
    out.write(json.dumps({"recorded": path, **counts}) + "\n")
    return 0
