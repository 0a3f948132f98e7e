"""Soak and leak runs: many calls from many threads, and many connect/close cycles.

    python -m bench.soak --calls 100000 --threads 32        # full size, by hand
    python -m bench.soak --small                            # what make test runs

See :func:`run` and ``docs/reliability.md`` for the figures.
"""

from .runner import SoakResult, run

__all__ = ["SoakResult", "run"]
