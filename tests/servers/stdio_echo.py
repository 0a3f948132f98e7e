"""A tiny line-echo MCP-ish server for the stdio transport tests.

Scripted fake: real servers cannot be made to report their environment, write stderr on
demand or exit with a chosen status. It answers each JSON-RPC request line with a response;
some methods do more:

- ``env``: result ``{"value": os.environ.get(params["name"]), "keys": sorted(os.environ)}``
- ``stderr``: writes ``params["text"]`` to stderr, then answers
- ``exit``: writes ``params.get("text", "")`` to stderr and exits with ``params["code"]``
- ``batch``: answers with a one-element JSON array
- ``notify``: sends a notification before the response

``--crlf`` ends lines with CRLF. Exits on EOF.
"""

import json
import os
import sys


def main() -> None:
    end = b"\r\n" if "--crlf" in sys.argv else b"\n"
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        params = msg.get("params") or {}
        result: object = {"echo": params}
        if method == "env":
            result = {"value": os.environ.get(params["name"]), "keys": sorted(os.environ)}
        elif method == "stderr":
            sys.stderr.write(params["text"])
            sys.stderr.flush()
        elif method == "exit":
            sys.stderr.write(params.get("text", ""))
            sys.stderr.flush()
            os._exit(params["code"])
        elif method == "notify":
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
            out.write(json.dumps(note).encode() + end)
        reply = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        if method == "batch":
            reply = b"[" + reply + b"]"
        out.write(reply + end)
        out.flush()


main()
