"""A client does not survive fork(): the child gets a clear error, not a hang."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

import mcp_sync

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()"),
]
SDK = [sys.executable, str(Path(__file__).parent / "servers" / "sdk_server.py")]


def in_child(work) -> dict:
    """Run ``work()`` in a forked child; return what it returned (a JSON-able dict)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 0
        try:
            os.close(read_fd)
            payload = work()
        except BaseException as exc:
            payload, code = {"unexpected": f"{type(exc).__name__}: {exc}"}, 1
        try:
            os.write(write_fd, json.dumps(payload).encode())
        finally:
            os._exit(code)
    os.close(write_fd)
    deadline = time.monotonic() + 30
    while True:
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    with os.fdopen(read_fd, "rb") as pipe:
        return json.loads(pipe.read() or b"{}")


def test_using_a_client_in_a_forked_child_raises_a_clear_error():
    with mcp_sync.connect(SDK, request_timeout=20) as client:

        def child():
            try:
                client.call_tool("add", {"a": 1, "b": 2})
            except mcp_sync.InvalidStateError as exc:
                return {"error": str(exc)}
            return {"error": None}

        result = in_child(child)
        assert "after the fork" in (result.get("error") or ""), result
        # the parent's client is untouched
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_a_client_created_after_the_fork_works():
    def child():
        with mcp_sync.connect(SDK, request_timeout=20) as client:
            return {"sum": client.call_tool("add", {"a": 20, "b": 22}).structured_content}

    assert in_child(child) == {"sum": {"result": 42}}
