"""A near-zero-cost MCP server over stdio, so that a client's own cost shows.

    python -m bench.trivial_stdio_server [--ignore-eof | --ignore-sigterm]

It answers ``initialize``, ``tools/list``, ``ping`` and ``tools/call`` for two tools:
``echo`` (returns its ``text`` argument) and ``big`` (returns ``size`` bytes of text, built
once). No validation, no framework: one ``readline`` and one ``write`` per request.

``--ignore-eof`` keeps running after stdin closes (until SIGTERM); ``--ignore-sigterm`` also
ignores SIGTERM (only SIGKILL stops it). These are the servers of the close-time rows.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "big",
        "description": "Return `size` bytes of text.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}},
    },
]
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def result(request: dict[str, object]) -> object:
    method = request.get("method")
    params = request.get("params") or {}
    assert isinstance(params, dict)
    if method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "big":
            return {"content": [{"type": "text", "text": "x" * int(args.get("size", 0))}]}
        return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
    if method == "initialize":
        offered = params.get("protocolVersion")
        return {
            "protocolVersion": offered if offered in HANDSHAKE else HANDSHAKE[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-trivial", "version": "1.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "ping":
        return {}
    return None


def answer(line: bytes) -> bytes | None:
    request = json.loads(line)
    if "id" not in request or "method" not in request:
        return None  # a notification or a response
    value = result(request)
    if value is None:
        message = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32601, "message": f"Method not found: {request['method']}"},
        }
    else:
        message = {"jsonrpc": "2.0", "id": request["id"], "result": value}
    return _dumps(message).encode() + b"\n"


def main() -> None:
    ignore_eof = "--ignore-eof" in sys.argv or "--ignore-sigterm" in sys.argv
    if "--ignore-sigterm" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stdin = sys.stdin.buffer
    out = sys.stdout.fileno()
    os.set_blocking(out, True)
    while True:
        line = stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        data = answer(line)
        if data is not None:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
    if ignore_eof:
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
