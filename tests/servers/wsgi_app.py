"""A small WSGI app that calls a real MCP server, for tests/services (run under gunicorn).

Each worker process shares one client among its threads (``mcp_sync.shared_client``), made on
its first request, after the fork; with ``recovery=`` it starts the server again when it dies.

    GET /add?a=N  ->  200 {"worker": PID, "result": N + 1}
                      502 {"worker": PID, "error": "ConnectionClosed", "message": "..."}

``MCP_SERVER`` (environment) is the server command, as a JSON list; by default the official
SDK fixture server (tests/servers/sdk_server.py) over stdio.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import mcp_sync

SERVER = json.loads(
    os.environ.get("MCP_SERVER")
    or json.dumps([sys.executable, str(Path(__file__).with_name("sdk_server.py")), "stdio"])
)


@mcp_sync.shared_client
def mcp_client() -> mcp_sync.Client:
    return mcp_sync.connect(
        SERVER,
        request_timeout=30,
        recovery=mcp_sync.Backoff(initial_delay=0.05, max_delay=1.0, max_retries=20),
    )


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    query = parse_qs(environ.get("QUERY_STRING", ""))
    body: dict[str, Any] = {"worker": os.getpid()}
    try:
        result = mcp_client().call_tool("add", {"a": int(query["a"][0]), "b": 1}, timeout=30)
        body["result"] = result.structured_content["result"]  # type: ignore[index]
        status = "200 OK"
    except mcp_sync.McpError as exc:
        body.update(error=type(exc).__name__, message=str(exc))
        status = "502 Bad Gateway"
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(body).encode()]
