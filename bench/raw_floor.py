"""The floors: the same exchanges with no MCP layer at all.

- stdio: newline JSON over the server's pipes, a reader thread that resolves a
  ``concurrent.futures.Future`` per id, the caller blocked on ``Future.result()``.
- HTTP: one ``http.client`` POST per call on a kept-alive connection (one per thread).
"""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import threading
from concurrent.futures import Future
from typing import Any
from urllib.parse import urlsplit

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class RawPipe:
    """A JSON-RPC echo over a pipe: one reader thread and a Future per request."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._ids = itertools.count(1)
        self._pending: dict[int, Future[Any]] = {}
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        loads = json.loads
        pending = self._pending
        # a buffered reader on the raw pipe, as a plain threaded client would write it
        with open(stdout.fileno(), "rb", closefd=False) as reader:
            for line in reader:
                message = loads(line)
                future = pending.pop(message["id"], None)
                if future is not None:
                    future.set_result(message.get("result"))

    def request(self, method: str, params: dict[str, Any]) -> Any:
        request_id = next(self._ids)
        future: Future[Any] = Future()
        self._pending[request_id] = future
        data = (
            _dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(data)
        return future.result()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(5)
        self._reader.join(5)


class RawHttp:
    """One ``http.client`` connection, one POST per call (SSE bodies read to their end)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
        self._ids = itertools.count(1)
        self.session_id: str | None = None
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        body = _dumps(
            {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        self.conn.request("POST", self.path, body, headers)
        response = self.conn.getresponse()
        self.session_id = response.getheader("Mcp-Session-Id") or self.session_id
        data = response.read()
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            for line in data.splitlines():
                if line.startswith(b"data:"):
                    data = line[5:]
                    break
        return json.loads(data)["result"]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        self.conn.close()
