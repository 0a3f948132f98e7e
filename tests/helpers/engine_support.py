"""What test_dask.py and test_ray.py share: the OAuth-protected ledger server with a real
redis-server, signed in once, and docs/scale.md's files written out to run as written."""

from __future__ import annotations

import collections
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import mcp_sync
from mcp_sync.oauth import OAuthProvider, headless_redirect
from mcp_sync.oauth.redis_store import RedisStateStore
from tests.helpers.docs_runner import parse
from tests.helpers.redis_server import redis_server
from tests.helpers.support import ROOT, SERVERS, free_port, wait_until

SCALE = ROOT / "docs" / "scale.md"
SERVER = SERVERS / "ledger_oauth_server.py"


class Service:
    """The MCP server's URL, the Redis URL and the server's ledger of calls and effects."""

    def __init__(self, url: str, redis_url: str, ledger: Path) -> None:
        self.url, self.redis_url, self.ledger = url, redis_url, ledger

    def calls(self) -> list[tuple[int, int]]:
        """(row, the client's TCP port) of every call the tool received."""
        lines = (self.ledger / "calls").read_text().splitlines()
        return [(int(row), int(port)) for row, port in (line.split() for line in lines)]

    def effects(self) -> collections.Counter[int]:
        return collections.Counter(int(r) for r in (self.ledger / "effects").read_text().split())

    def wait_for_calls(self, count: int, timeout: float) -> None:
        """Until the server has received about ``count`` calls (a ledger line is about 11
        bytes: reading the size is cheap, parsing 10,000 lines is not)."""
        calls = self.ledger / "calls"
        wait_until(lambda: calls.stat().st_size >= count * 11, timeout=timeout, interval=0.05)


@contextmanager
def ledger_service(workdir: Path) -> Iterator[Service]:
    """The server (in its own process) and Redis, signed in once into Redis (as
    docs/scale.md's sign_in.py does, headless here)."""
    ledger = workdir / "ledger"
    ledger.mkdir()
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(port), str(ledger)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with redis_server(workdir) as redis_url:
            url = f"http://127.0.0.1:{port}/mcp"
            provider = OAuthProvider(
                url,
                "http://127.0.0.1:1/callback",
                on_redirect=headless_redirect(),
                store=RedisStateStore(redis_url),
            )

            def signed_in() -> bool:
                try:
                    with mcp_sync.connect(url, auth=provider, request_timeout=10) as client:
                        return "record" in [tool.name for tool in client.list_tools()]
                except mcp_sync.errors.McpError:  # not listening yet
                    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                    return False

            wait_until(signed_in, timeout=60)
            yield Service(url, redis_url, ledger)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def docs_file(name: str) -> str:
    """The code of docs/scale.md's block titled ``name``."""
    return next(b.code for b in parse(SCALE).blocks if b.kind == "file" and b.file == name)


def write_docs_files(where: Path, *names: str) -> None:
    for name in names:
        (where / name).write_text(docs_file(name) + "\n", encoding="utf-8")
