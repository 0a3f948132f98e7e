"""Rows of results, their summary figures and the ratios docs/benchmarks.md sets targets for."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

SYNC = "mcp_sync"
SDK = "mcp (official)"
RAW = "raw floor"
CONTENDERS = (SYNC, SDK, RAW)


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation."""
    ordered = sorted(samples)
    if not ordered:
        return math.nan
    pos = (len(ordered) - 1) * q
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class Target:
    """``SYNC`` measured against ``against`` (a contender, or None for an absolute figure)."""

    against: str | None
    limit: float
    #: "<=": the ratio must not exceed ``limit``; ">=": it must reach it.
    op: str = "<="


@dataclass
class Row:
    section: str
    name: str
    unit: str  # "us", "ms", "s", "calls/s", "modules", "x payload"
    higher_is_better: bool = False
    samples: dict[str, list[float]] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    note: str = ""

    def add(self, contender: str, values: list[float] | float) -> None:
        values = values if isinstance(values, list) else [values]
        self.samples.setdefault(contender, []).extend(values)

    def median(self, contender: str) -> float:
        values = self.samples.get(contender)
        return statistics.median(values) if values else math.nan

    def p99(self, contender: str) -> float:
        """The 99th percentile on the bad side (the 1st for higher-is-better figures)."""
        values = self.samples.get(contender)
        if not values:
            return math.nan
        return percentile(values, 0.01 if self.higher_is_better else 0.99)

    def ratio(self, against: str) -> float:
        """mcp_sync's median over ``against``'s (a time ratio; for throughput, sync / other)."""
        mine, theirs = self.median(SYNC), self.median(against)
        if not theirs or math.isnan(theirs):
            return math.nan
        return mine / theirs

    def checks(self) -> list[tuple[Target, float, bool]]:
        out = []
        for target in self.targets:
            value = self.median(SYNC) if target.against is None else self.ratio(target.against)
            ok = value <= target.limit if target.op == "<=" else value >= target.limit
            out.append((target, value, ok and not math.isnan(value)))
        return out
