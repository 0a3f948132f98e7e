"""docs/reliability.md: every row names tests, and every test it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_table_row_is_backed_by_existing_tests() -> None:
    rows = [
        line
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("|---")
    ]
    headers = ("| fault ", "| attack ", "| property ", "| run ")
    in_fault_tables = [row for row in rows if row.count("|") == 4 and not row.startswith(headers)]
    missing: list[str] = []
    for row in in_fault_tables:
        references = REFERENCE.findall(row)
        if not references:
            missing.append(f"no test for: {row[:80]}")
        for path, name in references:
            source = ROOT / path
            if not source.is_file() or not re.search(
                rf"^def {name}\(", source.read_text(encoding="utf-8"), re.M
            ):
                missing.append(f"{path}::{name}")
    assert len(in_fault_tables) > 60
    assert not missing, missing
