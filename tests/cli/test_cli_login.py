"""mcp-sync login / logout against a real OAuth-protected server (fastmcp's in-memory
authorization server), signing in headlessly: the test plays the browser."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.helpers.cli_support import run_cli

pytest.importorskip("fastmcp", reason="fastmcp 4.2.3 needs Python >= 3.11")
from tests.helpers.oauth_fastmcp_server import serve

pytestmark = pytest.mark.timeout(60)
BIN = Path(sys.executable).parent


@pytest.fixture
def oauth_server():
    with serve() as running:
        yield running


def test_login_then_call_then_logout(oauth_server, tmp_path, monkeypatch):
    store = tmp_path / "oauth.json"
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(store))
    url = oauth_server.url

    before = run_cli(url, "call", "add", "a=1", "b=2")
    assert before.code == 6, before.err
    assert "mcp-sync login URL" in before.err

    proc = subprocess.Popen(
        [str(BIN / "mcp-sync"), "login", "--no-browser", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    try:
        deadline = time.monotonic() + 30
        line = ""
        while "Open this URL to sign in" not in line:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        authorization_url = lines.get(timeout=10).strip()
        # the browser: the authorization server approves and redirects to the loopback
        approved = requests.get(authorization_url, allow_redirects=False, timeout=10)
        assert approved.status_code in (302, 303, 307), approved.text
        callback = requests.get(approved.headers["Location"], timeout=10)
        assert callback.status_code == 200
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    rest = "".join(lines.get() for _ in range(lines.qsize()))
    assert f"Signed in to {url}" in rest
    assert store.exists()

    after = run_cli(url, "call", "add", "a=1", "b=2")
    assert (after.code, after.out) == (0, "3\n"), after.err

    out = run_cli("logout", url)
    assert out.code == 0 and out.err == f"Signed out of {url}\n"
    again = run_cli(url, "tools")
    assert again.code == 6
