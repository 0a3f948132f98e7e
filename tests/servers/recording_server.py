"""A real MCP server (official Python SDK, ``MCPServer``) that keeps a ledger of the calls it
ran: for the restart soak, which must show that no call was run twice.

    RECORD_TO=/path/ledger python recording_server.py stdio
    RECORD_TO=/path/ledger python recording_server.py streamable-http PORT

``record(token)`` appends a line ``token pid request-id run`` to the file ``RECORD_TO`` names
(one ``O_APPEND`` write, so a server killed at any moment leaves whole lines from every
instance sharing the file) and answers with the token. ``run`` counts this server's runs of
the tool: a line written twice for one run repeats it, a request run twice does not.
"""

from __future__ import annotations

import itertools
import os
import sys
import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")

server = MCPServer("recording")
LEDGER = os.open(os.environ["RECORD_TO"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
RUNS = itertools.count(1)


@server.tool()
def record(token: str, ctx: Context) -> str:
    """Write the token, this server's pid, the request's JSON-RPC id and the run's number to
    the ledger, then answer with the token."""
    os.write(LEDGER, f"{token} {os.getpid()} {ctx.request_id} {next(RUNS)}\n".encode())
    return token


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
