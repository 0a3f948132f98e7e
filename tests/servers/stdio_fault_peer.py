"""A scripted fake MCP server over stdio for the client-level fault tests (tests/reliability).

Scripted fake: real servers cannot be made to die with calls in flight, answer twice, answer an
id nobody asked for, or hold answers back on demand, and none we have ignores a method it does
not know. It answers ``initialize`` and ``ping``;
``tools/call`` is answered according to the mode in ``argv[1]``:

- ``crash N``: hold the first N ``tools/call`` requests unanswered; on the N-th, write
  ``crashing with N calls in flight`` to stderr and exit with status 3
- ``duplicate``: answer every call twice, and first send a response for id 999999 (unknown)
  and an error response for id 999998
- ``slow``: answer each call after ``arguments.delay`` seconds (a thread per call)
- ``echo``: answer at once with the ``text`` argument
- ``ignore-unknown``: answer calls as ``echo``, and never answer a method it does not know
  (``server/discover``), as some handshake-era servers do, instead of -32601
- ``deaf``: after ``initialize``, never read stdin again (a server that stopped reading)
- ``ping-flood N``: on a call, send N ``ping`` requests without reading stdin, then answer it
- ``string-id``: answer calls with the request id as a string (``"3"`` for 3)
- ``bad-utf8``: answer calls with a line that is not UTF-8 (a stray 0xff in the text)
- ``unusable``: answer each call with a line the client cannot use, picked by
  ``arguments.fault``: ``deep`` (JSON nested ``arguments.depth`` deep), ``large`` (a text of
  ``arguments.size`` bytes, the id first), ``image`` (a base64 image of ``arguments.size``
  bytes, written in pieces, the id last as the TypeScript SDK writes it), ``unparsable``
  (cut short and closed with garbage); calls without a ``fault`` are answered as ``echo``

Answers are ``{"content": [{"type": "text", "text": <text argument>}]}``. Exits on EOF.
"""

import json
import os
import sys
import threading
import time

lock = threading.Lock()


def send(message: dict) -> None:
    data = json.dumps(message).encode() + b"\n"
    with lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def result(msg_id: object, value: object) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": value})


def text(params: dict) -> dict:
    arguments = params.get("arguments") or {}
    return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}


def later(delay: float, msg_id: object, value: dict) -> None:
    time.sleep(delay)
    result(msg_id, value)


def unusable(msg_id: object, arguments: dict) -> None:
    """Write one answer to ``msg_id`` that cannot be used (see the module docstring)."""
    fault, size = arguments["fault"], int(arguments.get("size", 0))
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode() + b',"result":'
    with lock:
        out = sys.stdout.buffer
        if fault == "deep":
            depth = int(arguments["depth"])
            out.write(head + b'{"content":[],"x":' + b"[" * depth + b"]" * depth + b"}}\n")
        elif fault == "unparsable":
            out.write(head + b'{"content":[{"type":"text","text":"cut"}' + b" nope}\n")
        else:
            if fault == "large":
                out.write(head + b'{"content":[{"type":"text","text":"')
            else:
                out.write(b'{"result":{"content":[{"type":"image","mimeType":"image/png","data":"')
            piece = b"QUJD" * 16384  # 64 KiB of base64
            left = size
            while left > 0:
                out.write(piece[:left])
                left -= len(piece)
            if fault == "large":
                out.write(b'"}]}}\n')
            else:
                out.write(b'"}]},"jsonrpc":"2.0","id":' + json.dumps(msg_id).encode() + b"}\n")
        out.flush()


def main() -> None:
    mode = sys.argv[1]
    held = 0
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        method, params = msg["method"], msg.get("params") or {}
        if method == "initialize":
            result(
                msg["id"],
                {
                    "protocolVersion": params.get("protocolVersion"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fault-peer", "version": "0"},
                },
            )
            if mode == "deaf":
                time.sleep(3600)
        elif method == "tools/call" and mode == "string-id":
            result(str(msg["id"]), text(params))
        elif method == "tools/call" and mode == "bad-utf8":
            line = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": text(params)})
            with lock:
                sys.stdout.buffer.write(line.encode().replace(b"BAD", b"\xff") + b"\n")
                sys.stdout.buffer.flush()
        elif method == "tools/call" and mode == "unusable":
            arguments = params.get("arguments") or {}
            if "fault" in arguments:
                unusable(msg["id"], arguments)
            else:
                result(msg["id"], text(params))
        elif method == "tools/call" and mode == "ping-flood":
            for n in range(int(sys.argv[2])):
                send({"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"})
            result(msg["id"], text(params))
        elif method == "tools/call" and mode == "crash":
            held += 1
            if held >= int(sys.argv[2]):
                sys.stderr.write(f"crashing with {held} calls in flight\n")
                sys.stderr.flush()
                os._exit(3)
        elif method == "tools/call" and mode == "duplicate":
            result(999999, {"content": [{"type": "text", "text": "unknown id"}]})
            send({"jsonrpc": "2.0", "id": 999998, "error": {"code": -1, "message": "nobody"}})
            result(msg["id"], text(params))
            result(msg["id"], {"content": [{"type": "text", "text": "duplicate"}]})
        elif method == "tools/call" and mode == "slow":
            delay = float((params.get("arguments") or {}).get("delay", 0))
            threading.Thread(
                target=later, args=(delay, msg["id"], text(params)), daemon=True
            ).start()
        elif method == "tools/call":
            result(msg["id"], text(params))
        elif method == "ping":
            result(msg["id"], {})
        elif mode != "ignore-unknown":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "error": {"code": -32601, "message": f"Method not found: {method}"},
                }
            )


main()
