"""Every comparison of ``python -m bench``: each runs mcp_sync, the official SDK and a raw floor
round-robin (round after round, so that the machine's noise hits them alike) in one process
tree, against real server processes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_sync

from . import sdk_client
from .raw_floor import RawHttp, RawPipe
from .stats import RAW, SDK, SYNC, Row, Target

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
# -S: no site import; the server needs only the standard library, and starts faster
TRIVIAL = [PY, "-S", str(HERE / "trivial_stdio_server.py")]
REAL_SERVER = ROOT / "tests" / "servers" / "sdk_server.py"
REAL_STDIO = [PY, str(REAL_SERVER), "stdio"]
ECHO = ("echo", {"text": "hello"})
REAL_CALL = ("add", {"a": 1, "b": 2})


@dataclass(frozen=True)
class Plan:
    """How much to repeat: ``full`` for ``make bench`` (~4 min), ``quick`` for the smoke test."""

    rounds: int
    calls: int  # sequential calls per contender per round (stdio)
    http_calls: int
    thread_calls: int  # calls per thread per round
    spawns: int  # cold starts and closes per contender
    slow_closes: int  # closes of servers that ignore EOF / SIGTERM
    imports: int
    memory_runs: int
    big: int = 16 * 1024 * 1024  # the big result's size (smaller in the smoke test)

    @classmethod
    def full(cls) -> Plan:
        return cls(7, 400, 200, 40, 31, 2, 5, 2)

    @classmethod
    def quick(cls) -> Plan:
        return cls(1, 20, 10, 4, 1, 1, 1, 1, big=1024 * 1024)


# -- contenders -----------------------------------------------------------------------------


@functools.cache
def _legacy_kwargs() -> dict[str, Any]:
    """Pin the handshake era where the client can negotiate the stateless one too (asked of
    the signature once: ``inspect.signature`` costs 0.3 ms, which the cold start row would
    otherwise charge to mcp_sync)."""
    if "protocol" in inspect.signature(mcp_sync.Client).parameters:
        return {"protocol": "handshake"}
    return {}


def sync_stdio(argv: list[str], **transport: Any) -> mcp_sync.Client:
    client = mcp_sync.Client("bench", "1.0", **_legacy_kwargs())
    return client.connect(mcp_sync.StdioTransport(argv[0], argv[1:], stderr="devnull", **transport))


def sync_http(url: str) -> mcp_sync.Client:
    client = mcp_sync.Client("bench", "1.0", **_legacy_kwargs())
    return client.connect(mcp_sync.StreamableHttpTransport(url))


def _timed(call: Callable[[], Any], n: int) -> list[float]:
    out = []
    clock = time.perf_counter
    for _ in range(n):
        start = clock()
        call()
        out.append(clock() - start)
    return out


async def _atimed(call: Callable[[], Any], n: int) -> list[float]:
    out = []
    clock = time.perf_counter
    for _ in range(n):
        start = clock()
        await call()
        out.append(clock() - start)
    return out


def _threaded(call: Callable[[], Any], threads: int, per_thread: int) -> float:
    """Calls per second with ``threads`` threads each making ``per_thread`` calls."""
    barrier = threading.Barrier(threads + 1)

    def work() -> None:
        barrier.wait()
        for _ in range(per_thread):
            call()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in pool:
        thread.join()
    return threads * per_thread / (time.perf_counter() - start)


async def _gathered(call: Callable[[], Any], tasks: int, per_task: int) -> float:
    async def work() -> None:
        for _ in range(per_task):
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(work() for _ in range(tasks)))
    return tasks * per_task / (time.perf_counter() - start)


def _us(samples: list[float]) -> list[float]:
    return [s * 1e6 for s in samples]


# -- request latency and throughput ---------------------------------------------------------


def calls(
    section: str,
    label: str,
    sync_client: mcp_sync.Client,
    sdk: sdk_client.Held,
    raw: Any,
    tool: tuple[str, dict[str, Any]],
    plan: Plan,
    calls_per_round: int,
    seq_targets: list[Target],
    thread_targets: dict[int, list[Target]],
    thread_counts: tuple[int, ...] = (8, 32),
    own: bool = False,
) -> list[Row]:
    """The sequential row and one row per thread count; with ``own``, also 8 callers of one
    client against one caller of it, a ratio per round (both measured in that round)."""
    name, args = tool
    seq = Row(section, f"{label}: sequential call", "us", targets=seq_targets)
    own_row = Row(
        section,
        f"{label}: 8 callers vs 1 caller, own",
        "x one caller",
        higher_is_better=True,
        targets=[Target(None, 1.0, ">=")],
        note="mcp_sync's calls/s with 8 threads on one client over one thread's, same round",
    )
    threaded = {
        n: Row(
            section,
            f"{label}: {n} threads, one client",
            "calls/s",
            higher_is_better=True,
            targets=thread_targets.get(n, []),
            note="mcp: asyncio.gather of 8 or 32 tasks on one session",
        )
        for n in thread_counts
    }

    def sync_call() -> Any:
        return sync_client.call_tool(name, args)

    def sdk_call() -> Any:
        return sdk.session.call_tool(name, args)

    raw_call = (lambda: raw.call_tool(name, args)) if raw is not None else None
    # warm up every path (imports, pools, JIT-free caches)
    _timed(sync_call, 20)
    sdk_client.run(_atimed(sdk_call, 20))
    if raw_call is not None and not isinstance(raw, list):
        _timed(raw_call, 20)
    for _ in range(plan.rounds):
        seq.add(SYNC, _us(_timed(sync_call, calls_per_round)))
        seq.add(SDK, _us(sdk_client.run(_atimed(sdk_call, calls_per_round))))
        if raw_call is not None and not isinstance(raw, list):
            seq.add(RAW, _us(_timed(raw_call, calls_per_round)))
        for n, row in threaded.items():
            per = max(plan.thread_calls * 8 // n, 2)
            if own and n == 8:
                one = _threaded(sync_call, 1, n * per)  # as many calls, one thread
                row.add(SYNC, _threaded(sync_call, n, per))
                own_row.add(SYNC, row.samples[SYNC][-1] / one)
            else:
                row.add(SYNC, _threaded(sync_call, n, per))
            row.add(SDK, sdk_client.run(_gathered(sdk_call, n, per)))
            if isinstance(raw, list):  # HTTP: one raw connection per thread
                row.add(RAW, _threaded_per_connection(raw[:n], name, args, per))
            elif raw_call is not None:
                row.add(RAW, _threaded(raw_call, n, per))
    return [seq, *threaded.values(), *([own_row] if own else [])]


def _threaded_per_connection(
    conns: list[RawHttp], name: str, args: dict[str, Any], per_thread: int
) -> float:
    barrier = threading.Barrier(len(conns) + 1)

    def work(conn: RawHttp) -> None:
        barrier.wait()
        for _ in range(per_thread):
            conn.call_tool(name, args)

    pool = [threading.Thread(target=work, args=(c,)) for c in conns]
    for thread in pool:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in pool:
        thread.join()
    return len(conns) * per_thread / (time.perf_counter() - start)


def stdio_trivial(plan: Plan) -> list[Row]:
    client = sync_stdio(TRIVIAL)
    sdk = sdk_client.Held(sdk_client.stdio_context(TRIVIAL))
    raw = RawPipe(TRIVIAL)
    try:
        return calls(
            "stdio, trivial server",
            "stdio",
            client,
            sdk,
            raw,
            ECHO,
            plan,
            plan.calls,
            [Target(SDK, 0.7), Target(RAW, 1.25)],
            {8: [Target(SDK, 2.0, ">=")]},
            own=True,
        )
    finally:
        client.close()
        sdk.close()
        raw.close()


def stdio_real(plan: Plan) -> list[Row]:
    client = sync_stdio(REAL_STDIO)
    sdk = sdk_client.Held(sdk_client.stdio_context(REAL_STDIO))
    try:
        rows = calls(
            "stdio, real server (official SDK fixture)",
            "stdio real",
            client,
            sdk,
            None,
            REAL_CALL,
            plan,
            max(plan.calls // 4, 5),
            [],
            {},
            (8,),
        )
        return rows
    finally:
        client.close()
        sdk.close()


@contextlib.contextmanager
def http_server(argv: list[str], port: int) -> Iterator[str]:
    with http_server_process(argv, port) as (_proc, url):
        yield url


@contextlib.contextmanager
def http_server_process(
    argv: list[str], port: int
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The server started from ``argv`` listening on ``port``, and its URL."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server {argv} did not start") from None
                time.sleep(0.05)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def http_rows(plan: Plan, mode: str, real: bool) -> list[Row]:
    port = free_port()
    if real:
        argv = [PY, str(REAL_SERVER), "streamable-http", str(port)]
        if mode == "json":
            argv.append("--json")
        section, label, tool = "Streamable HTTP, real server", f"HTTP {mode} real", REAL_CALL
    else:
        argv = [PY, "-m", "bench.trivial_http_server", str(port)]
        if mode == "sse":
            argv.append("--sse")
        section, label, tool = "Streamable HTTP, trivial server", f"HTTP {mode}", ECHO
    with http_server(argv, port) as url:
        client = sync_http(url)
        sdk = sdk_client.Held(sdk_client.http_context(url))
        raws = [RawHttp(url) for _ in range(32)] if not real else None
        try:
            seq_targets = [] if real else [Target(SDK, 0.8)]
            rows = calls(
                section,
                label,
                client,
                sdk,
                raws,
                tool,
                plan,
                plan.http_calls if not real else max(plan.http_calls // 4, 5),
                seq_targets,
                {},
                () if real else (8, 32),
                own=not real,
            )
            if raws is not None:  # the sequential floor: one connection
                rows[0].add(RAW, _us(_timed(lambda: raws[0].call_tool(*tool), plan.http_calls)))
            return rows
        finally:
            client.close()
            sdk.close()
            for raw in raws or ():
                raw.close()


# -- import, cold start, close -------------------------------------------------------------

_IMPORT_PROBE = """
import sys, time
before = set(sys.modules)
start = time.perf_counter()
{stmt}
elapsed = time.perf_counter() - start
print(elapsed, len(set(sys.modules) - before))
"""


def imports(plan: Plan) -> list[Row]:
    time_row = Row(
        "import",
        "import time",
        "ms",
        targets=[Target(SDK, 0.3)],
        note="mcp_sync: `import mcp_sync`; mcp: `import mcp.client.session`; fresh interpreter",
    )
    full_row = Row(
        "import",
        "import, with HTTP transport",
        "ms",
        note="mcp_sync: + `mcp_sync.StreamableHttpTransport`; mcp: + `mcp.client.streamable_http`",
    )
    modules = Row("import", "modules loaded", "modules")
    stmts = {
        SYNC: ("import mcp_sync", "import mcp_sync; mcp_sync.StreamableHttpTransport"),
        SDK: ("import mcp.client.session", "import mcp.client.session, mcp.client.streamable_http"),
    }
    # An installed wheel has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE has not: compile it, as the SDK's site-packages already is.
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "mcp_sync")], check=True)
    warm = 1 if plan.imports > 1 else 0
    for n in range(plan.imports + warm):  # a first round warms the file cache; not kept
        for who, (plain, full) in stmts.items():
            for row, stmt in ((time_row, plain), (full_row, full)):
                out = subprocess.run(
                    [PY, "-c", _IMPORT_PROBE.format(stmt=stmt)],
                    capture_output=True,
                    text=True,
                    check=True,
                    cwd=ROOT,
                ).stdout.split()
                if n < warm:
                    continue
                row.add(who, float(out[0]) * 1e3)
                if row is time_row:
                    modules.samples[who] = [float(out[1])]
    return [time_row, full_row, modules]


def cold_start(plan: Plan) -> list[Row]:
    row = Row(
        "cold start and close",
        "cold start: spawn, initialize, list_tools, close",
        "ms",
        targets=[Target(SDK, 0.8)],
    )

    async def sdk_once() -> None:
        async with sdk_client.session(sdk_client.stdio_context(TRIVIAL)) as session:
            await session.list_tools()

    def sync_once() -> None:
        with sync_stdio(TRIVIAL) as client:
            client.list_tools()

    def raw_once() -> None:
        raw = RawPipe(TRIVIAL)
        raw.request("tools/list", {})
        raw.close()

    sync_once()
    sdk_client.run(sdk_once())
    for _ in range(plan.spawns):
        row.add(SYNC, _timed(sync_once, 1)[0] * 1e3)
        start = time.perf_counter()
        sdk_client.run(sdk_once())
        row.add(SDK, (time.perf_counter() - start) * 1e3)
        row.add(RAW, _timed(raw_once, 1)[0] * 1e3)
    return [row]


def close_times(plan: Plan) -> list[Row]:
    rows = []
    for flag, what, reps, targets in (
        (None, "exits on EOF", plan.spawns, []),
        ("--ignore-eof", "ignores EOF", plan.slow_closes, [Target(SDK, 0.3)]),
        ("--ignore-sigterm", "ignores SIGTERM", plan.slow_closes, []),
    ):
        argv = TRIVIAL + ([flag] if flag else [])
        row = Row("cold start and close", f"close: server {what}", "ms", targets=targets)
        for _ in range(reps):
            client = sync_stdio(argv)
            row.add(SYNC, _timed(client.close, 1)[0] * 1e3)
            held = sdk_client.Held(sdk_client.stdio_context(argv))
            row.add(SDK, _timed(held.close, 1)[0] * 1e3)
        rows.append(row)
    return rows


# -- the 16 MiB result ----------------------------------------------------------------------


def big_result(plan: Plan) -> list[Row]:
    rtt = Row("16 MiB tool result", "16 MiB result: round trip", "ms")
    peak = Row(
        "16 MiB tool result",
        "16 MiB result: peak memory growth",
        "x payload",
        targets=[Target(None, 3.0)],
        note="growth of the client process's peak RSS during the call, over the payload size",
    )
    for _ in range(plan.memory_runs):
        for who in (SYNC, SDK, RAW):
            out = subprocess.run(
                [PY, "-m", "bench.memory_probe", who, str(plan.big)],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            ).stdout
            result = json.loads(out.strip().splitlines()[-1])
            rtt.add(who, result["seconds"] * 1e3)
            peak.add(who, result["growth"] / plan.big)
    return [rtt, peak]


# -- eras -----------------------------------------------------------------------------------


def eras(plan: Plan) -> list[Row]:
    """Sequential calls in each protocol era against the real server (which speaks both)."""
    params = inspect.signature(mcp_sync.Client).parameters
    if "protocol" not in params:
        return []
    from mcp_sync.protocol.versions import STATELESS_VERSIONS

    rows = []
    stateless = STATELESS_VERSIONS[0]
    for era, protocol in (("2025-11-25", "handshake"), (stateless, stateless)):
        client = mcp_sync.Client("bench", "1.0", protocol=protocol)
        client.connect(mcp_sync.StdioTransport(REAL_STDIO[0], REAL_STDIO[1:], stderr="devnull"))
        try:
            row = Row("protocol eras (real server, stdio)", f"era {era}: sequential call", "us")
            _timed(lambda c=client: c.call_tool(*REAL_CALL), 10)
            for _ in range(plan.rounds):
                row.add(
                    SYNC, _us(_timed(lambda c=client: c.call_tool(*REAL_CALL), plan.calls // 4))
                )
            rows.append(row)
        finally:
            client.close()
    return rows


SECTIONS: list[tuple[str, Callable[[Plan], list[Row]]]] = [
    ("stdio, trivial server", stdio_trivial),
    ("stdio, real server", stdio_real),
    ("HTTP json, trivial server", lambda p: http_rows(p, "json", real=False)),
    ("HTTP sse, trivial server", lambda p: http_rows(p, "sse", real=False)),
    ("HTTP json, real server", lambda p: http_rows(p, "json", real=True)),
    ("HTTP sse, real server", lambda p: http_rows(p, "sse", real=True)),
    ("import", imports),
    ("cold start", cold_start),
    ("close", close_times),
    ("16 MiB result", big_result),
    ("protocol eras", eras),
]


def run_all(
    plan: Plan,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> list[Row]:
    rows: list[Row] = []
    for title, section in SECTIONS:
        if only and not any(word in title for word in only):
            continue
        if skip and any(word in title for word in skip):
            continue
        start = time.perf_counter()
        rows.extend(section(plan))
        log(f"  {title}: {time.perf_counter() - start:.1f} s")
    return rows
