"""The soak runs. Each returns a :class:`SoakResult` with its figures and the problems found.

- ``calls``: ``threads`` threads share one client and make ``calls`` ``tools/call`` requests in
  all, each with a unique text that the server echoes: a lost response shows as a timeout, a
  mis-correlated one as another call's text. RSS is sampled as calls complete; its slope
  (least squares, KiB per 1000 calls, over the second half of the run, after warm-up) is
  reported, with thread and fd counts before and after.
- ``cycles``: connect, call, close, ``cycles`` times; afterwards the client threads, fds and
  child processes must be what they were before, and no socket may be left open.

Servers: ``bench/trivial_stdio_server.py`` and ``bench/trivial_http_server.py`` (near-zero
cost, so the client is what is measured).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mcp_sync
from mcp_sync import Client, StdioTransport, StreamableHttpTransport

ROOT = Path(__file__).resolve().parents[2]
Log = Callable[[str], None]


@dataclass
class SoakResult:
    name: str
    calls: int = 0
    threads: int = 0
    cycles: int = 0
    seconds: float = 0.0
    lost: int = 0
    wrong: int = 0
    errors: int = 0
    rss_start_mib: float = 0.0
    rss_end_mib: float = 0.0
    rss_slope_kib_per_1k_calls: float = 0.0
    threads_before: int = 0
    threads_after: int = 0
    fds_before: int = 0
    fds_after: int = 0
    children_after: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def children() -> set[int]:
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children") as f:
            found.update(int(pid) for pid in f.read().split())
    return found


def tcp_sockets() -> int:
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                count += 1
    return count


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y over x."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if var == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.trivial_http_server", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        if process.stdout.readline().strip() != b"ready":
            raise RuntimeError("bench.trivial_http_server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(5)
        if process.stdout is not None:
            process.stdout.close()


def stdio_transport() -> StdioTransport:
    return StdioTransport(
        sys.executable,
        ["-m", "bench.trivial_stdio_server"],
        cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT)},
    )


def client_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("mcp-sync"))


def soak_calls(
    name: str, make: Callable[[], Any], calls: int, threads: int, log: Log
) -> SoakResult:
    result = SoakResult(
        f"{name}: {calls} calls from {threads} threads", calls=calls, threads=threads
    )
    client = Client("soak", "1", protocol="handshake", request_timeout=30)
    client.connect(make())
    # Warm-up at full concurrency: an HTTP client's worker pool and connection pool grow to
    # the number of concurrent calls; growth after that is what a leak would look like.
    warm = [
        threading.Thread(
            target=lambda: [client.call_tool("echo", {"text": "w"}) for _ in range(20)]
        )
        for _ in range(threads)
    ]
    for thread in warm:
        thread.start()
    for thread in warm:
        thread.join()
    result.threads_before = threading.active_count()
    result.fds_before = fd_count()
    result.rss_start_mib = rss_kib() / 1024
    lock = threading.Lock()
    done = [0]
    samples: list[tuple[float, float]] = []
    counts: list[tuple[int, int]] = []  # (threads, fds) as calls complete
    sample_every = max(calls // 200, 1)
    per_thread = [calls // threads + (1 if i < calls % threads else 0) for i in range(threads)]

    def worker(index: int) -> None:
        for j in range(per_thread[index]):
            text = f"{index}:{j}"
            try:
                got = client.call_tool("echo", {"text": text}).text
            except mcp_sync.RequestTimeout:
                with lock:
                    result.lost += 1
                continue
            except Exception:
                with lock:
                    result.errors += 1
                continue
            with lock:
                if got != text:
                    result.wrong += 1
                done[0] += 1
                if done[0] % sample_every == 0:
                    samples.append((done[0], rss_kib()))
                    counts.append((threading.active_count(), fd_count()))

    started = time.perf_counter()
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    result.seconds = time.perf_counter() - started
    result.rss_end_mib = rss_kib() / 1024
    tail = samples[len(samples) // 2 :]
    result.rss_slope_kib_per_1k_calls = slope(tail) * 1000
    result.threads_after = threading.active_count()
    result.fds_after = fd_count()
    client.close()
    if result.lost or result.wrong or result.errors:
        result.problems.append(f"lost {result.lost}, wrong {result.wrong}, errors {result.errors}")
    # Pools may turn a connection or a worker over; a leak grows with the number of calls, so
    # the second half of the run must not reach past the first half's peak (+ a small margin).
    half = len(counts) // 2
    for label, index in (("threads", 0), ("fds", 1)):
        first = max((c[index] for c in counts[:half]), default=0)
        second = max((c[index] for c in counts[half:]), default=0)
        if second > first + 4:
            result.problems.append(f"{label} grew: peak {first} in the first half, {second} after")
    log(
        f"{result.name}: {result.seconds:.1f} s ({calls / result.seconds:,.0f} calls/s), "
        f"lost {result.lost}, wrong {result.wrong}, errors {result.errors}, "
        f"RSS {result.rss_start_mib:.1f} -> {result.rss_end_mib:.1f} MiB, "
        f"slope {result.rss_slope_kib_per_1k_calls:+.2f} KiB/1k calls, "
        f"threads {result.threads_before} -> {result.threads_after}, "
        f"fds {result.fds_before} -> {result.fds_after}"
    )
    return result


def soak_cycles(name: str, make: Callable[[], Any], cycles: int, log: Log) -> SoakResult:
    result = SoakResult(f"{name}: {cycles} connect/close cycles", cycles=cycles)
    with Client("soak", "1", protocol="handshake").connect(make()) as client:  # warm-up
        client.call_tool("echo", {"text": "x"})
    before_children = children()
    result.threads_before = client_threads()
    result.fds_before = fd_count()
    sockets_before = tcp_sockets()
    result.rss_start_mib = rss_kib() / 1024
    started = time.perf_counter()
    for i in range(cycles):
        with Client("soak", "1", protocol="handshake").connect(make()) as client:
            if client.call_tool("echo", {"text": str(i)}).text != str(i):
                result.wrong += 1
    result.seconds = time.perf_counter() - started
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (client_threads() or children() - before_children):
        time.sleep(0.01)  # daemon threads may still be on their way out
    result.threads_after = client_threads()
    result.fds_after = fd_count()
    result.children_after = len(children() - before_children)
    result.rss_end_mib = rss_kib() / 1024
    sockets_after = tcp_sockets()
    if result.wrong:
        result.problems.append(f"{result.wrong} wrong answers")
    if result.threads_after > result.threads_before:
        result.problems.append(f"client threads left: {result.threads_after}")
    if result.fds_after > result.fds_before:
        result.problems.append(f"fds grew {result.fds_before} -> {result.fds_after}")
    if result.children_after:
        result.problems.append(f"{result.children_after} child processes left")
    if sockets_after > sockets_before:
        result.problems.append(f"sockets grew {sockets_before} -> {sockets_after}")
    log(
        f"{result.name}: {result.seconds:.1f} s ({result.seconds / cycles * 1000:.1f} ms/cycle), "
        f"client threads {result.threads_before} -> {result.threads_after}, "
        f"fds {result.fds_before} -> {result.fds_after}, sockets {sockets_before} -> "
        f"{sockets_after}, children left {result.children_after}, "
        f"RSS {result.rss_start_mib:.1f} -> {result.rss_end_mib:.1f} MiB"
    )
    return result


def run(
    *,
    calls: int,
    threads: int,
    cycles: int,
    transports: list[str],
    log: Log = lambda line: None,
) -> list[SoakResult]:
    results = []
    if "stdio" in transports:
        results.append(soak_calls("stdio", stdio_transport, calls, threads, log))
        results.append(soak_cycles("stdio", stdio_transport, cycles, log))
    if "http" in transports:
        with http_server() as url:
            results.append(
                soak_calls("http", lambda: StreamableHttpTransport(url), calls, threads, log)
            )
            results.append(soak_cycles("http", lambda: StreamableHttpTransport(url), cycles, log))
    return results
