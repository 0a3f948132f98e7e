"""Running the CLI in-process for the CLI tests."""

from __future__ import annotations

import io
from dataclasses import dataclass

from mcp_sync.cli import main


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_cli(*argv: str) -> Run:
    """Run the CLI in this process (fast); the server it starts is a real subprocess."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return Run(code, out.getvalue(), err.getvalue())
