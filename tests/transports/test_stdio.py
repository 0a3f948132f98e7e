"""StdioTransport and PipeTransport against real subprocesses: the happy paths and the API."""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import sys
import threading
import time

import pytest

from mcp_sync.abort import AbortController
from mcp_sync.errors import ConnectionClosed, TransportError
from mcp_sync.transports.stdio import (
    DEFAULT_ENV_KEYS,
    PipeTransport,
    ServerStartError,
    StdioTransport,
)
from tests.helpers.stdio_support import (
    PYTHON,
    SERVERS,
    Recorder,
    pid_alive,
    request,
    server,
)
from tests.helpers.support import child_pids, client_threads, open_fds

pytestmark = pytest.mark.timeout(30)

ECHO = str(SERVERS / "stdio_echo.py")


def test_round_trip_then_close_of_an_eof_exiting_server_is_fast() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    pid = transport.pid
    assert pid is not None and pid_alive(pid)
    assert os.getpgid(pid) == pid  # leader of its own process group

    transport.send(request(1, "tools/call", {"text": "héllo ☃"}))
    assert seen.message() == {"jsonrpc": "2.0", "id": 1, "result": {"echo": {"text": "héllo ☃"}}}

    started = time.perf_counter()
    transport.close()
    elapsed = time.perf_counter() - started
    print(f"\nclose() of a server that exits on EOF: {elapsed * 1000:.1f} ms")
    assert elapsed < 0.5
    assert not pid_alive(pid)
    assert transport.pid is None
    assert transport.exit_status == 0
    assert seen.closes == [None]
    transport.close()  # idempotent
    assert seen.closes == [None]
    assert not client_threads("mcp-sync-")


def test_notifications_batches_and_crlf_arrive_in_order() -> None:
    transport = server("stdio_echo", "--crlf")
    seen = Recorder(transport)
    transport.start()
    try:
        transport.send(request(1, "notify", {"n": 1}))
        transport.send(request(2, "batch"))
        assert seen.message()["method"] == "notifications/message"
        assert seen.message()["id"] == 1
        assert seen.message() == [{"jsonrpc": "2.0", "id": 2, "result": {"echo": {}}}]
        assert seen.errors.empty()
    finally:
        transport.close()


def test_a_message_larger_than_a_pipe_buffer_both_ways() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    try:
        big = "x" * 3_000_000  # many chunks each way; the write must not be cut
        transport.send(request(1, "echo", {"big": big}))
        transport.send(request(2))
        assert seen.message()["result"]["echo"]["big"] == big
        assert seen.message()["id"] == 2
    finally:
        transport.close()


def test_a_small_write_does_not_queue_behind_the_writer_lock() -> None:
    """Threads sharing a transport write small messages without queueing on each other: a
    writer holds the stream only for a message the pipe may take in parts. The lock held here
    stands for a writer that has made its ``os.write`` and waits for the GIL to release it
    (py-spy and a lock-wait count showed 8 callers of one client queueing there: blocked on
    65-80% of their writes, issue 43). Before, this send waited for the lock and failed with
    WriteTimeout ("another write is waiting for the peer to read")."""
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    writer = transport._writer
    assert writer is not None
    try:
        with writer._lock:
            transport.send(request(1), deadline=time.monotonic() + 2)
            assert seen.message()["id"] == 1
    finally:
        transport.close()


def test_many_threads_and_a_message_written_in_parts_never_interleave() -> None:
    """8 threads write small requests (without the writer's lock) while another writes
    messages far larger than the pipe holds (in parts, with the stream to itself): the server
    reads every line whole (a line cut into by another would not parse and it would die) and
    answers each request once."""
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    big = "x" * 300_000
    small_per_thread, bigs = 200, 5

    def small(first: int) -> None:
        for n in range(first, first + small_per_thread):
            transport.send(request(n))

    def large() -> None:
        for n in range(bigs):
            transport.send(request(100_000 + n, "echo", {"big": big}))

    threads = [threading.Thread(target=small, args=(1000 * (i + 1),)) for i in range(8)]
    threads.append(threading.Thread(target=large))
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        answered = [seen.message()["id"] for _ in range(8 * small_per_thread + bigs)]
        expected = {1000 * (i + 1) + n for i in range(8) for n in range(small_per_thread)}
        assert sorted(answered) == sorted(expected | {100_000 + n for n in range(bigs)})
        assert seen.errors.empty() and not seen.closes
    finally:
        transport.close()


