"""A fixture MCP server written with the official Python SDK that marks its results cacheable.

Its reads of ``counter://reads`` count up, so a client sees which answers came from its cache.
Every ``resources/read`` and ``tools/list`` result carries ``ttlMs: 60000`` and the
``cacheScope`` given on the command line (the SDK's ``cache_hints``):

    python sdk_cache_server.py PORT private|public
"""

from __future__ import annotations

import sys
import warnings

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

scope = sys.argv[2] if len(sys.argv) > 2 else "private"
hint = CacheHint(ttl_ms=60_000, scope=scope)  # type: ignore[arg-type]
server = MCPServer("sdk-cache-fixture", cache_hints={"resources/read": hint, "tools/list": hint})
reads = [0]


@server.resource("counter://reads")
def counter() -> str:
    """How many times this resource was read."""
    reads[0] += 1
    return str(reads[0])


@server.tool()
def ping() -> str:
    """A tool, so that tools/list has something to list."""
    return "pong"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
