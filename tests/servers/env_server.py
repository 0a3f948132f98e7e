"""A fixture server (official Python SDK) that reports its environment and working directory.

Used by the config tests to check that ``env`` and ``cwd`` of an ``mcpServers`` entry reach the
server process.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("env-fixture")


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable ("" when unset)."""
    return os.environ.get(name, "")


@server.tool()
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


if __name__ == "__main__":
    server.run()
