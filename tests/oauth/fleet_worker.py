"""One worker of a fleet sharing one OAuth state store, run as its own process.

    fleet_worker.py signin STORE MCP_URL   # "ready", wait for "go", sign in (headless), call add
    fleet_worker.py hold STORE MCP_URL     # take the state lock, say "locked", block
    fleet_worker.py chaos STORE MCP_URL SECONDS TIMEOUT
        # "ready", wait for "go", sign in, then 2 threads call add for SECONDS, each call
        # with timeout=TIMEOUT; prints counts by outcome and the slowest call, with and
        # without the time the machine did not run the process (see Stalls)

``STORE`` is a Redis URL (``redis://...``) or the path of a FileStateStore file. Prints one
JSON line: the result text or the error.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import Counter

import mcp_sync
from mcp_sync.oauth import FileStateStore, OAuthProvider, StateStore, headless_redirect
from mcp_sync.oauth.discovery import canonical_resource


def store_for(where: str) -> StateStore:
    if where.startswith(("redis://", "rediss://")):
        from mcp_sync.oauth.redis_store import RedisStateStore

        return RedisStateStore(where)  # (the defaults: lock_ttl 15 s, lock_wait 60 s)
    return FileStateStore(where)


def main() -> None:
    mode, where, mcp_url = sys.argv[1:4]
    if mode == "hold":
        with store_for(where).lock(canonical_resource(mcp_url)):
            print("locked", flush=True)
            sys.stdin.read()  # until killed
        return
    provider = OAuthProvider(
        mcp_url,
        "http://127.0.0.1:1/callback",
        on_redirect=headless_redirect(),
        store=store_for(where),
    )
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    if mode == "chaos":
        logging.basicConfig(format="%(relativeCreated)d %(process)d %(message)s")
        logging.getLogger("mcp_sync.oauth").setLevel(logging.INFO)
        chaos(provider, mcp_url, float(sys.argv[4]), float(sys.argv[5]))
        return
    started = time.monotonic()
    report: dict[str, object] = {}
    try:
        with mcp_sync.connect(mcp_url, auth=provider, timeout=60) as client:
            report["result"] = client.call_tool("add", {"a": 2, "b": 3}, timeout=60).text
    except Exception as exc:  # reported to the test, which shows it
        report["error"] = f"{type(exc).__name__}: {exc}"
    report["seconds"] = time.monotonic() - started
    print(json.dumps(report), flush=True)


class Stalls:
    """When the machine did not run this process: a thread that wakes every ``TICK`` notes
    each wake-up that came late while the process used little CPU (it was not scheduled: the
    machine's load, not a wait of mcp_sync's; a thread of ours spinning would use CPU, and its
    stall is not excused). ``during(began, ended)`` is how much of that fell in a call."""

    TICK = 0.02
    LATE = 0.1  # a later wake-up is noted

    def __init__(self) -> None:
        self._spans: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            wall, cpu = time.monotonic(), time.process_time()
            if self._stop.wait(self.TICK):
                return
            woke, used = time.monotonic(), time.process_time() - cpu
            late = woke - wall - self.TICK
            if late > self.LATE and used < 0.5 * (woke - wall):
                self._spans.append((wall + self.TICK, woke))

    def during(self, began: float, ended: float) -> float:
        return sum(max(0.0, min(e, ended) - max(s, began)) for s, e in list(self._spans))

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(e - s for s, e in self._spans)


def chaos(provider: OAuthProvider, mcp_url: str, seconds: float, timeout: float) -> None:
    outcomes: Counter[str] = Counter()
    examples: dict[str, str] = {}
    slowest = [0.0]
    slowest_running = [0.0]  # the slowest call less the time the process was not run
    stalls = Stalls()
    guard = threading.Lock()
    pace = threading.Event()  # (never set: a pause between calls that is not a busy loop)
    started = time.monotonic()
    with mcp_sync.connect(mcp_url, auth=provider, timeout=60) as client:
        signed_in = time.monotonic() - started
        end = time.monotonic() + seconds

        def calls() -> None:
            while time.monotonic() < end:
                began = time.monotonic()
                try:
                    ok = client.call_tool("add", {"a": 2, "b": 3}, timeout=timeout).text == "5"
                    outcome = "ok" if ok else "wrong"
                except Exception as exc:
                    outcome = type(exc).__name__
                    if outcome not in ("RequestTimeout", "StateStoreError"):  # when, among the log
                        logging.warning("a call failed: %s: %s", outcome, str(exc)[:200])
                    with guard:
                        examples.setdefault(outcome, str(exc)[:300])
                ended = time.monotonic()
                took = ended - began
                running = took - stalls.during(began, ended)
                with guard:
                    outcomes[outcome] += 1
                    slowest[0] = max(slowest[0], took)
                    slowest_running[0] = max(slowest_running[0], running)
                pace.wait(0.1)

        threads = [threading.Thread(target=calls) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    report = {
        "outcomes": dict(outcomes),
        "examples": examples,
        "slowest": slowest[0],
        "slowest_running": slowest_running[0],
        "stalled": stalls.stop(),
        "signed_in": signed_in,
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
