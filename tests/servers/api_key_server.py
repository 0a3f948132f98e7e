"""A real MCP server (official Python SDK, ``MCPServer``, Streamable HTTP) behind an API key, as
servers that offer no OAuth protect themselves: a request without ``Authorization: Bearer KEY``
gets HTTP 401, one with another key HTTP 403, each with a JSON-RPC error as its body and no
``WWW-Authenticate`` challenge (what the servers tried for issue 42 answered: "Unauthorized:
Missing bearer token", -32001). The refusal is a small ASGI wrapper of this file, since no
server the suite installs refuses this way; the server behind it is the SDK's.

    python api_key_server.py PORT KEY
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

server = MCPServer("api-key")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def refusing(app: Any, key: str) -> Any:
    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = dict(scope["headers"])
        given = headers.get(b"authorization", b"").decode("latin-1")
        if given == f"Bearer {key}":
            return await app(scope, receive, send)
        status, message = (
            (401, "Unauthorized: Missing bearer token") if not given else (403, "Forbidden")
        )
        body = json.dumps(
            {"jsonrpc": "2.0", "error": {"code": -32001, "message": message}, "id": None}
        ).encode()
        headers_out = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers_out})
        await send({"type": "http.response.body", "body": body})

    return guarded


if __name__ == "__main__":
    port, key = int(sys.argv[1]), sys.argv[2]
    app = refusing(server.streamable_http_app(), key)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
