"""``python -m bench.instructions``: instructions per call, layer by layer, under valgrind.

Time on a shared 2-core machine wanders by +-10% from run to run; the number of instructions a
call executes does not. Each way below makes its calls against a transport that answers at
once, in-process, with a canned response (no pipe, no thread hand-off), so what is counted is
the client's own work:

- ``floor``: what the raw floor does (``json`` encode, a ``Future``, ``json.loads``,
  ``set_result``), as in ``bench/raw_floor.py``;
- ``request``: ``client.request("tools/call", ...)``, the untyped result;
- ``call_tool``: ``client.call_tool(...)``, the typed result;
- ``list_tools``: ``client.list_tools()``, one page of two tools, typed;
- ``typed_result``: ``CallToolResult.from_wire`` alone.

python -m bench.instructions                 # runs valgrind (cachegrind) and prints the table
python -m bench.instructions call_tool 100   # one way, N calls (what valgrind runs)
python -m bench.instructions --callers       # call_tool and list_tools over a real pipe and
                                             # real HTTP, 1 and 8 threads sharing the client
                                             # (the servers are not counted: valgrind does
                                             # not follow children)
python -m bench.instructions --callers 8     # the same, 8 threads only
python -m bench.instructions callers stdio 8 80 list_tools   # 80 calls from 8 threads (what
                                                             # valgrind runs)

A way is counted twice, with 10 and with 2,010 calls (8 and 2,008 with callers), and the
difference divided by 2,000, so that start-up and imports cancel out. With callers the count
takes in what waiting costs in instructions (a lock, a wake-up, a poll), not the time waited.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import mcp_sync
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports import MessageOptions

RESULT = {"content": [{"type": "text", "text": "hello"}], "isError": False}
_RESPONSE = '{"jsonrpc":"2.0","id":%d,"result":' + json.dumps(RESULT, separators=(",", ":")) + "}"
TOOLS = {
    "tools": [
        {
            "name": name,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }
        for name in ("echo", "shout")
    ]
}
_TOOLS_RESPONSE = (
    '{"jsonrpc":"2.0","id":%d,"result":' + json.dumps(TOOLS, separators=(",", ":")) + "}"
)


class CannedTransport(mcp_sync.Transport):
    """Answers each request at once, on the caller's thread, with the canned result."""

    kind = "canned"

    def start(self) -> None:
        pass

    def close(self) -> None:
        self._fire_close(None)

    def send(
        self,
        message: dict[str, Any],
        *,
        deadline: float = math.inf,
        signal: mcp_sync.AbortSignal | None = None,
        options: MessageOptions | None = None,
    ) -> None:
        jsonrpc.encode(message)  # what a real transport does before writing
        if "id" not in message:
            return
        if message["method"] == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "canned", "version": "1"},
            }
            line = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message["method"] == "tools/list":
            line = _TOOLS_RESPONSE % message["id"]
        else:
            line = _RESPONSE % message["id"]
        self._deliver(jsonrpc.decode(line.encode()))


def _ways() -> dict[str, Callable[[], Any]]:
    client = mcp_sync.Client("bench", "1.0", protocol="handshake").connect(CannedTransport())
    arguments = {"text": "hello"}
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    ids = itertools.count(1)
    pending: dict[int, Future[Any]] = {}

    def floor() -> Any:
        request_id = next(ids)
        future: Future[Any] = Future()
        pending[request_id] = future
        encode(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": arguments},
            }
        ).encode()
        message = json.loads((_RESPONSE % request_id).encode())
        pending.pop(message["id"]).set_result(message.get("result"))
        return future.result()

    return {
        "floor": floor,
        "request": lambda: client.request("tools/call", {"name": "echo", "arguments": arguments}),
        "call_tool": lambda: client.call_tool("echo", arguments),
        "list_tools": client.list_tools,
        "typed_result": lambda: mcp_sync.types.CallToolResult.from_wire(
            {"content": [{"type": "text", "text": "hello"}], "isError": False}
        ),
    }


def count_instructions(module_and_args: list[str]) -> int:
    """Instructions that ``python -m <module_and_args>`` executes, counted by valgrind."""
    run = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            "-m",
            *module_and_args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=True,
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{run.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def _count(way: str, calls: int) -> int:
    return count_instructions(["bench.instructions", way, str(calls)])


def _callers(kind: str, threads: int, calls: int, way: str = "call_tool") -> None:
    """``calls`` calls (``call_tool`` or ``list_tools``) from ``threads`` threads sharing one
    client of the trivial server over ``kind`` (stdio or http)."""
    import contextlib
    import threading

    from . import suite

    with contextlib.ExitStack() as stack:
        if kind == "stdio":
            client = suite.sync_stdio(suite.TRIVIAL)
        else:
            port = suite.free_port()
            argv = [suite.PY, "-m", "bench.trivial_http_server", str(port)]
            client = suite.sync_http(stack.enter_context(suite.http_server(argv, port)))
        stack.callback(client.close)
        call: Callable[[], Any] = (
            client.list_tools
            if way == "list_tools"
            else lambda: client.call_tool("echo", {"text": "hello"})
        )
        for _ in range(5):
            call()

        def work() -> None:
            for _ in range(calls // threads):
                call()

        pool = [threading.Thread(target=work) for _ in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()


def _print_callers(thread_counts: list[int]) -> None:
    print(f"{'way':10s} {'over':5s} {'callers':>7s} {'instructions per call':>22s}")
    for name in ("call_tool", "list_tools"):
        for kind in ("stdio", "http"):
            for threads in thread_counts:
                way = ["bench.instructions", "callers", kind, str(threads)]
                many = count_instructions([*way, "2008", name])
                per_call = (many - count_instructions([*way, "8", name])) / 2000
                print(f"{name:10s} {kind:5s} {threads:7d} {per_call:20,.0f}", flush=True)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "callers":
        _callers(argv[1], int(argv[2]), int(argv[3]), *argv[4:5])
        return 0
    if argv and argv[0] != "--callers":
        way, calls = argv[0], int(argv[1]) if len(argv) > 1 else 1
        call = _ways()[way]
        for _ in range(calls):
            call()
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    if argv:
        _print_callers([int(n) for n in argv[1:]] or [1, 8])
        return 0
    print(f"{'way':14s} {'instructions per call':>22s}")
    for way in _ways():
        per_call = (_count(way, 2010) - _count(way, 10)) / 2000
        print(f"{way:14s} {per_call:20,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
