"""The orphan guarantee: servers and their children never outlive the client process.

Each test runs a separate client process (``tests/servers/stdio_orphan_client.py``) that starts
a stubborn server through StdioTransport and then dies without closing it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mcp_sync.transports import _process
from tests.helpers.stdio_support import SERVERS, pid_alive, request, server, wait_gone
from tests.helpers.support import child_pids, wait_until

pytestmark = pytest.mark.timeout(30)

CLIENT = str(SERVERS / "stdio_orphan_client.py")


def _client(mode: str, *flags: str) -> tuple[subprocess.Popen[str], dict[str, int]]:
    proc = subprocess.Popen(
        [sys.executable, CLIENT, mode, *flags], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the client process printed nothing"
    return proc, json.loads(line)


def test_sigkill_of_the_client_leaves_no_server_nor_grandchild() -> None:
    proc, pids = _client("wait", "--ignore-eof", "--grandchild")
    server_pid, grandchild = pids["server"], pids["grandchild"]
    assert pid_alive(server_pid) and pid_alive(grandchild)
    started = time.monotonic()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = wait_gone([server_pid, grandchild], timeout=10)
    print(
        f"\nserver and grandchild gone {(time.monotonic() - started) * 1000:.0f} ms after SIGKILL"
    )
    assert left == []


def test_sigkill_of_the_client_with_a_server_that_ignores_sigterm() -> None:
    proc, pids = _client("wait", "--ignore-eof", "--ignore-term", "--grandchild")
    started = time.monotonic()
    proc.kill()
    proc.wait()
    left = wait_gone([pids["server"], pids["grandchild"]], timeout=10)
    elapsed = time.monotonic() - started
    print(f"\nSIGTERM-proof server gone {elapsed * 1000:.0f} ms after SIGKILL (watchdog grace)")
    assert left == []
    assert elapsed >= _process.WATCHDOG_GRACE - 0.1  # it took the SIGKILL step


@pytest.mark.parametrize("mode", ["exit", "os-exit"])
def test_a_client_exiting_without_close_leaves_nothing(mode: str) -> None:
    proc, pids = _client(mode, "--ignore-eof", "--grandchild")
    assert proc.wait(10) == 0
    started = time.monotonic()
    left = wait_gone([pids["server"], pids["grandchild"]], timeout=10)
    print(
        f"\n{mode}: server and grandchild gone after {(time.monotonic() - started) * 1000:.0f} ms"
    )
    assert left == []


def test_the_watchdog_is_not_our_child_and_servers_are_group_leaders() -> None:
    before = child_pids()
    transport = server("stdio_echo")
    transport.start()
    try:
        assert transport.pid is not None
        assert child_pids() - before == {transport.pid}
        assert _process.guard.watchdog_running()
        assert transport.pid in _process.guard.groups()
        assert os.getpgid(transport.pid) == transport.pid
        assert os.getsid(transport.pid) == transport.pid  # no controlling terminal: no Ctrl-C
    finally:
        transport.close()
    assert child_pids() <= before  # (children of earlier tests may be reaped meanwhile)
    assert _process.guard.groups() == frozenset()


def test_a_killed_watchdog_is_replaced() -> None:
    transport = server("stdio_echo")
    transport.start()  # make sure one runs
    transport.close()
    watchdogs = _watchdog_pids()
    assert len(watchdogs) == 1
    os.kill(watchdogs[0], signal.SIGKILL)
    assert wait_gone(watchdogs, timeout=5) == []
    transport = server("stdio_echo")
    transport.start()  # the registration finds the pipe broken and starts another
    try:
        transport.send(request(1))
        # (it starts in a shell's background: it is running, under its own command line, a
        # moment after the start returns)
        wait_until(lambda: len(_watchdog_pids()) == 1, timeout=10)
        replacement = _watchdog_pids()
        assert len(replacement) == 1 and replacement != watchdogs
    finally:
        transport.close()


def _watchdog_pids() -> list[int]:
    """Processes running our watchdog whose stdin is a pipe from this process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        is_watchdog = len(argv) > 4 and argv[3] == b"-c" and b"groups = send(" in argv[4]
        if is_watchdog and pid_alive(int(entry)) and _stdin_from_us(int(entry)):
            found.append(int(entry))
    return found


def _stdin_from_us(pid: int) -> bool:
    try:
        theirs = os.readlink(f"/proc/{pid}/fd/0")
    except OSError:
        return False
    ours = {
        os.readlink(f"/proc/self/fd/{fd}")
        for fd in os.listdir("/proc/self/fd")
        if os.path.exists(f"/proc/self/fd/{fd}")
    }
    return theirs in ours
