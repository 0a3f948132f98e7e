"""stdio faults seen through a Client and a real server process, with leak checks.

The transport-level faults (garbage, partial line, over-long line, stubborn servers,
grandchildren, killed client) are tested in tests/transports/test_stdio_faults.py and
tests/transports/test_process.py; docs/reliability.md points there.
"""

from __future__ import annotations

import resource
import threading
import time

import pytest
from reliability_support import connect, fault_peer
from stdio_support import server

from mcp_sync.errors import ConnectionClosed

pytestmark = pytest.mark.timeout(60)


def test_a_crash_mid_call_fails_every_pending_call_at_once_with_status_and_stderr(leaks) -> None:
    calls = 8
    client = connect(fault_peer("crash", str(calls)))
    outcomes: list[BaseException | None] = [None] * calls
    finished: list[float] = [0.0] * calls

    def call(i: int) -> None:
        try:
            client.call_tool("hold", {"text": str(i)}, timeout=30)
        except BaseException as exc:
            outcomes[i] = exc
        finished[i] = time.monotonic()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(calls)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert all(isinstance(o, ConnectionClosed) for o in outcomes), outcomes
    assert max(finished) - started < 5  # not the 30 s timeout
    for error in outcomes:
        assert isinstance(error, ConnectionClosed)
        assert error.exit_status == 3
        assert error.stderr_tail is not None
        assert "crashing with 8 calls in flight" in error.stderr_tail
    with pytest.raises(ConnectionClosed):  # later calls fail the same way, at once
        client.call_tool("again", {})
    client.close()


def test_duplicate_and_unknown_id_responses_are_dropped_and_answers_correlate(leaks) -> None:
    client = connect(fault_peer("duplicate"))
    errors: list[BaseException] = []
    client.on_error(errors.append)
    try:
        for i in range(50):
            assert client.call_tool("t", {"text": f"n{i}"}).text == f"n{i}"
        client.ping()
    finally:
        client.close()
    # an error response for an unknown id is no user-visible error either (logged at debug)
    assert not errors


def test_interleaved_slow_answers_from_32_threads_each_get_their_own(leaks) -> None:
    client = connect(fault_peer("slow"))
    wrong: list[tuple[int, str]] = []

    def worker(n: int) -> None:
        for j in range(10):
            text = f"{n}-{j}"
            got = client.call_tool("t", {"text": text, "delay": (n * 7 + j) % 5 / 500}).text
            if got != text:
                wrong.append((n, got))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    client.close()
    assert not wrong


def test_a_100_mib_stderr_flood_keeps_a_bounded_tail_and_the_server_answers(leaks) -> None:
    size = 100 * 1024 * 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    transport = server("stdio_garbage", "stderr-flood", str(size))
    messages: list[object] = []
    got = threading.Event()
    transport.on_message(lambda m: (messages.append(m), got.set()))
    started = time.monotonic()
    transport.start()
    try:
        assert got.wait(30), "the server blocked on its stderr"
        elapsed = time.monotonic() - started
    finally:
        transport.close()
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"\n100 MiB stderr flood drained in {elapsed:.2f} s, peak RSS growth {grown_mib:.1f} MiB")
    assert messages == [{"jsonrpc": "2.0", "method": "ok"}]
    assert transport.stderr_tail.endswith("THE-END\n")
    assert len(transport.stderr_tail) == 64 * 1024
    assert grown_mib < 16
