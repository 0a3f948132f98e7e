"""``python -m bench``: run every comparison and print the table (see docs/benchmarks.md).

python -m bench                    # full run (~4 min on 2 cores), table on stdout
python -m bench --quick            # a few repetitions: does every row still run?
python -m bench --only stdio HTTP  # sections whose title contains a word
python -m bench --json out.json --markdown table.md --plot docs/benchmarks.png
python -m bench --from out.json --plot docs/benchmarks.png   # redraw without rerunning
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

from . import report, suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument("--only", nargs="+", metavar="WORD", help="sections whose title has WORD")
    parser.add_argument("--skip", nargs="+", metavar="WORD", help="sections whose title has WORD")
    parser.add_argument("--json", type=Path, help="write every sample as JSON")
    parser.add_argument("--markdown", type=Path, help="write the results as a Markdown table")
    parser.add_argument("--plot", type=Path, help="write the ratio plot (needs the bench extra)")
    parser.add_argument("--from", dest="source", type=Path, help="report a saved --json run")
    args = parser.parse_args(argv)

    meta = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "mcp": version("mcp"),
        "mcp_sync": version("mcp-sync-client"),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "mode": "quick" if args.quick else "full",
    }
    if args.source:
        rows = report.from_json(args.source.read_text())
    else:
        plan = suite.Plan.quick() if args.quick else suite.Plan.full()
        print(f"bench: {meta}", file=sys.stderr)
        start = time.perf_counter()
        rows = suite.run_all(
            plan, args.only, args.skip, log=lambda s: print(s, file=sys.stderr, flush=True)
        )
        print(f"bench: done in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print()
    print("\n".join(report.table_lines(rows)))
    print()
    print("ratios are mcp_sync's median over the other's (time), or mcp_sync / other (calls/s)")
    missed = [(row, t) for row in rows for t, _, ok in row.checks() if not ok]
    for row, target in missed:
        against = "absolute" if target.against is None else f"vs {target.against}"
        print(f"target missed: {row.name}: {target.op} {target.limit:g}x {against}")
    if args.json:
        args.json.write_text(report.to_json(rows, meta))
    if args.markdown:
        args.markdown.write_text(report.markdown(rows))
    if args.plot:
        try:
            report.plot(rows, args.plot)
        except ImportError:
            print("no plot: install the bench extra (pip install -e '.[bench]')", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
