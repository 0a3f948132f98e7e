"""One 16 MiB round trip in a fresh process: its time and the growth of peak RSS it caused.

    python -m bench.memory_probe "mcp_sync"|"mcp (official)"|"raw floor" SIZE

Prints one JSON line ``{"seconds": ..., "growth": bytes}``. The peak (``VmHWM``) is reset
through ``/proc/self/clear_refs`` after a warm-up call, so the figure is the call's own peak
over the resident size before it, with the result still referenced.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from . import sdk_client
from .raw_floor import RawPipe
from .stats import RAW, SDK, SYNC
from .suite import TRIVIAL, sync_stdio


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak() -> int:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status("VmRSS")


def main() -> None:
    who, size = sys.argv[1], int(sys.argv[2])
    args = {"size": size}
    keep: list[Any] = []
    if who == SYNC:
        client = sync_stdio(TRIVIAL, max_message_bytes=4 * size)
        client.call_tool("big", {"size": 1000})
        base = _reset_peak()
        start = time.perf_counter()
        keep.append(client.call_tool("big", args))
        seconds = time.perf_counter() - start
        peak = _status("VmHWM")
        assert len(keep[0].content[0].text) == size
        client.close()
    elif who == SDK:
        held = sdk_client.Held(sdk_client.stdio_context(TRIVIAL))
        sdk_client.run(held.session.call_tool("big", {"size": 1000}))
        base = _reset_peak()
        start = time.perf_counter()
        keep.append(sdk_client.run(held.session.call_tool("big", args)))
        seconds = time.perf_counter() - start
        peak = _status("VmHWM")
        held.close()
    elif who == RAW:
        raw = RawPipe(TRIVIAL)
        raw.call_tool("big", {"size": 1000})
        base = _reset_peak()
        start = time.perf_counter()
        keep.append(raw.call_tool("big", args))
        seconds = time.perf_counter() - start
        peak = _status("VmHWM")
        raw.close()
    else:
        raise SystemExit(f"unknown client {who!r}")
    print(json.dumps({"seconds": seconds, "growth": max(peak - base, 0)}))


if __name__ == "__main__":
    main()
