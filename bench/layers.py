"""``python -m bench.layers``: where a sequential stdio call's time goes, layer by layer.

Four ways to make the same ``tools/call`` against the trivial server, timed round-robin in one
process (as ``python -m bench`` does), each against the raw floor of the same round:

- ``raw floor``: ``bench.raw_floor.RawPipe`` (JSON over the pipe, a reader thread, a Future);
- ``raw + typed result``: the floor, then ``CallToolResult.from_wire`` on its result;
- ``client.request``: mcp_sync up to the untyped result (transport, session, client);
- ``client.call_tool``: the whole typed call, as users make it.

Besides the latency (median over the run, and the spread of per-round ratios) it prints the
process CPU time per call (user + system, both threads): the hand-off between the caller and
the reader thread makes a few microseconds of CPU cost more than that in latency.

python -m bench.layers              # 20 rounds of 400 calls per way
python -m bench.layers --rounds 5   # quicker
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import mcp_sync

from .raw_floor import RawPipe
from .suite import ECHO, TRIVIAL, sync_stdio


def timed(call: Callable[[], Any], n: int) -> tuple[float, float]:
    """Median latency and mean process CPU time of ``n`` calls, in seconds."""
    samples = []
    clock = time.perf_counter
    cpu_before = os.times()
    for _ in range(n):
        start = clock()
        call()
        samples.append(clock() - start)
    cpu_after = os.times()
    cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    return statistics.median(samples), cpu / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.layers", description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=400, help="calls per way per round")
    args = parser.parse_args(argv)
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the spread needs two rounds)")

    name, arguments = ECHO
    params = {"name": name, "arguments": arguments}
    client = sync_stdio(TRIVIAL)
    raw = RawPipe(TRIVIAL)
    ways: dict[str, Callable[[], Any]] = {
        "raw floor": lambda: raw.call_tool(name, arguments),
        "raw + typed result": lambda: mcp_sync.types.CallToolResult.from_wire(
            raw.call_tool(name, arguments)
        ),
        "client.request": lambda: client.request("tools/call", params),
        "client.call_tool": lambda: client.call_tool(name, arguments),
    }
    try:
        for call in ways.values():  # warm up: imports, validators, pipes
            timed(call, 50)
        latency: dict[str, list[float]] = {way: [] for way in ways}
        cpu: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.rounds):
            order = list(ways)
            random.shuffle(order)  # no way always runs right after another
            for way in order:
                median, per_call = timed(ways[way], args.calls)
                latency[way].append(median)
                cpu[way].append(per_call)
    finally:
        client.close()
        raw.close()

    floor = statistics.median(latency["raw floor"])
    print(f"{'way':20s} {'latency':>9s} {'vs floor':>9s} {'per-round q1..q3':>17s} {'CPU':>9s}")
    for way in ways:
        ratios = [a / b for a, b in zip(latency[way], latency["raw floor"], strict=True)]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        print(
            f"{way:20s} {statistics.median(latency[way]) * 1e6:7.1f}us"
            f" {statistics.median(latency[way]) / floor:8.2f}x"
            f" {q1:8.2f}..{q3:<7.2f}"
            f" {statistics.mean(cpu[way]) * 1e6:7.1f}us"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
