"""The table ``python -m bench`` prints, its JSON, the Markdown for docs/benchmarks.md, the plot."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .stats import CONTENDERS, SYNC, Row


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _against(target_against: str | None) -> str:
    return "absolute" if target_against is None else f"vs {target_against}"


def ratio_cells(row: Row) -> list[str]:
    """``vs mcp 0.45x`` / ``vs raw 1.10x`` (a time ratio, or sync/other for throughput)."""
    cells = []
    for other in CONTENDERS[1:]:
        if other in row.samples and SYNC in row.samples:
            cells.append(f"{row.ratio(other):.2f}x")
        else:
            cells.append("-")
    return cells


def target_cells(row: Row) -> str:
    out = []
    for target, value, ok in row.checks():
        mark = "OK" if ok else "MISSED"
        out.append(
            f"{target.op} {target.limit:g}x {_against(target.against)}: {mark} ({value:.2f}x)"
        )
    return "; ".join(out)


def table_lines(rows: list[Row]) -> list[str]:
    header = ["row", "unit"]
    for who in CONTENDERS:
        header += [f"{who} median", "p99"]
    header += ["sync/mcp", "sync/raw", "target"]
    body = []
    for row in rows:
        cells = [row.name, row.unit]
        for who in CONTENDERS:
            cells += [
                _fmt(row.median(who)),
                _fmt(row.p99(who)) if len(row.samples.get(who, [])) > 1 else "-",
            ]
        cells += [*ratio_cells(row), target_cells(row)]
        body.append(cells)
    return _grid([header, *body])


def _grid(lines: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for n, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def markdown(rows: list[Row]) -> str:
    """The results as Markdown tables: absolute figures, then ratios against targets."""
    lines = [
        "| row | unit | mcp_sync median (p99) | mcp median (p99) | raw floor median (p99) "
        "| sync/mcp | sync/raw | target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [row.name, row.unit]
        for who in CONTENDERS:
            if who in row.samples:
                p99 = _fmt(row.p99(who)) if len(row.samples[who]) > 1 else "-"
                cells.append(f"{_fmt(row.median(who))} ({p99})")
            else:
                cells.append("-")
        cells += [*ratio_cells(row), target_cells(row) or "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_json(rows: list[Row], meta: dict[str, Any]) -> str:
    return json.dumps(
        {
            "meta": meta,
            "rows": [
                {
                    "section": r.section,
                    "name": r.name,
                    "unit": r.unit,
                    "higher_is_better": r.higher_is_better,
                    "samples": r.samples,
                    "targets": [t.__dict__ for t in r.targets],
                    "note": r.note,
                }
                for r in rows
            ],
        },
        indent=1,
    )


def from_json(text: str) -> list[Row]:
    from .stats import Target

    data = json.loads(text)
    return [
        Row(
            r["section"],
            r["name"],
            r["unit"],
            r["higher_is_better"],
            r["samples"],
            [Target(**t) for t in r["targets"]],
            r["note"],
        )
        for r in data["rows"]
    ]


def plot(rows: list[Row], path: Path) -> None:
    """One horizontal bar per target: mcp_sync's ratio, the target line, green when met.

    Time ratios are drawn as "times faster" (other / mcp_sync) so that longer is always better.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, values, limits, colors = [], [], [], []
    for row in rows:
        for target, value, ok in row.checks():
            if math.isnan(value):
                continue
            if target.against is None and target.op == ">=":  # mcp_sync against itself
                labels.append(f"{row.name}\n(mcp_sync, 8 callers / 1 caller)")
                values.append(value)
                limits.append(target.limit)
            elif target.against is None:  # absolute (memory over payload): lower is better
                labels.append(f"{row.name}\n(headroom: limit / value)")
                values.append(target.limit / value)
                limits.append(1.0)
            elif row.higher_is_better:
                labels.append(f"{row.name}\n(throughput, mcp_sync / {target.against})")
                values.append(value)
                limits.append(target.limit)
            else:
                labels.append(f"{row.name}\n({target.against} time / mcp_sync time)")
                values.append(1 / value)
                limits.append(1 / target.limit)
            colors.append("#2e7d32" if ok else "#c62828")
    fig, ax = plt.subplots(figsize=(9, 0.62 * len(labels) + 1.4))
    y = list(range(len(labels)))[::-1]
    ax.barh(y, values, color=colors, height=0.6)
    for yi, limit, value in zip(y, limits, values, strict=True):
        ax.plot([limit, limit], [yi - 0.4, yi + 0.4], color="black", linewidth=2)
        ax.text(value, yi, f" {value:.2f}x", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.axvline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("times better than the comparison (black tick: target; green: met)")
    ax.set_title("mcp_sync against the official SDK and a raw floor (one run, 2 cores)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
