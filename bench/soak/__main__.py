"""python -m bench.soak [--calls N] [--threads N] [--cycles N] [--small] [--json FILE]"""

from __future__ import annotations

import argparse
import json
import sys

from .runner import run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak")
    parser.add_argument("--calls", type=int, default=100_000, help="calls per transport")
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--cycles", type=int, default=1000, help="connect/close cycles")
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--small", action="store_true", help="the make-test size")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if args.small:
        args.calls, args.threads, args.cycles = 4000, 16, 40
    results = run(
        calls=args.calls,
        threads=args.threads,
        cycles=args.cycles,
        transports=args.transports.split(","),
        log=lambda line: print(line, flush=True),
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.as_dict() for r in results], f, indent=2)
    failed = [r for r in results if not r.ok]
    for result in failed:
        print(f"FAILED: {result.name}: {result.problems}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
