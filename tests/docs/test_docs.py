"""Every code block of docs/*.md runs (see docs_runner.py for the convention)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.docs_runner import console_commands, loose_match, parse, run_page
from tests.helpers.support import client_threads, free_port, wait_listening

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SERVER = ROOT / "tests" / "servers" / "sdk_server.py"
BIN = Path(sys.executable).parent
PAGES = sorted(DOCS.rglob("*.md"))

# A page runs every command it shows, each starting the CLI and often a server: the CLI page's
# 36 took 120 s on a busy 2-core machine (each command still has its own 90 s bound).
pytestmark = pytest.mark.timeout(360)


class HttpServers:
    """``docs_server_url()`` for pages: the fixture server over Streamable HTTP."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.url: str | None = None

    def __call__(self) -> str:
        if self.url is None:
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, str(SERVER), "streamable-http", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.procs.append(proc)
            wait_listening(proc, port)
            self.url = f"http://127.0.0.1:{port}/mcp"
        return self.url

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def http_server():
    servers = HttpServers()
    yield servers
    servers.stop()


def docs_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    env["NODE_NO_WARNINGS"] = "1"
    return env


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_page(path, tmp_path, monkeypatch, http_server):
    page = parse(path)
    shutil.copy(SERVER, tmp_path / "server.py")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = docs_env()
    if "$URL" in path.read_text():  # shell sessions against the fixture server over HTTP
        env["URL"] = http_server()
    for key in ("PATH", "COLUMNS", "NODE_NO_WARNINGS"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.chdir(tmp_path)
    before = set(client_threads())
    with contextlib.ExitStack() as cleanup:  # closed after run_page has closed the clients
        namespace = {
            "__name__": "__docs__",
            "docs_server_url": http_server,
            "docs_cleanup": cleanup,
        }
        run_page(page, tmp_path, env, namespace)
    # A page must close what it opens (as its readers should): nothing of a client left running.
    leftover = lambda: [t.name for t in client_threads() if t not in before and t.is_alive()]  # noqa: E731
    deadline = time.monotonic() + 5
    while leftover() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not leftover(), f"{path.name} leaves client threads running: {leftover()}"


def test_every_python_block_of_the_docs_is_seen():
    blocks = [b for p in PAGES for b in parse(p).blocks]
    assert sum(b.kind == "python" for b in blocks) >= 20


def test_loose_matching():
    assert loose_match("a  b\n...\nc", "a b\nxx\nyy\nc")
    assert loose_match("pong (...)", "pong (1.2 ms)")
    assert not loose_match("a b", "a c")
    assert list(console_commands("$ echo a \\\n  b\na b\n$ true")) == [
        ("echo a \\\n  b", "a b"),
        ("true", ""),
    ]
