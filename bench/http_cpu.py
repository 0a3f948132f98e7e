"""``python -m bench.http_cpu``: what bounds 8 callers over Streamable HTTP on this machine (the
rows "HTTP json/sse: 8 callers vs 1 caller, own" of ``make bench``, issue 43).

The same ``tools/call`` against ``bench/trivial_http_server.py``, two ways: ``mcp_sync`` (threads
sharing one client) and the ``floor`` (``http.client``, one kept-alive connection per thread).
Each round runs each way with 1 caller, then with 8 callers making as many calls in all, and
reads, around each run, the CPU time of this process (every thread) and of the server's. Per
way and number of callers (medians over the rounds):

- calls per second;
- client CPU and server CPU per call, in microseconds;
- client cores and server cores: CPU time over wall time, how many of the machine's cores each
  process kept busy (on 2 cores, the two together cannot pass 2.0; a Python process whose
  threads all hold the GIL to work cannot pass about 1.0 however many callers it has);
- context switches of the client per call (voluntary and not);

then each way's 8-over-1 ratio, round by round. ``--switch-interval`` runs it with
``sys.setswitchinterval`` set (CPython's default is 0.005 s).

``--drive WAY N SECONDS`` only runs N callers of one way for that long after printing this
process's id, for a profiler to attach (py-spy, run by hand: ``py-spy record --pid PID --gil``
samples the thread holding the GIL, ``--idle`` every thread however it waits).

python -m bench.http_cpu                         # JSON answers, 7 rounds of 2,000 calls
python -m bench.http_cpu --sse --rounds 3
python -m bench.http_cpu --switch-interval 0.0005
python -m bench.http_cpu --drive mcp_sync 8 10   # for py-spy
python -m bench.http_cpu --perf mcp_sync         # where the client's CPU goes, 1 and 8 callers

``--perf WAY`` drives 1, then 8 callers of one way in a child process, samples that process with
Linux ``perf record --call-graph dwarf`` (it must be installed and allowed:
``kernel.perf_event_paranoid`` <= 2 for one's own processes) and sorts each sample by the
innermost frame that says what the thread was doing: waiting to take the GIL (``take_gil``),
handing it over (``drop_gil``), a ``threading`` lock, ``Event``, ``Condition`` or ``Future``
(``PyThread_acquire_lock_timed``, ``PyThread_release_lock``), a socket call, or running Python.
Unlike ``py-spy --gil``, it needs no GIL holder to be found: every sample is CPU the process
spent.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .raw_floor import RawHttp
from .suite import (
    ECHO,
    PY,
    ROOT,
    _threaded,
    _threaded_per_connection,
    free_port,
    http_server_process,
    sync_http,
)

WAYS = ("mcp_sync", "floor")
_TICK = os.sysconf("SC_CLK_TCK")


def _server_cpu(pid: int) -> float:
    """The CPU seconds (user + system) of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _own() -> tuple[float, int]:
    """This process's CPU seconds so far (every thread) and its context switches."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_nvcsw + usage.ru_nivcsw


class _Way:
    """One way of calling: ``run(callers, calls_each)`` gives calls/s as ``make bench`` times
    them; ``call(i)`` makes one call as caller ``i``."""

    def __init__(self, run: Callable[[int, int], float], call: Callable[[int], object]) -> None:
        self.run = run
        self.call = call


@contextmanager
def _ways(sse: bool) -> Iterator[tuple[subprocess.Popen[bytes], dict[str, _Way]]]:
    """The trivial server, and each way of calling it."""
    port = free_port()
    argv = [PY, "-m", "bench.trivial_http_server", str(port)] + (["--sse"] if sse else [])
    with http_server_process(argv, port) as (proc, url):
        name, arguments = ECHO
        client = sync_http(url)
        conns = [RawHttp(url) for _ in range(8)]
        try:
            yield (
                proc,
                {
                    "mcp_sync": _Way(
                        lambda n, each: _threaded(
                            lambda: client.call_tool(name, arguments), n, each
                        ),
                        lambda i: client.call_tool(name, arguments),
                    ),
                    "floor": _Way(
                        lambda n, each: _threaded_per_connection(conns[:n], name, arguments, each),
                        lambda i: conns[i].call_tool(name, arguments),
                    ),
                },
            )
        finally:
            client.close()
            for conn in conns:
                conn.close()


def measure(sse: bool, rounds: int, calls: int) -> None:
    samples: dict[tuple[str, int], list[tuple[float, ...]]] = {}
    with _ways(sse) as (server, ways):
        for warm in ways.values():  # pools, connections, first-use models
            warm.run(1, 50)
            warm.run(8, 10)
        for _ in range(rounds):
            for way, each in ways.items():
                for callers in (1, 8):
                    cpu, switches = _own()
                    server_cpu = _server_cpu(server.pid)
                    start = time.perf_counter()
                    rate = each.run(callers, calls // callers)
                    wall = time.perf_counter() - start
                    cpu_after, switches_after = _own()
                    used, served = cpu_after - cpu, _server_cpu(server.pid) - server_cpu
                    samples.setdefault((way, callers), []).append(
                        (
                            rate,
                            used / calls * 1e6,
                            served / calls * 1e6,
                            used / wall,
                            served / wall,
                            (switches_after - switches) / calls,
                        )
                    )
    answer = "SSE" if sse else "JSON"
    interval = sys.getswitchinterval()
    print(f"{answer} answers, {rounds} rounds of {calls:,} calls, switch interval {interval} s")
    print(
        f"{'way':9s} {'callers':>7s} {'calls/s':>8s} {'client us/call':>14s} "
        f"{'server us/call':>14s} {'client cores':>12s} {'server cores':>12s} "
        f"{'switches/call':>13s}"
    )
    for (way, callers), rows in samples.items():
        rate, client, served, client_cores, server_cores, switches = (
            statistics.median(column) for column in zip(*rows, strict=True)
        )
        print(
            f"{way:9s} {callers:7d} {rate:8,.0f} {client:14.0f} {served:14.0f} "
            f"{client_cores:12.2f} {server_cores:12.2f} {switches:13.1f}"
        )
    for way in WAYS:
        ratios = [
            eight[0] / one[0] for eight, one in zip(samples[way, 8], samples[way, 1], strict=True)
        ]
        shown = ", ".join(f"{r:.2f}" for r in ratios)
        median = statistics.median(ratios)
        print(f"{way}: 8 callers over 1, round by round: {shown} (median {median:.2f}x)")


def drive(sse: bool, way: str, callers: int, seconds: float) -> None:
    with _ways(sse) as (_server, ways):
        call = ways[way].call
        ways[way].run(callers, 20)
        print(f"pid {os.getpid()}: {callers} callers of {way} for {seconds:g} s", flush=True)
        stop = threading.Event()
        made = [0] * callers

        def caller(i: int) -> None:
            while not stop.is_set():
                call(i)
                made[i] += 1

        pool = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
        start, cpu = time.perf_counter(), time.process_time()
        for thread in pool:
            thread.start()
        time.sleep(seconds)
        stop.set()
        for thread in pool:
            thread.join()
        wall, used = time.perf_counter() - start, time.process_time() - cpu
        print(f"{sum(made) / wall:,.0f} calls/s, client CPU {used / wall:.2f} cores", flush=True)


#: What a sample's innermost telling frame says the thread was doing (first match wins).
_KINDS = (
    ("take_gil", "waiting to take the GIL"),
    ("drop_gil", "handing the GIL over"),
    ("PyThread_acquire_lock", "a threading lock, Event, Condition or Future"),
    ("PyThread_release_lock", "a threading lock, Event, Condition or Future"),
    ("sock_", "a socket call"),
    ("internal_select", "a socket call"),
    ("internal_setblocking", "a socket call"),
    ("_PyEval_EvalFrame", "running Python"),
)


def _kind(sample: str) -> str:
    for line in sample.splitlines()[1:]:  # innermost frame first
        for needle, kind in _KINDS:
            if needle in line:
                return kind
    return "elsewhere (kernel or C, no Python frame found)"


def perf_profile(sse: bool, way: str, seconds: float) -> int:
    """Where the client process's CPU goes with 1 and with 8 callers (``--perf``)."""
    if shutil.which("perf") is None:
        print("perf is not installed (linux-tools / linux-perf)", file=sys.stderr)
        return 2
    for callers in (1, 8):
        argv = [PY, "-m", "bench.http_cpu", "--drive", way, str(callers), str(seconds + 3)]
        child = subprocess.Popen(
            argv + (["--sse"] if sse else []), stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert child.stdout is not None
        pid = child.stdout.readline().split()[1].rstrip(":")
        with tempfile.TemporaryDirectory() as scratch:
            data = os.path.join(scratch, "perf.data")
            record = ["perf", "record", "-q", "-F", "499", "--call-graph", "dwarf,16384"]
            recorded = subprocess.run(
                [*record, "-p", pid, "-o", data, "--", "sleep", str(seconds)],
                capture_output=True,
                text=True,
            )
            rate = child.stdout.read().strip()
            child.wait()
            if recorded.returncode != 0:
                print(f"perf record failed: {recorded.stderr.strip()}", file=sys.stderr)
                return 2
            script = subprocess.run(
                ["perf", "script", "-i", data], capture_output=True, text=True, check=True
            ).stdout
        samples = [s for s in script.split("\n\n") if s.strip()]
        kinds = collections.Counter(_kind(s) for s in samples)
        print(f"{way}, {callers} caller(s): {rate}; {len(samples):,} samples of its CPU")
        for kind, count in kinds.most_common():
            print(f"  {count / len(samples):6.1%}  {kind}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_cpu", description=__doc__)
    parser.add_argument("--sse", action="store_true", help="the server answers text/event-stream")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000, help="calls per run (1 or 8 callers)")
    parser.add_argument("--switch-interval", type=float, help="sys.setswitchinterval(SECONDS)")
    parser.add_argument("--drive", nargs=3, metavar=("WAY", "N", "SECONDS"))
    parser.add_argument("--perf", choices=WAYS, help="profile WAY's CPU with Linux perf")
    parser.add_argument("--seconds", type=float, default=5.0, help="of sampling (--perf)")
    args = parser.parse_args(argv)
    if args.perf:
        return perf_profile(args.sse, args.perf, args.seconds)
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    if args.drive:
        way, callers, seconds = args.drive
        drive(args.sse, way, int(callers), float(seconds))
    else:
        measure(args.sse, args.rounds, args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
