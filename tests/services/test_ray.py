"""docs/scale.md's Ray recipe, run as written: its ``ray_pipeline.py`` (with ``mcp_rows.py``)
on a local Ray cluster, under the Python of tests/peers/ray-venv (Ray pins its own grpcio and
protobuf, so it is not in the suite's venv; `make test` builds that venv). The same server,
Redis sign-in and ledger as test_dask.py; one Ray worker is killed with SIGKILL mid-task."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import FASTMCP_MISSING, ROOT, wait_until

pytest.importorskip("redis", reason="the redis extra is not installed")
pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)  # the OAuth-protected MCP server
pytest.importorskip("psutil", reason="psutil (a dependency of the dask extra) is missing")

import psutil

from tests.helpers.engine_support import ledger_service, write_docs_files

RAY_PYTHON = ROOT / "tests" / "peers" / "ray-venv" / "bin" / "python"
DRIVER = Path(__file__).resolve().parent / "ray_driver.py"
ROWS, CPUS = 2_000, 2

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(
        not RAY_PYTHON.exists(),
        reason=f"Ray's virtualenv is missing ({RAY_PYTHON}): `make peers` builds it",
    ),
]


def running_tasks(driver: subprocess.Popen[str]) -> list[psutil.Process]:
    """The driver's Ray workers that are running a partition right now (Ray names a worker
    process after the task it runs)."""
    found = []
    for process in psutil.Process(driver.pid).children(recursive=True):
        try:
            if process.cmdline()[:1] == ["ray::record_partition"]:
                found.append(process)
        except psutil.Error:
            pass
    return found


def test_a_killed_ray_workers_task_is_run_again_and_the_key_makes_it_once(tmp_path: Path):
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    write_docs_files(recipe, "mcp_rows.py", "ray_pipeline.py")
    with ledger_service(tmp_path) as service:
        env = dict(os.environ, MCP_URL=service.url, REDIS_URL=service.redis_url)
        env["PYTHONPATH"] = str(recipe)  # ray_driver.py imports ray_pipeline from there
        driver = subprocess.Popen(
            [str(RAY_PYTHON), str(DRIVER), str(ROWS), str(CPUS)],
            cwd=recipe,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert driver.stdout is not None
            assert driver.stdout.readline() == "started\n", driver.communicate(timeout=30)[1]
            service.wait_for_calls(ROWS // 4, timeout=150)
            victim = wait_until(lambda: running_tasks(driver), timeout=30)[0]
            victim.send_signal(signal.SIGKILL)
            out, err = driver.communicate(timeout=180)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.communicate()
        assert driver.returncode == 0, err[-3000:]
        report = json.loads(out.strip().splitlines()[-1])
        assert report == {"count": ROWS, "right": True}  # every row answered, in order
        assert "partition" in err  # tqdm's bar (on stderr)

        received = collections.Counter(row for row, _ in service.calls())
        assert set(received) == set(range(ROWS))
        assert any(n > 1 for n in received.values()), "no row called twice: no task retried"
        assert service.effects() == collections.Counter(range(ROWS))  # the key: once per row
