"""Runs docs/scale.md's ``ray_pipeline.py`` for tests/services/test_ray.py, with the Ray of
tests/peers/ray-venv (this file runs under that venv's Python, not the suite's).

    ray_driver.py ROWS CPUS     # in a directory holding mcp_rows.py and ray_pipeline.py

It prints "started" once Ray is up, then one JSON line: the answers' count, whether they are
``2 * row`` in row order, and the worker processes' ids that ran a partition.
"""

from __future__ import annotations

import json
import sys

import ray
from ray_pipeline import answer_rows


def main() -> None:
    rows, cpus = int(sys.argv[1]), int(sys.argv[2])
    ray.init(
        num_cpus=cpus,
        runtime_env={"working_dir": "."},
        include_dashboard=False,
        log_to_driver=False,
    )
    try:
        print("started", flush=True)
        answers = answer_rows(list(range(rows)), job="ray-test")
        print(json.dumps({"count": len(answers), "right": answers == [2 * r for r in range(rows)]}))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
