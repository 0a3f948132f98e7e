"""Rows per second: docs/scale.md's Dask recipe against one process with a thread pool.

    python -m bench.dask_vs_threads [--rows 10000] [--rounds 3] [--work-ms 0 2]
                                    [--workers 4] [--threads 2] [--pool 8]

Both map the tool ``echo`` of ``bench/trivial_http_server.py`` (a near-zero-cost Streamable
HTTP server, so that the client side's cost shows) over the rows:

- ``threads``: this process, one client shared by a ``ThreadPoolExecutor`` of ``--pool``;
- ``dask``: a ``distributed.LocalCluster`` of ``--workers`` processes x ``--threads``, a
  ``dask.bag`` of partitions of 100 rows, one ``shared_client`` per worker process.

``--work-ms`` adds that much pure-Python CPU work per row besides the call (parsing, a small
model; a fixed number of loops, timed here at best of 5): the case an engine's processes are
for. The contenders alternate, round after round;
the cluster is started once and warmed (each worker's client made) before the first round.
Each row of the table: the median over the rounds, their range, and the 1-minute load average
at the end (the machine's other work, which a shared machine's figures must be read with).
Needs the dask extra. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import mcp_sync


@mcp_sync.shared_client
def echo_server(url: str) -> mcp_sync.Client:
    return mcp_sync.connect(url, request_timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def work(loops: int) -> None:
    """A fixed amount of pure-Python CPU work, holding the GIL (not a wall-clock wait, which
    a loaded machine would stretch differently for each contender)."""
    for _ in range(loops):
        sum(range(100))


def loops_for(ms: float) -> int:
    """How many ``work`` loops take ``ms`` milliseconds here, at best of 5 (an idle core)."""
    best = min(_timed(work, 1000) for _ in range(5))
    return round(1000 * ms / 1000 / best)


def _timed(fn: object, arg: int) -> float:
    start = time.perf_counter()
    fn(arg)  # type: ignore[operator]
    return time.perf_counter() - start


def answer(row: int, *, url: str, work_loops: int) -> str:
    work(work_loops)
    return echo_server(url).call_tool("echo", {"text": str(row)}).text


def by_threads(url: str, rows: int, work_loops: int, pool: int) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(pool) as executor:
        answers = list(
            executor.map(lambda row: answer(row, url=url, work_loops=work_loops), range(rows))
        )
    elapsed = time.perf_counter() - start
    assert answers == [str(row) for row in range(rows)]
    return rows / elapsed


def by_dask(url: str, rows: int, work_loops: int) -> float:
    import dask.bag as db

    start = time.perf_counter()
    bag = db.from_sequence(range(rows), partition_size=100)
    answers = bag.map(answer, url=url, work_loops=work_loops).compute()
    elapsed = time.perf_counter() - start
    assert answers == [str(row) for row in range(rows)]
    return rows / elapsed


def spread(rates: list[float]) -> str:
    """The median rows/s, and the range over the rounds."""
    low, high = min(rates), max(rates)
    return f"{statistics.median(rates):,.0f} rows/s ({low:,.0f}-{high:,.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work-ms", type=float, nargs="+", default=[0.0, 2.0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pool", type=int, default=8)
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.trivial_http_server", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdout.readline() == "ready\n"
        url = f"http://127.0.0.1:{port}/mcp"
        started = time.perf_counter()
        with (
            LocalCluster(
                n_workers=args.workers,
                threads_per_worker=args.threads,
                dashboard_address=None,
                silence_logs=40,
            ) as cluster,
            Client(cluster),
        ):
            up = time.perf_counter() - started
            by_dask(url, 100 * args.workers * args.threads, 0)  # each worker's client made
            by_threads(url, 100, 0, args.pool)
            print(f"cluster of {args.workers} x {args.threads} up in {up:.1f} s")
            threads_title = f"threads ({args.pool}, one process)"
            print(f"| work per row | {threads_title} | dask | dask / threads | load |")
            print("|---|---|---|---|---|")
            for work_ms in args.work_ms:
                loops, threads, dask = loops_for(work_ms), [], []
                for _ in range(args.rounds):
                    threads.append(by_threads(url, args.rows, loops, args.pool))
                    dask.append(by_dask(url, args.rows, loops))
                t, d = statistics.median(threads), statistics.median(dask)
                print(
                    f"| {work_ms:g} ms | {spread(threads)} | {spread(dask)} | {d / t:.2f} "
                    f"| {os.getloadavg()[0]:.1f} |",
                    flush=True,
                )
    finally:
        echo_server.close()
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
