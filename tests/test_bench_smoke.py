"""`python -m bench --quick` runs every comparison once and prints every row (no timing checks:
benchmarks are not tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

ROWS = [
    "stdio: sequential call",
    "stdio: 8 threads, one client",
    "stdio: 32 threads, one client",
    "stdio real: sequential call",
    "HTTP json: sequential call",
    "HTTP sse: sequential call",
    "HTTP json real: sequential call",
    "HTTP sse real: sequential call",
    "import time",
    "modules loaded",
    "cold start: spawn, initialize, list_tools, close",
    "close: server exits on EOF",
    "close: server ignores EOF",
    "close: server ignores SIGTERM",
    "16 MiB result: round trip",
    "16 MiB result: peak memory growth",
]


@pytest.mark.timeout(120)
def test_quick_bench_prints_every_row(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(tmp_path / "run.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    for row in ROWS:
        assert row in out.stdout, f"missing row {row!r}\n{out.stdout}"
    assert (tmp_path / "run.json").stat().st_size > 0
