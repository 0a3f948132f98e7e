"""mcp-server-time: the small real-world server of `make demo`."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_get_current_time(time_cmd, mcp_client):
    client = mcp_client(time_cmd)  # the project's own pytest plugin
    result = client.call_tool("get_current_time", {"timezone": "UTC"})
    stamp = datetime.datetime.fromisoformat(result.structured_content["datetime"])
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - stamp).total_seconds()) < 120
    converted = client.call_tool(
        "convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    )
    assert converted.structured_content["target"]["datetime"].endswith("+09:00")


def test_quickstart_example_runs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "get_current_time" in done.stdout and '"timezone": "Europe/Paris"' in done.stdout
