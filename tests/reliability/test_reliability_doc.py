"""docs/reliability.md: every row names tests, and every test it names exists; the fault
lattice has a cell for every operation and condition, each naming tests or saying why the
pair cannot happen."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")

LATTICE_OPERATIONS = (
    "connect",
    "call",
    "recovery of a stdio server (`recovery=`)",
    "renewal of an HTTP session",
    "OAuth sign-in and refresh",
    "close",
)
LATTICE_CONDITIONS = (
    "8 to 16 threads at once",
    "`close()` from another thread",
    "the call's abort signal",
    "a forked child closes, drops or leaves its copy",
    "a peer that crash-loops",
    "a peer that stalls and resumes",
)
#: A cell that gives no test says why the pair cannot happen, starting so.
CANNOT_HAPPEN = "Cannot happen: "


def missing_tests(references: list[tuple[str, str]]) -> list[str]:
    """The ``path::name`` references whose test function does not exist."""
    missing = []
    for path, name in references:
        source = ROOT / path
        if not source.is_file() or not re.search(
            rf"^def {name}\(", source.read_text(encoding="utf-8"), re.M
        ):
            missing.append(f"{path}::{name}")
    return missing


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
        missing.extend(missing_tests(references))
    assert len(in_fault_tables) > 60
    assert not missing, missing


def lattice() -> list[list[str]]:
    """The fault lattice's table, one list of cells per line (the header first)."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## The fault lattice\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert lines, "no table in the fault lattice section"
    assert set(lines[1]) <= {"|", "-"}, f"not a table's separator: {lines[1]}"
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[:1] + lines[2:]]


def test_the_fault_lattice_has_every_cell_and_each_names_tests_or_a_reason() -> None:
    header, *rows = lattice()
    assert header == ["operation", *LATTICE_CONDITIONS]
    assert [row[0] for row in rows] == list(LATTICE_OPERATIONS)
    problems: list[str] = []
    for row in rows:
        if len(row) != len(header):
            problems.append(f"{row[0]}: {len(row) - 1} cells, not {len(header) - 1}")
            continue
        for condition, cell in zip(LATTICE_CONDITIONS, row[1:], strict=True):
            where = f"{row[0]} x {condition}"
            references = REFERENCE.findall(cell)
            if cell.startswith(CANNOT_HAPPEN):
                if len(cell[len(CANNOT_HAPPEN) :].split()) < 3:
                    problems.append(f"{where}: no reason given")
            elif not references:
                problems.append(f"{where}: neither a test nor a reason: {cell[:60]!r}")
            problems.extend(f"{where}: {name}" for name in missing_tests(references))
    assert not problems, problems
