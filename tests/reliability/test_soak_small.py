"""The soak of bench/soak at the make-test size: calls from many threads over stdio and HTTP
with zero lost or mis-correlated answers and no growth in threads or fds, and connect/close
cycles that leave no thread, fd, process or socket. Full size: ``python -m bench.soak``."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)


def test_soak_small() -> None:
    from bench.soak import run

    lines: list[str] = []
    results = run(calls=3000, threads=16, cycles=30, transports=["stdio", "http"], log=lines.append)
    print("\n" + "\n".join(lines))
    assert len(results) == 4
    for result in results:
        assert result.ok, (result.name, result.problems)
        assert result.lost == result.wrong == result.errors == 0
        assert result.rss_end_mib - result.rss_start_mib < 32
