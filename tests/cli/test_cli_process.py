"""The installed `mcp-sync` command as a separate process: entry point, Ctrl-C."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

BIN = Path(sys.executable).parent


def test_console_script_and_python_dash_m(time_server):
    for cli in ([str(BIN / "mcp-sync")], [sys.executable, "-m", "mcp_sync"]):
        done = subprocess.run(
            [*cli, "--json", "tools", "--", *time_server],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        assert '"get_current_time"' in done.stdout
    help_text = subprocess.run(
        [str(BIN / "mcp-sync"), "--help"], capture_output=True, text=True, timeout=30
    )
    assert help_text.returncode == 0
    assert "130  interrupted (Ctrl-C)" in help_text.stdout


def test_ctrl_c_cancels_the_call_and_exits_130(everything, tmp_path):
    record = tmp_path / "server-stdin.jsonl"  # tee keeps every byte the CLI wrote to the server
    recorded = ["sh", "-c", 'tee -a "$0" | exec "$@"', str(record), *everything]
    proc = subprocess.Popen(
        [
            str(BIN / "mcp-sync"),
            "-v",
            "call",
            "trigger-long-running-operation",
            "duration=30",
            "steps=30",
            "--",
            *recorded,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A suite started in the background (`make test &`) ignores SIGINT, and a child
        # inherits that: give the CLI the SIGINT a user's terminal would deliver.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    try:
        deadline = time.monotonic() + 30
        while True:  # wait until the call is running: its first progress report
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line.startswith("progress "):
                break
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=15)  # the bound on "promptly"; speed is not asserted here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert "mcp-sync: interrupted\n" in rest
    assert proc.stdout.read() == ""  # no result was printed
    # the cancellation reached the server before the CLI closed the connection (#28)
    assert b'"notifications/cancelled"' in record.read_bytes()
