"""Real gunicorn, pre-fork sync workers and gthread workers (2 x 4 threads), serving
tests/servers/wsgi_app.py, which calls a real MCP server (the official SDK fixture over stdio)
through one ``shared_client`` per worker with ``recovery=``. The servers are killed twice under
load; the checks are what an operator relies on: every request made after the deaths succeeds,
a worker never runs more than one server, and nothing is left once gunicorn stops.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.helpers.support import ROOT, SERVERS, free_port, wait_until

pytestmark = pytest.mark.timeout(240)


def processes() -> dict[int, tuple[int, list[str], str]]:
    """Every process on the machine: pid -> (parent pid, argv, state)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = [arg.decode(errors="replace") for arg in f.read().split(b"\0") if arg]
        except OSError:
            continue
        found[int(entry)] = (int(fields[1]), argv, fields[0])
    return found


class Service:
    """gunicorn serving the WSGI app; its MCP servers carry ``marker`` in their argv."""

    def __init__(self, worker_options: list[str], log: Path) -> None:
        self.port = free_port()
        self.marker = f"--test-marker={uuid.uuid4()}"
        server = [sys.executable, str(SERVERS / "sdk_server.py"), "stdio", self.marker]
        env = dict(os.environ, MCP_SERVER=json.dumps(server))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.log = log.open("wb")
        self.master = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--chdir",
                str(SERVERS),
                "-b",
                f"127.0.0.1:{self.port}",
                "--graceful-timeout",
                "20",
                "--timeout",
                "120",
                *worker_options,
                "wsgi_app:app",
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.max_servers_per_worker = 0
        self._sampling = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Service:
        def answers() -> bool:
            assert self.master.poll() is None, "gunicorn exited"
            try:
                return requests.get(self.url(0), timeout=60).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(answers, timeout=60, interval=0.1)
        self._sampler.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._sampling.set()
        self._sampler.join()
        if self.master.poll() is None:
            os.killpg(self.master.pid, signal.SIGKILL)
            self.master.wait()
        self.log.close()

    def url(self, a: int) -> str:
        return f"http://127.0.0.1:{self.port}/add?a={a}"

    def workers(self) -> list[int]:
        return [pid for pid, (ppid, _, _) in processes().items() if ppid == self.master.pid]

    def servers(self, table: dict[int, tuple[int, list[str], str]] | None = None) -> dict[int, int]:
        """Live MCP servers of this service: pid -> the worker that runs it."""
        table = processes() if table is None else table
        return {
            pid: ppid
            for pid, (ppid, argv, state) in table.items()
            if self.marker in argv and state != "Z"
        }

    def _sample(self) -> None:
        while not self._sampling.wait(0.02):
            per_worker = Counter(self.servers().values())
            self.max_servers_per_worker = max(self.max_servers_per_worker, *per_worker.values(), 0)

    def load(self, count: int = 48, concurrency: int = 8) -> list[dict[str, Any]]:
        """``count`` requests from ``concurrency`` threads; every answer, in order."""

        def get(a: int) -> dict[str, Any]:
            response = requests.get(self.url(a), timeout=90)
            body: dict[str, Any] = response.json()
            body["status"] = response.status_code
            body["a"] = a
            return body

        with ThreadPoolExecutor(concurrency) as pool:
            return list(pool.map(get, range(count)))

    def kill_servers(self) -> set[int]:
        servers = set(self.servers())
        assert servers
        for pid in servers:
            os.kill(pid, signal.SIGKILL)
        # Until each worker's client has reaped its server (the pid is gone, not merely a
        # zombie, whose threads may still hold its stdin for a moment): a request written into
        # a dying server's pipe was out when the connection broke, so it fails by design
        # (never sent twice), and the rounds below assert on requests made after the loss.
        wait_until(lambda: not servers & set(processes()), timeout=30)
        return servers

    def stop(self) -> None:
        self.master.send_signal(signal.SIGTERM)
        self.master.wait(60)


@pytest.mark.parametrize(
    "worker_options",
    [
        pytest.param(["-k", "sync", "-w", "2"], id="sync-prefork"),
        pytest.param(["-k", "gthread", "-w", "2", "--threads", "4"], id="gthread-2x4"),
    ],
)
def test_gunicorn_workers_keep_serving_while_their_mcp_servers_die(
    worker_options: list[str], tmp_path: Path
) -> None:
    with Service(worker_options, tmp_path / "gunicorn.log") as service:
        killed: set[int] = set()
        for round_ in range(3):
            answers = service.load()
            failed = [a for a in answers if a["status"] != 200]
            assert not failed, f"round {round_}: {failed[:3]}"
            assert [a["result"] for a in answers] == [a["a"] + 1 for a in answers]
            servers = service.servers()
            assert not killed & set(servers)  # the dead ones were not brought back to life
            assert set(servers.values()) <= set(service.workers())
            assert len(servers) == len(set(servers.values()))  # one per worker
            if round_ < 2:
                killed |= service.kill_servers()
        assert service.max_servers_per_worker == 1
        workers = service.workers()
        assert len(workers) == 2
        service.stop()
        # nothing left: no worker, no MCP server (shared_client closed them at exit)
        wait_until(
            lambda: not service.servers() and not set(workers) & set(processes()), timeout=30
        )
    log = (tmp_path / "gunicorn.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
