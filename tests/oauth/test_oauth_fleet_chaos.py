"""The fleet's chaos run: 8 worker processes share one OAuth identity through a real
redis-server (append-only file on) and call a real OAuth-protected server (fastmcp's) with
short-lived tokens, from a cold start, while Redis is frozen (SIGSTOP), then killed and
restarted from its append-only file. The fleet registers once, signs in once, refreshes about
once per token lifetime, and no call outlasts its timeout.

The figures of a run are in docs/oauth.md ("A fleet under chaos").
"""

from __future__ import annotations

import json
import math
import threading
import time

import pytest

from tests.helpers.support import FASTMCP_MISSING, wait_until

pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth test server

from fastmcp.server.auth.providers import in_memory

from tests.helpers.fleet_support import counted, start_worker
from tests.helpers.oauth_fastmcp_server import serve
from tests.helpers.redis_server import redis_process

PROCESSES = 8
LIFETIME = 4  # seconds an access token lives; refreshed 1 s before it expires
SECONDS = 18  # each worker's calls, after it signed in
TIMEOUT = 2.0  # each call's timeout=
FREEZE = 6.0  # longer than a token's remaining life: the fleet crosses an expiry frozen
DOWN = 2.0

pytestmark = pytest.mark.timeout(150)


def keep_refresh_tokens_past_expiry(server) -> None:
    """fastmcp's in-memory provider revokes a refresh token when its access token is shown
    after expiry (its clean-up; its expiry is also cut to whole seconds, so the client may
    believe a token valid for up to a second more). Authorization servers keep a refresh
    token past its access tokens' life (RFC 6749 section 1.5): here it does too."""
    provider = server.provider

    async def load_access_token(token: str):  # type: ignore[no-untyped-def]
        found = provider.access_tokens.get(token)
        if found is not None and found.expires_at is not None and found.expires_at < time.time():
            return None
        return found

    provider.load_access_token = load_access_token


def pause(seconds: float) -> None:
    """Let the fleet run for a while (the chaos is timed, not waited for)."""
    threading.Event().wait(seconds)


def test_a_fleet_survives_a_frozen_a_killed_and_a_restarted_redis(tmp_path, monkeypatch):
    monkeypatch.setattr(in_memory, "DEFAULT_ACCESS_TOKEN_EXPIRY_SECONDS", LIFETIME)
    events: list[tuple[str, float]] = []
    with serve() as server, redis_process(tmp_path, aof=True) as store:
        counts = counted(server, events)
        keep_refresh_tokens_past_expiry(server)
        workers = [
            start_worker("chaos", store.url, server.url, str(SECONDS), str(TIMEOUT))
            for _ in range(PROCESSES)
        ]
        try:
            for worker in workers:
                assert worker.stdout.readline() == "ready\n", worker.stderr.read()
            for worker in workers:  # a cold start: the store is empty
                worker.stdin.write("go\n")
                worker.stdin.flush()

            def after_a_refresh() -> None:
                """Right after a refresh (so that none is under way), plus a little."""
                seen = counts["refresh"]
                wait_until(lambda: counts["refresh"] > seen, timeout=30)
                pause(0.5)

            wait_until(lambda: counts["code"] >= 1, timeout=60)
            signed_in = time.monotonic()
            after_a_refresh()
            store.freeze()  # the fleet's token expires while Redis is frozen
            pause(FREEZE)
            store.thaw()
            thawed = time.monotonic()
            after_a_refresh()
            # (the first refresh after the thaw: no orphaned lock is waited out)
            first_after_thaw = min(t for what, t in events if what == "refresh" and t > thawed)
            store.kill()  # SIGKILL: what is in the append-only file survives
            pause(DOWN)
            store.start()
            after_a_refresh()  # the restarted Redis still has the tokens
            reports, logs = [], []
            for worker in workers:
                out, err = worker.communicate(timeout=90)
                assert worker.returncode == 0, err
                reports.append(json.loads(out))
                logs.append(err)
            ended = time.monotonic()
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait()
    outcomes: dict[str, int] = {}
    for report in reports:
        for outcome, n in report["outcomes"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
    slowest = max(r["slowest"] for r in reports)
    slowest_running = max(r["slowest_running"] for r in reports)
    stalled = max(r["stalled"] for r in reports)
    lifetimes = (ended - signed_in) / (LIFETIME - 1)
    print(
        f"\nfleet chaos: {outcomes}, slowest call {slowest:.2f} s ({slowest_running:.2f} s "
        f"less the time the machine did not run the worker, up to {stalled:.1f} s), "
        f"{counts} over {ended - signed_in:.1f} s ({lifetimes:.1f} token lifetimes), "
        f"first refresh {first_after_thaw - thawed:.1f} s after the thaw"
    )
    # one registration and one sign-in for the fleet, through the cold start and the chaos
    assert (counts["register"], counts["authorize"], counts["code"]) == (1, 1, 1), counts
    # about one refresh per token lifetime (fewer while Redis was frozen or down)
    assert 3 <= counts["refresh"] <= math.ceil(lifetimes) + 1, (counts, lifetimes)
    # the locks that timed-out attempts left in the frozen Redis held nobody up for lock_ttl
    assert first_after_thaw - thawed < 8, f"first refresh {first_after_thaw - thawed:.1f} s after"
    # no call over its timeout (a margin for a loaded machine; a worker the machine did not
    # run for a while is not held against the call: fleet_worker.Stalls). Before the connect
    # to a frozen Redis was bounded by the call's deadline, the slowest took 3.5 s here.
    assert slowest_running < TIMEOUT + 1, f"the slowest call took {slowest:.1f} s"
    # the failures are the store's, named, or the call's timeout: never a 401 reaching a
    # caller, never a wrong answer; and the fleet mostly worked
    examples = {k: v for r in reports for k, v in r["examples"].items()}
    # (what the workers' providers logged, the last lines of each: "ms pid message")
    log = "\n".join(line for err in logs for line in err.splitlines()[-12:])
    assert set(outcomes) <= {"ok", "StateStoreError", "RequestTimeout"}, f"{examples}\n{log}"
    assert outcomes["ok"] > 2 * sum(n for o, n in outcomes.items() if o != "ok"), outcomes
