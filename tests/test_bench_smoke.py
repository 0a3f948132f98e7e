"""`python -m bench --quick` runs every comparison once and prints every row (no timing checks:
benchmarks are not tests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

ROWS = [
    "stdio: sequential call",
    "stdio: 8 threads, one client",
    "stdio: 32 threads, one client",
    "stdio: 8 callers vs 1 caller, own",
    "stdio real: sequential call",
    "HTTP json: sequential call",
    "HTTP json: 8 callers vs 1 caller, own",
    "HTTP sse: sequential call",
    "HTTP sse: 8 callers vs 1 caller, own",
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
    # the close rows mostly sleep (the servers ignore EOF / SIGTERM): run them alongside the rest
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench",
                "--quick",
                flag,
                "close",
                "--json",
                str(tmp_path / f"{n}.json"),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, flag in enumerate(("--only", "--skip"))
    ]
    printed = ""
    for run in runs:
        out, err = run.communicate(timeout=110)
        assert run.returncode == 0, err[-3000:]
        printed += out
    for row in ROWS:
        assert row in printed, f"missing row {row!r}\n{printed}"
    assert all((tmp_path / f"{n}.json").stat().st_size > 0 for n in range(2))


@pytest.mark.timeout(60)
def test_layers_prints_every_way() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bench.layers", "--rounds", "2", "--calls", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for way in ("raw floor", "raw + typed result", "client.request", "client.call_tool"):
        assert way in run.stdout, run.stdout


@pytest.mark.parametrize("way", ["floor", "request", "call_tool", "list_tools", "typed_result"])
def test_instruction_count_ways_run(way: str) -> None:
    # what valgrind runs for `python -m bench.instructions` (valgrind itself is not needed)
    run = subprocess.run(
        [sys.executable, "-m", "bench.instructions", way, "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize("call", ["call_tool", "list_tools"])
@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_instruction_count_callers_run(kind: str, call: str) -> None:
    # what valgrind runs for `python -m bench.instructions --callers`: 8 threads, one client
    run = subprocess.run(
        [sys.executable, "-m", "bench.instructions", "callers", kind, "8", "16", call],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-3000:]


HTTP_WAYS = [
    "http.client",
    "urllib3",
    "requests",
    "transport",
    "client.request",
    "client.call_tool",
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["json", "sse"])
def test_http_layers_prints_every_way(kind: str) -> None:
    flags = ["--sse"] if kind == "sse" else []
    run = subprocess.run(
        [sys.executable, "-m", "bench.http_layers", *flags, "--rounds", "2", "--calls", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for way in [*HTTP_WAYS, "mcp (official)"]:
        assert f"\n{way} " in run.stdout, run.stdout


@pytest.mark.timeout(120)
def test_http_layers_threads_prints_every_row() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bench.http_layers", "--threads", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for n in (8, 32):
        for who in ("floor", "requests shared", "mcp_sync"):
            assert f"{who}, {n} threads" in run.stdout, run.stdout
    assert "mcp_sync, 1 thread" in run.stdout


@pytest.mark.timeout(120)
def test_http_cpu_prints_every_way_and_drives() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "bench.http_cpu", "--rounds", "1", "--calls", "16"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    for way in ("mcp_sync", "floor"):
        for callers in (1, 8):
            assert re.search(rf"^{way} +{callers} ", run.stdout, re.MULTILINE), run.stdout
        assert f"{way}: 8 callers over 1, round by round:" in run.stdout, run.stdout
    drive = subprocess.run(
        [sys.executable, "-m", "bench.http_cpu", "--drive", "mcp_sync", "8", "0.5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert drive.returncode == 0, drive.stderr[-3000:]
    assert "8 callers of mcp_sync" in drive.stdout and "calls/s" in drive.stdout, drive.stdout