def test_close_while_threads_write_ends_each_write_cleanly() -> None:
    """``close()`` while 8 threads write without the lock: each send either went out or
    fails with ConnectionClosed; the close waits for the writes under way, so none reaches
    a closed (or reused) descriptor."""
    fds = open_fds()
    transport = server("stdio_echo")
    transport.start()
    outcomes: list[object] = []
    started = threading.Barrier(9)

    def write() -> None:
        started.wait()
        for n in range(2000):
            try:
                transport.send(request(n))
            except ConnectionClosed:
                outcomes.append("closed")
                return
            except BaseException as exc:  # anything else is the defect
                outcomes.append(exc)
                return
        outcomes.append("done")

    threads = [threading.Thread(target=write) for _ in range(8)]
    for thread in threads:
        thread.start()
    started.wait()
    transport.close()
    for thread in threads:
        thread.join(20)
    assert len(outcomes) == 8
    assert set(outcomes) <= {"closed", "done"}, outcomes
    assert open_fds() <= fds


def test_a_message_json_cannot_hold_is_refused_and_nothing_is_written() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    try:
        with pytest.raises(TypeError, match="/params/when is of type object"):
            transport.send(request(1, "echo", {"when": object()}))
        transport.send(request(2))
        assert seen.message()["id"] == 2  # the refused one left nothing half-written
    finally:
        transport.close()


def test_missing_command_is_a_clear_error_naming_it() -> None:
    fds = open_fds()
    transport = StdioTransport("mcp-sync-no-such-server-xyz", ["--flag"])
    with pytest.raises(ServerStartError) as info:
        transport.start()
    assert isinstance(info.value, TransportError)
    assert "'mcp-sync-no-such-server-xyz'" in str(info.value)
    assert "not found on PATH" in str(info.value)
    assert isinstance(info.value.__cause__, FileNotFoundError)
    assert open_fds() <= fds  # the pipes made for it are closed
    transport.close()  # fine after a failed start


