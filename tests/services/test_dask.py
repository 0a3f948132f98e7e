"""docs/scale.md's Dask recipe, run as written: its ``mcp_rows.py`` and ``pipeline.py`` on a
real ``distributed.LocalCluster`` of worker processes, against an OAuth-protected MCP server
(fastmcp's, tests/servers/ledger_oauth_server.py, in its own process) whose workers share one
sign-in through a real ``redis-server``. One worker is killed with SIGKILL mid-run: Dask runs
its tasks again, so the server receives some rows twice, and the idempotency key keeps each
row's effect to one."""

from __future__ import annotations

import collections
import importlib
import itertools
import os
import signal
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.helpers.support import FASTMCP_MISSING

pytest.importorskip(
    "distributed", reason="the dask extra is not installed: pip install -e '.[dask]' (make does)"
)
pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth-protected MCP server

import cloudpickle
import dask.bag
from distributed import Client, LocalCluster

import mcp_sync
from mcp_sync.oauth import OAuthProvider
from mcp_sync.oauth.redis_store import RedisStateStore
from tests.helpers.engine_support import Service, docs_file, ledger_service, write_docs_files

#: The docs' example, as the issue asks it: 10,000 rows on 4 worker processes (90 s to 141 s on a
#: loaded 2-core machine, the server being the limit). It runs once, in make test: noxfile.py
#: leaves it out of the other Pythons' runs (it tests Dask, not the interpreter).
ROWS = 10_000
WORKERS = 4

pytestmark = pytest.mark.timeout(480)


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[Service]:
    with ledger_service(tmp_path_factory.mktemp("dask-service")) as running:
        yield running


@pytest.fixture(scope="module")
def recipe(tmp_path_factory, service) -> Iterator[object]:
    """docs/scale.md's files, importable here and on the workers (spawned workers inherit
    sys.path); yields its ``pipeline`` module, configured for ``service``."""
    where = tmp_path_factory.mktemp("dask-recipe")
    write_docs_files(where, "mcp_rows.py", "pipeline.py")
    os.environ["MCP_URL"], os.environ["REDIS_URL"] = service.url, service.redis_url
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("pipeline")
    finally:
        sys.path.remove(str(where))
        for name in ("pipeline", "mcp_rows"):
            sys.modules.pop(name, None)
        del os.environ["MCP_URL"], os.environ["REDIS_URL"]


@pytest.fixture(scope="module")
def cluster(recipe) -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=WORKERS, threads_per_worker=2, dashboard_address=None, silence_logs=50
        ) as local,
        Client(local) as client,
    ):
        yield client


def test_a_killed_workers_rows_are_called_again_and_the_key_makes_them_once(
    service, recipe, cluster, capsys
):
    victim = next(iter(cluster.run(os.getpid).values()))
    killed = threading.Event()

    def kill_a_quarter_of_the_way() -> None:
        service.wait_for_calls(ROWS // 4, timeout=120)
        os.kill(victim, signal.SIGKILL)
        killed.set()

    killer = threading.Thread(target=kill_a_quarter_of_the_way, daemon=True)
    killer.start()
    answers = recipe.answer_rows(range(ROWS), job="test-kill")
    killer.join(10)

    assert killed.is_set(), "the run ended before a worker could be killed"
    assert answers == [2 * row for row in range(ROWS)]  # every row answered, in order
    assert "100% Completed" in capsys.readouterr().out  # the progress bar saw it through
    assert victim not in cluster.run(os.getpid).values()  # the nanny started a new worker

    calls = service.calls()
    received = collections.Counter(row for row, _ in calls)
    assert set(received) == set(range(ROWS))
    twice = [row for row, count in received.items() if count > 1]
    assert twice, "no row was called twice: the kill did not make Dask retry a running task"
    assert service.effects() == collections.Counter(range(ROWS))  # the key: once per row
    # one client per worker process, not one per task: the 100 partitions' calls came on the
    # few keep-alive connections of 3 clients (2 workers and the one that replaced the victim)
    connections = {port for _, port in calls}
    assert len(connections) <= (WORKERS + 1) * 4, sorted(connections)


def test_a_shared_client_defined_in_a_notebook_is_one_per_worker_process(service, cluster):
    """docs/scale.md's notebook cell: functions defined in ``__main__`` travel to the workers
    by value (cloudpickle), with the ``shared_client`` they use. Before: pickling it failed
    with "cannot pickle '_thread.lock' object"."""
    cell = docs_file("notebook_cell.py")
    namespace = {
        "__name__": "__main__",  # as in a notebook: what the cell defines is sent by value
        "mcp_sync": mcp_sync,
        "OAuthProvider": OAuthProvider,
        "RedisStateStore": RedisStateStore,
        "db": dask.bag,
        "URL": service.url,
        "REDIS_URL": service.redis_url,
    }
    before = len(service.calls())
    exec(compile(cell, "notebook_cell.py", "exec"), namespace)
    assert namespace["answers"] == [2 * row for row in range(1_000)]
    # the 10 partitions ran on at most 2 clients (one per worker), each with at most one
    # keep-alive connection per worker thread
    connections = {port for _, port in itertools.islice(service.calls(), before, None)}
    assert len(connections) <= WORKERS * 2, sorted(connections)


def test_a_pickled_shared_client_is_the_same_one_in_its_own_process():
    """What a Dask task does with a ``shared_client`` from ``__main__`` or a module, back in
    the process that made it (``LocalCluster(processes=False)``, the threaded scheduler)."""
    namespace: dict[str, object] = {"__name__": "__main__", "mcp_sync": mcp_sync}
    exec("@mcp_sync.shared_client\ndef tools():\n    raise AssertionError", namespace)
    in_main = namespace["tools"]
    assert cloudpickle.loads(cloudpickle.dumps(in_main)) is in_main
    assert cloudpickle.loads(cloudpickle.dumps(shared_by_name)) is shared_by_name  # by name


@mcp_sync.shared_client
def shared_by_name() -> mcp_sync.Client:
    raise AssertionError("never called")
