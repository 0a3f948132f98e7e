"""stdio faults seen through a Client and a real server process, with leak checks.

The transport-level faults (garbage, partial line, over-long line, stubborn servers,
grandchildren, killed client) are tested in tests/reliability/test_faults_stdio_transport.py and
tests/transports/test_process.py; docs/reliability.md points there.
"""

from __future__ import annotations

import resource
import threading
import time

import pytest

from mcp_sync.errors import ConnectionClosed, ProtocolError, RequestTimeout, WriteTimeout
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.reliability_support import connect, fault_peer
from tests.helpers.stdio_support import server
from tests.helpers.support import wait_until

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


def test_a_write_the_server_never_reads_ends_within_the_call_timeout_and_fails_the_stream(
    leaks,
) -> None:
    client = connect(fault_peer("deaf"))
    causes: list[BaseException | None] = []
    client.on_close(causes.append)
    outcomes: dict[str, BaseException] = {}

    def call(name: str, run) -> None:
        try:
            run()
        except BaseException as exc:
            outcomes[name] = exc

    big = threading.Thread(  # 128 KiB: twice what the pipe holds
        target=call, args=("big", lambda: client.call_tool("t", {"text": "x" * 131072}, timeout=2))
    )
    ping = threading.Thread(target=call, args=("ping", lambda: client.ping(timeout=2)))
    big.start()
    ping.start()
    big.join(15)
    ping.join(15)
    stuck = big.is_alive() or ping.is_alive()
    client.close()  # releases a stuck writer, so that a failure here does not hang the run
    assert not stuck, "a blocked write outlived its call's timeout"
    assert isinstance(outcomes["big"], RequestTimeout)
    assert "unrecoverable" in str(outcomes["big"])
    # the ping waited behind the stuck write, or for a server that never answers: either way
    # it ended within its own timeout
    assert isinstance(outcomes["ping"], (RequestTimeout, ConnectionClosed))
    assert client.state == "closed"
    assert causes and "unrecoverable" in str(causes[0])


def test_a_ping_flood_from_a_server_that_does_not_read_cannot_deadlock_the_reader(leaks) -> None:
    client = connect(fault_peer("ping-flood", "20000"))
    errors: list[BaseException] = []
    client.on_error(errors.append)
    try:
        # The server writes 20,000 pings before answering and reads nothing meanwhile: a reader
        # that answered each ping itself would block on the full pipe and never see the answer.
        assert (
            client.call_tool("t", {"text": "after the flood"}, timeout=30).text == "after the flood"
        )
        assert client.call_tool("t", {"text": "still fine"}, timeout=30).text == "still fine"
    finally:
        client.close()


def test_a_server_exiting_at_start_up_always_reports_exit_status_and_stderr(leaks) -> None:
    script = "echo 'OPENAI_API_KEY is not set' >&2; exit 2"
    for _ in range(20):  # the race between the exit and the first write went either way
        with pytest.raises(ConnectionClosed) as failed:
            connect(StdioTransport("/bin/sh", ["-c", script]))
        error = failed.value
        assert error.exit_status == 2, error
        assert error.stderr_tail is not None and "OPENAI_API_KEY is not set" in error.stderr_tail


@pytest.mark.parametrize(
    ("mode", "what"), [("string-id", "type"), ("bad-utf8", "UTF-8")], ids=["string-id", "bad-utf8"]
)
def test_an_answer_with_a_type_confused_id_or_invalid_utf8_fails_its_call_at_once(
    leaks, mode: str, what: str
) -> None:
    client = connect(fault_peer(mode))
    errors: list[BaseException] = []
    client.on_error(errors.append)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.call_tool("t", {"text": "BAD"}, timeout=60)
        except BaseException as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    caller.join(20)  # not the call's 60 s timeout
    try:
        assert not caller.is_alive(), "the call waited for its timeout"
        assert outcome and isinstance(outcome[0], ProtocolError), outcome
        assert what in str(outcome[0])
        wait_until(lambda: errors, timeout=10)
        assert errors and what in str(errors[0])  # reported through on_error too
        client.ping()  # the connection goes on
    finally:
        client.close()


def test_a_notification_the_server_never_reads_ends_within_the_request_timeout(leaks) -> None:
    client = connect(fault_peer("deaf"), request_timeout=2)
    failed: list[BaseException] = []

    def notify() -> None:
        try:  # 256 KiB: four times what the pipe holds
            client.notify("notifications/message", {"data": "x" * 262144})
        except BaseException as exc:
            failed.append(exc)

    sender = threading.Thread(target=notify)
    sender.start()
    sender.join(15)
    stuck = sender.is_alive()
    client.close()
    assert not stuck, "a notification write outlived the request timeout"
    assert failed and isinstance(failed[0], WriteTimeout) and failed[0].partial
    assert "unrecoverable" in str(failed[0])
