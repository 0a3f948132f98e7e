"""The official Python SDK's ``MCPServer`` with one tool, ``echo``, that first appends its
text to a ledger file: the restart soak (tests/reliability/test_lattice_soak.py) reads there
how many times each call ran, across every restart of the server.

    LEDGER=PATH python ledger_server.py stdio
    LEDGER=PATH python ledger_server.py streamable-http PORT
"""

from __future__ import annotations

import os
import sys
import warnings

from mcp.server.mcpserver import MCPServer

warnings.simplefilter("ignore")

server = MCPServer("ledger")


@server.tool()
def echo(text: str) -> str:
    """Write the text to the ledger, then echo it back."""
    with open(os.environ["LEDGER"], "a", encoding="utf-8") as ledger:
        ledger.write(text + "\n")  # one short write to an O_APPEND file: never interleaved
    return text


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    elif sys.argv[1] == "streamable-http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]!r}")
