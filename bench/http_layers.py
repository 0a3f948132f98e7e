"""``python -m bench.http_layers``: where a sequential Streamable HTTP call's time goes, layer
by layer, and how calls scale with threads.

The same ``tools/call`` against ``bench/trivial_http_server.py`` (answering ``application/json``,
or with ``--sse`` a one-event ``text/event-stream``), made eight ways, timed round-robin in one
process, each against the floor of the same round:

- ``http.client``: a raw POST on a kept-alive connection (``bench.raw_floor.RawHttp``): the floor;
- ``urllib3``: ``PoolManager.request``;
- ``requests``: ``requests.Session.post`` (``trust_env`` off, as mcp_sync's own session);
- ``transport``: ``StreamableHttpTransport.send`` of the request (30 s deadline, as
  ``client.request`` sends it), then the wait for the message
  it delivers (no session, no client);
- ``client.request``: mcp_sync up to the untyped result;
- ``client.call_tool``: the whole typed call, as users make it;
- ``mcp (official)``: the official SDK's ``ClientSession.call_tool`` on its own event loop.

``--threads`` then measures calls per second with 8 and 32 threads: the floor (one
``http.client`` connection per thread), one ``requests.Session`` shared by every thread, and
one mcp_sync client shared by every thread (with its own single-thread rate beside it).

``--instructions`` counts instructions per call under valgrind (cachegrind) for each way but
the SDK's (as ``bench.instructions`` does: N1 and N2 calls, the difference over N2 - N1); the
count includes the transport's worker threads, not the server.

python -m bench.http_layers                       # JSON, 10 rounds of 200 calls per way
python -m bench.http_layers --sse --rounds 5      # the SSE answer
python -m bench.http_layers --threads             # 8 / 32 threads
python -m bench.http_layers --instructions        # instructions per call
python -m bench.http_layers --profile client.call_tool   # cProfile of one way, top functions
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import itertools
import json
import os
import pstats
import random
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import mcp_sync
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports import MessageOptions

from . import sdk_client
from .instructions import count_instructions
from .layers import timed
from .raw_floor import RawHttp
from .suite import (
    ECHO,
    PY,
    _atimed,
    _threaded,
    _threaded_per_connection,
    free_port,
    http_server,
    sync_http,
)

FLOOR = "http.client"
SDK_WAY = "mcp (official)"
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
#: What the session sends every message after ``initialize`` with: the negotiated version.
_AT = MessageOptions(version="2025-11-25")
_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "b", "version": "1"},
}


@contextlib.contextmanager
def trivial_server(sse: bool) -> Iterator[str]:
    port = free_port()
    argv = [PY, "-m", "bench.trivial_http_server", str(port)] + (["--sse"] if sse else [])
    with http_server(argv, port) as url:
        yield url


class _PlainPost:
    """A POST of a JSON-RPC request through some HTTP library: the SSE body is read to its end
    and its one event taken, as the raw floor does."""

    def __init__(
        self, url: str, post: Callable[[bytes, dict[str, str]], tuple[Any, bytes]]
    ) -> None:
        self._post = post
        self._ids = itertools.count(1)
        self.session_id: str | None = None
        self.request("initialize", _INIT)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        body = _dumps(
            {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        ).encode()
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        response_headers, data = self._post(body, headers)
        self.session_id = response_headers.get("Mcp-Session-Id") or self.session_id
        if response_headers.get("Content-Type", "").startswith("text/event-stream"):
            for line in data.splitlines():
                if line.startswith(b"data:"):
                    data = line[5:]
                    break
        return json.loads(data)["result"]


def urllib3_way(url: str) -> tuple[Callable[[], Any], Callable[[], None]]:
    import urllib3

    pool = urllib3.PoolManager(maxsize=32)

    def post(body: bytes, headers: dict[str, str]) -> tuple[Any, bytes]:
        response = pool.request("POST", url, body=body, headers=headers)
        return response.headers, response.data

    client = _PlainPost(url, post)
    name, arguments = ECHO
    return lambda: client.request("tools/call", {"name": name, "arguments": arguments}), pool.clear


def requests_way(url: str) -> tuple[Callable[[], Any], Callable[[], None]]:
    import requests

    session = requests.Session()
    session.trust_env = False

    def post(body: bytes, headers: dict[str, str]) -> tuple[Any, bytes]:
        response = session.post(url, data=body, headers=headers)
        return response.headers, response.content

    client = _PlainPost(url, post)
    name, arguments = ECHO
    return lambda: client.request(
        "tools/call", {"name": name, "arguments": arguments}
    ), session.close


def transport_way(url: str) -> tuple[Callable[[], Any], Callable[[], None]]:
    """``send`` on a bare transport, then the wait for the message it delivers."""
    transport = mcp_sync.StreamableHttpTransport(url, open_get_stream=False)
    waiting: dict[Any, Future[Any]] = {}
    transport.on_message(lambda message: waiting.pop(message["id"]).set_result(message))
    transport.start()
    ids = itertools.count(1)

    def request(method: str, params: dict[str, Any], options: MessageOptions | None = _AT) -> Any:
        request_id = next(ids)
        future: Future[Any] = Future()
        waiting[request_id] = future
        message = jsonrpc.request(request_id, method, params)
        transport.send(message, deadline=time.monotonic() + 30, options=options)
        return future.result(10)

    request("initialize", _INIT, None)
    transport.send(jsonrpc.notification("notifications/initialized"), options=_AT)
    name, arguments = ECHO
    return lambda: request("tools/call", {"name": name, "arguments": arguments}), transport.close


def ways(url: str) -> tuple[dict[str, Callable[[], Any]], list[Callable[[], None]]]:
    name, arguments = ECHO
    params = {"name": name, "arguments": arguments}
    raw = RawHttp(url)
    closers: list[Callable[[], None]] = [raw.close]
    found: dict[str, Callable[[], Any]] = {FLOOR: lambda: raw.call_tool(name, arguments)}
    for label, make in (
        ("urllib3", urllib3_way),
        ("requests", requests_way),
        ("transport", transport_way),
    ):
        call, close = make(url)
        found[label] = call
        closers.append(close)
    client = sync_http(url)
    closers.append(client.close)
    found["client.request"] = lambda: client.request("tools/call", params)
    found["client.call_tool"] = lambda: client.call_tool(name, arguments)
    return found, closers


def _sdk_timed(session: Any, n: int) -> tuple[float, float]:
    name, arguments = ECHO
    cpu_before = os.times()
    samples = sdk_client.run(_atimed(lambda: session.call_tool(name, arguments), n))
    cpu_after = os.times()
    cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    return statistics.median(samples), cpu / n


def sequential(url: str, rounds: int, calls: int, sdk: bool) -> None:
    found, closers = ways(url)
    held = sdk_client.Held(sdk_client.http_context(url)) if sdk else None
    timers: dict[str, Callable[[int], tuple[float, float]]] = {
        way: (lambda n, c=call: timed(c, n)) for way, call in found.items()
    }
    if held is not None:
        timers[SDK_WAY] = lambda n: _sdk_timed(held.session, n)
    latency: dict[str, list[float]] = {way: [] for way in timers}
    cpu: dict[str, list[float]] = {way: [] for way in timers}
    try:
        for timer in timers.values():  # warm up: imports, validators, pools
            timer(30)
        for _ in range(rounds):
            order = list(timers)
            random.shuffle(order)  # no way always runs right after another
            for way in order:
                median, per_call = timers[way](calls)
                latency[way].append(median)
                cpu[way].append(per_call)
    finally:
        if held is not None:
            held.close()
        for close in closers:
            close()
    floor = statistics.median(latency[FLOOR])
    print(f"{'way':18s} {'latency':>9s} {'vs floor':>9s} {'per-round q1..q3':>17s} {'CPU':>9s}")
    for way in timers:
        ratios = [a / b for a, b in zip(latency[way], latency[FLOOR], strict=True)]
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (0, 0, 0)
        print(
            f"{way:18s} {statistics.median(latency[way]) * 1e6:7.1f}us"
            f" {statistics.median(latency[way]) / floor:8.2f}x"
            f" {q1:8.2f}..{q3:<7.2f}"
            f" {statistics.mean(cpu[way]) * 1e6:7.1f}us"
        )
    if held is not None:
        for way in ("client.request", "client.call_tool"):
            ratios = [a / b for a, b in zip(latency[way], latency[SDK_WAY], strict=True)]
            print(f"{way} / {SDK_WAY}: {statistics.median(ratios):.2f}x (per-round median)")


def _per_connection(url: str, threads: int, per_thread: int) -> float:
    name, arguments = ECHO
    conns = [RawHttp(url) for _ in range(threads)]
    try:
        return _threaded_per_connection(conns, name, arguments, per_thread)
    finally:
        for conn in conns:
            conn.close()


def threads(url: str, rounds: int, per_thread: int) -> None:
    name, arguments = ECHO
    client = sync_http(url)
    shared, close_shared = requests_way(url)
    call = lambda: client.call_tool(name, arguments)  # noqa: E731
    rows: dict[str, list[float]] = {}
    try:
        call()
        for _ in range(rounds):
            for n in (8, 32):
                per = max(per_thread * 8 // n, 2)
                rows.setdefault(f"floor, {n} threads", []).append(_per_connection(url, n, per))
                rows.setdefault(f"requests shared, {n} threads", []).append(
                    _threaded(shared, n, per)
                )
                rows.setdefault(f"mcp_sync, {n} threads", []).append(_threaded(call, n, per))
            rows.setdefault("mcp_sync, 1 thread", []).append(_threaded(call, 1, per_thread * 4))
    finally:
        client.close()
        close_shared()
    for label, samples in rows.items():
        n = label.split(", ")[1].split()[0]
        floor = rows.get(f"floor, {n} threads")
        ratio = ""
        if floor is not None:
            ratios = [a / b for a, b in zip(samples, floor, strict=True)]
            ratio = f"{statistics.median(ratios):6.2f}x floor"
        print(f"{label:28s} {statistics.median(samples):9,.0f} calls/s {ratio}")


# -- instruction counts --------------------------------------------------------------------------


def _count(way: str, calls: int, url: str) -> int:
    return count_instructions(["bench.http_layers", "--run", way, str(calls), url])


def instructions(url: str, low: int, high: int, only: list[str] | None) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    found, closers = ways(url)
    for close in closers:
        close()
    print(f"{'way':18s} {'instructions per call':>22s}")
    for way in found:
        if only and way not in only:
            continue
        per_call = (_count(way, high, url) - _count(way, low, url)) / (high - low)
        print(f"{way:18s} {per_call:20,.0f}", flush=True)


def run_way(way: str, calls: int, url: str) -> None:
    found, closers = ways(url)
    call = found[way]
    for _ in range(calls):
        call()
    for close in closers:
        close()


def profile(url: str, way: str, calls: int) -> None:
    found, closers = ways(url)
    call = found[way]
    for _ in range(50):
        call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
    for close in closers:
        close()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(35)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_layers", description=__doc__)
    parser.add_argument("--sse", action="store_true", help="the server answers text/event-stream")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200, help="calls per way per round")
    parser.add_argument("--no-sdk", action="store_true", help="leave the official SDK out")
    parser.add_argument("--threads", action="store_true", help="8 / 32 threads instead")
    parser.add_argument("--instructions", nargs="*", metavar="WAY", help="count, under valgrind")
    parser.add_argument("--profile", metavar="WAY", help="cProfile one way (caller thread only)")
    parser.add_argument("--run", nargs=3, metavar=("WAY", "N", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        run_way(args.run[0], int(args.run[1]), args.run[2])
        return 0
    with trivial_server(args.sse) as url:
        if args.instructions is not None:
            instructions(url, 20, 220, args.instructions)
        elif args.profile:
            profile(url, args.profile, args.calls * args.rounds)
        elif args.threads:
            threads(url, args.rounds, 40)
        else:
            sequential(url, args.rounds, args.calls, not args.no_sdk)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
