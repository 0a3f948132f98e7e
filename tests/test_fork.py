"""A client does not survive fork(): the child gets a clear error, not a hang."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import mcp_sync
from tests.helpers.support import in_forked_child as in_child

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()"),
]
SDK = [sys.executable, str(Path(__file__).parent / "servers" / "sdk_server.py")]


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