def test_a_file_that_is_not_executable_or_not_a_program(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "server.py"
    script.write_text("print('hi')\n")
    with pytest.raises(ServerStartError, match=r"server\.py'.*permission denied"):
        StdioTransport(script).start()
    script.chmod(0o755)  # executable, but no #! line
    with pytest.raises(ServerStartError, match="not an executable program"):
        StdioTransport(script).start()
    with pytest.raises(ServerStartError, match="no such file"):
        StdioTransport(tmp_path / "missing").start()
    with pytest.raises(ServerStartError, match="working directory"):
        StdioTransport(sys.executable, cwd=tmp_path / "nowhere").start()


def _server_env(transport: StdioTransport, name: str) -> tuple[str | None, list[str]]:
    seen = Recorder(transport)
    transport.start()
    try:
        transport.send(request(1, "env", {"name": name}))
        result = seen.message()["result"]
        return result["value"], result["keys"]
    finally:
        transport.close()


def test_environment_inherited_merged_or_minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_SYNC_TEST_SECRET", "s3cret")
    monkeypatch.setenv("HOME", "/home/test-user")
    value, _ = _server_env(server("stdio_echo"), "MCP_SYNC_TEST_SECRET")
    assert value == "s3cret"

    value, _ = _server_env(
        server("stdio_echo", env={"MCP_SYNC_TEST_SECRET": "over"}), "MCP_SYNC_TEST_SECRET"
    )
    assert value == "over"

    value, _ = _server_env(
        server("stdio_echo", env={"MCP_SYNC_TEST_SECRET": None}), "MCP_SYNC_TEST_SECRET"
    )
    assert value is None

    minimal = server("stdio_echo", inherit_env=False, env={"TOKEN": "t"})
    value, keys = _server_env(minimal, "HOME")
    assert value == "/home/test-user"
    assert "MCP_SYNC_TEST_SECRET" not in keys
    assert set(keys) <= {*DEFAULT_ENV_KEYS, "TOKEN"}
    assert "TOKEN" in keys and "PATH" in keys


def test_from_command_splits_like_a_shell() -> None:
    transport = StdioTransport.from_command(shlex.join([*PYTHON, ECHO]) + " --crlf", cwd="/")
    assert transport.command == sys.executable
    assert transport.args == ("-I", "-S", ECHO, "--crlf")
    assert transport.cwd == "/"
    listed = StdioTransport.from_command(["uvx", "mcp-server-time"])
    assert (listed.command, listed.args) == ("uvx", ("mcp-server-time",))
    with pytest.raises(ValueError):
        StdioTransport.from_command("  ")


def test_stderr_is_kept_and_passed_on() -> None:
    chunks: list[str] = []
    transport = server("stdio_echo", on_stderr=chunks.append)
    seen = Recorder(transport)
    transport.start()
    try:
        transport.send(request(1, "stderr", {"text": "warming up ☃\n"}))
        seen.message()
        transport.send(request(2, "stderr", {"text": "ready\n"}))
        seen.message()
    finally:
        transport.close()  # the stderr thread is joined: everything written has been read
    assert transport.stderr_tail == "warming up ☃\nready\n"
    assert "".join(chunks) == "warming up ☃\nready\n"


@pytest.mark.parametrize("mode", ["devnull", "inherit"])
def test_stderr_not_captured(mode: str) -> None:
    transport = server("stdio_echo", stderr=mode)  # type: ignore[arg-type]
    seen = Recorder(transport)
    transport.start()
    try:
        assert [t.name for t in client_threads("mcp-sync-")] == ["mcp-sync-stdio-reader"]
        transport.send(request(1, "exit", {"code": 4, "text": "bye from the test\n"}))
        cause = seen.wait_closed()
    finally:
        transport.close()
    assert isinstance(cause, ConnectionClosed)
    assert cause.exit_status == 4 and cause.stderr_tail is None
    assert transport.stderr_tail == ""


def test_server_death_reports_exit_status_and_stderr_tail() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    pid = transport.pid
    assert pid is not None
    transport.send(
        request(1, "exit", {"code": 3, "text": "Traceback: boom\nValueError: bad config\n"})
    )
    cause = seen.wait_closed()
    assert isinstance(cause, ConnectionClosed)
    assert cause.exit_status == 3
    assert cause.stderr_tail == "Traceback: boom\nValueError: bad config\n"
    assert "exited (exit status 3)" in str(cause)
    assert "ValueError: bad config" in str(cause)
    assert not pid_alive(pid) and transport.pid is None
    with pytest.raises(ConnectionClosed):
        transport.send(request(2))
    transport.close()
    assert seen.closes == [cause]
    assert not client_threads("mcp-sync-")


def test_close_from_inside_a_listener() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    done = threading.Event()

    def on_message(message: object) -> None:
        transport.close()  # on the reader thread: must not join itself
        done.set()

    transport.on_message(on_message)
    transport.start()
    pid = transport.pid
    assert pid is not None
    transport.send(request(1))
    assert done.wait(10)
    assert seen.wait_closed() is None
    assert not pid_alive(pid)
    for thread in client_threads("mcp-sync-"):
        thread.join(5)
    assert seen.closes == [None]


def test_close_from_another_thread_while_the_server_is_busy_reading() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    closer = threading.Thread(target=transport.close)
    transport.send(request(1))
    seen.message()
    closer.start()
    transport.close()
    closer.join(10)
    assert seen.closes == [None]


def test_close_while_start_is_spawning_stops_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """``close()`` from another thread can land after ``start()`` spawned the server but before
    it counted as started (a ``Client.close()`` racing a ``connect()``): ``start()`` then stops
    the server and raises ``ConnectionClosed`` ("closed"). Before, ``close()`` did nothing to a transport
    not yet started and ``start()`` went on: the server ran on, with no one to stop it (seen
    in the parallel suite, where the lattice's close-during-connect test leaked it). The moment
    is made exact by closing from the process registry's ``add``, which ``start()`` calls right
    after the spawn."""
    from mcp_sync.transports import _process

    transport = server("stdio_echo")
    seen = Recorder(transport)
    before_threads, before_children = set(client_threads()), child_pids()
    register = _process.guard.add
    spawned: list[int] = []

    def add_then_close(pid: int) -> None:
        register(pid)
        spawned.append(pid)
        closer = threading.Thread(target=transport.close)
        closer.start()
        closer.join(10)

    monkeypatch.setattr(_process.guard, "add", add_then_close)
    with pytest.raises(ConnectionClosed, match="is closed"):
        transport.start()
    (pid,) = spawned
    assert not pid_alive(pid)
    assert child_pids() - before_children == set()
    assert set(client_threads()) - before_threads == set()
    assert seen.closes == [None]


def test_an_aborted_signal_writes_nothing() -> None:
    transport = server("stdio_echo")
    seen = Recorder(transport)
    transport.start()
    try:
        controller = AbortController()
        controller.abort("gave up")
        transport.send(request(1), signal=controller.signal)
        transport.send(request(2), signal=AbortController().signal)
        assert seen.message()["id"] == 2  # 1 was never written
    finally:
        transport.close()


def test_send_before_start_and_after_close_raises_connection_closed() -> None:
    transport = server("stdio_echo")
    with pytest.raises(ConnectionClosed):
        transport.send(request(1))
    transport.start()
    transport.close()
    with pytest.raises(ConnectionClosed, match="closed"):
        transport.send(request(1))
    with pytest.raises(RuntimeError):
        transport.start()


def test_200_transports_leave_no_threads_fds_or_processes() -> None:
    def cycle() -> None:
        transport = server("stdio_echo")
        replies: queue.SimpleQueue[object] = queue.SimpleQueue()
        transport.on_message(replies.put)
        transport.start()
        transport.send(request(1))
        replies.get(timeout=10)
        transport.close()

    cycle()  # the first start also starts the watchdog, which lives on (not as our child)
    threads, fds, children = set(threading.enumerate()), open_fds(), child_pids()
    started = time.perf_counter()
    for _ in range(200):
        cycle()
    elapsed = time.perf_counter() - started
    print(f"\n200 start/request/close cycles: {elapsed:.2f} s ({elapsed / 200 * 1000:.1f} ms each)")
    # Nothing new is left. (Compared as "nothing added": garbage of earlier tests in this
    # process may close its own files meanwhile, and a per-cycle leak would show 200 times.)
    assert set(threading.enumerate()) <= threads
    assert open_fds() <= fds
    assert child_pids() <= children


# -- PipeTransport --------------------------------------------------------------------------


def _popen(*args: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
        [*PYTHON, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, **kwargs
    )


def test_pipe_transport_over_a_popen() -> None:
    proc = _popen(ECHO, stderr=subprocess.PIPE)
    transport = PipeTransport(proc)
    assert transport.kind == "pipe"
    seen = Recorder(transport)
    transport.start()
    assert transport.pid == proc.pid
    transport.send(request(1, "stderr", {"text": "from the pipe\n"}))
    assert seen.message()["id"] == 1
    started = time.perf_counter()
    transport.close()
    elapsed = time.perf_counter() - started
    print(f"\nPipeTransport close() of a program that exits on EOF: {elapsed * 1000:.1f} ms")
    assert elapsed < 0.5
    assert proc.returncode == 0 and transport.pid is None
    assert transport.stderr_tail == "from the pipe\n"
    assert proc.stdin is not None and proc.stdin.closed
    assert proc.stdout is not None and proc.stdout.closed
    assert seen.closes == [None]


def test_pipe_transport_terminates_a_program_that_ignores_eof() -> None:
    proc = _popen(str(SERVERS / "stdio_stubborn.py"), "--ignore-eof")
    transport = PipeTransport(proc, close_timeout=1.0)
    seen = Recorder(transport)
    transport.start()
    assert seen.message()["method"] == "pids"
    started = time.perf_counter()
    transport.close()
    elapsed = time.perf_counter() - started
    print(f"\nPipeTransport close() of a program that ignores EOF: {elapsed * 1000:.0f} ms")
    assert 0.4 < elapsed < 1.5
    assert proc.returncode == -15


def test_pipe_transport_reports_the_program_exiting() -> None:
    proc = _popen(ECHO, stderr=subprocess.PIPE)
    transport = PipeTransport(proc)
    seen = Recorder(transport)
    transport.start()
    transport.send(request(1, "exit", {"code": 9, "text": "pipe died\n"}))
    cause = seen.wait_closed()
    assert isinstance(cause, ConnectionClosed)
    assert (cause.exit_status, cause.stderr_tail) == (9, "pipe died\n")
    transport.close()


def test_pipe_transport_over_raw_fds() -> None:
    fds = open_fds()
    to_client_r, to_client_w = os.pipe()
    to_server_r, to_server_w = os.pipe()

    def fake_server() -> None:  # echoes lines back until EOF
        with os.fdopen(to_server_r, "rb") as inbox, os.fdopen(to_client_w, "wb") as outbox:
            for line in inbox:
                outbox.write(line)
                outbox.flush()

    peer = threading.Thread(target=fake_server)
    peer.start()
    transport = PipeTransport((to_client_r, to_server_w))
    seen = Recorder(transport)
    transport.start()
    transport.send(request(5))
    assert seen.message() == request(5)
    assert transport.pid is None
    transport.close()
    peer.join(5)
    assert not peer.is_alive()
    assert open_fds() <= fds  # the transport closed its two ends, the peer its own
    assert seen.closes == [None]


def test_pipe_transport_needs_pipes() -> None:
    proc = subprocess.Popen([*PYTHON, "-c", "pass"], stdin=subprocess.PIPE)
    try:
        with pytest.raises(ValueError, match="stdout=PIPE"):
            PipeTransport(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
