"""What the stdio sandbox adds to a cold start, measured by hand (not part of the suite).

Starts ``bench/trivial_stdio_server.py`` (standard library only) with ``mcp_sync.connect`` and
closes it, ``--runs`` times each: unsandboxed, ``sandbox=Sandbox(...)`` (a Python shim runs
inside: it sets the limits, 256 processes by default for a client that is not root, and
reports that the sandbox is set up), and with memory and file limits too. Prints the median
and the 90th percentile of connect + ``list_tools`` + ``close``, in milliseconds::

    python bench/sandbox_cold_start.py --runs 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import mcp_sync
from mcp_sync import Sandbox

SERVER = str(Path(__file__).with_name("trivial_stdio_server.py"))
PYTHON_TREE = (sys.base_prefix, sys.prefix)


def once(sandbox: Sandbox | None) -> float:
    started = time.perf_counter()
    with mcp_sync.connect([sys.executable, "-I", "-S", SERVER], sandbox=sandbox) as client:
        client.list_tools()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    cases = {
        "no sandbox": None,
        "sandbox": Sandbox(read_only=PYTHON_TREE),
        "sandbox + limits": Sandbox(read_only=PYTHON_TREE, max_memory=2**31, max_open_files=256),
    }
    once(cases["sandbox"])  # the one-off bwrap probe is not part of a cold start
    for name, sandbox in cases.items():
        times = sorted(once(sandbox) for _ in range(runs))
        p90 = times[int(0.9 * (len(times) - 1))]
        print(f"{name:18} median {statistics.median(times):6.1f} ms   p90 {p90:6.1f} ms")


if __name__ == "__main__":
    main()
