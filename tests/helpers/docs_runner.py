"""Executes the code in docs/*.md so that the docs cannot drift from the code.

The convention (also in docs/contributing.md):

- ```python blocks run in page order in one namespace per page, in a scratch directory that
  holds ``server.py`` (a real MCP server: tests/servers/sdk_server.py) with the venv's bin/ first
  on PATH (so ``mcp-server-time``, ``mcp-sync`` and ``python`` are the project's).
- A ```text block right after a python block is its expected stdout.
- A fence with a title (```json title="mcp.json"; mkdocs shows it as the block's caption) is
  a file: it is written to that name in the scratch directory instead of being run.
- ```console blocks are shell sessions: each ``$ command`` line (``\\`` continues it) runs with
  ``bash``; the lines after it, up to the next ``$``, are its expected output (stdout and stderr).
  It must exit 0. ``$ pip install ...`` lines are shown, not run.
- A ```python block right after a line of the form ``<file>, before <line>:`` (the file and
  the line's start in backquotes; :data:`STEP`) is a step of a walk-through in docs/contributing.md: an edit to that file,
  inserted before (or after) the one line starting with that text. It is shown, not run here;
  tests/docs/test_walkthroughs.py applies every step to a copy of the package and checks it.
- ``<!-- test`` ... ``-->`` comments hold hidden Python run at that point in the same namespace
  (setup such as a stand-in for Celery, or assertions that check what a block did). What they
  start goes on ``docs_cleanup``, an ``ExitStack`` that test_docs.py closes after the page.

Expected output is compared loosely: runs of whitespace match any whitespace and ``...``
matches anything (including nothing, across lines).
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>[^\n`]*)$")
#: The line before a walk-through's step: the file it edits, and where.
STEP = re.compile(
    r"^`(?P<file>mcp_sync/[^`]+\.py)`, (?P<where>before|after) (?P<ticks>`+) ?(?P<anchor>.+?) ?(?P=ticks):$"
)


@dataclass
class Block:
    kind: str  # "python", "output", "file", "console", "hidden", "step"
    code: str
    line: int
    info: str = ""
    file: str | None = None
    #: For a step: "before" or "after", and the start of the line it goes next to.
    where: str = ""
    anchor: str = ""
    expected: str | None = None  # for python blocks: the text block that follows


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)


def parse(path: Path) -> Page:
    lines = path.read_text(encoding="utf-8").splitlines()
    page = Page(path)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("<!-- test"):
            start = i
            body: list[str] = []
            first = line.strip()[len("<!-- test") :]
            if "-->" in first:
                body.append(first.split("-->", 1)[0])
            else:
                if first.strip():
                    body.append(first)
                i += 1
                while i < len(lines) and "-->" not in lines[i]:
                    body.append(lines[i])
                    i += 1
                if i < len(lines):
                    body.append(lines[i].split("-->", 1)[0])
            page.blocks.append(Block("hidden", "\n".join(body), start + 1))
            i += 1
            continue
        match = FENCE.match(line)
        if not match:
            i += 1
            continue
        indent, fence, info = len(match["indent"]), match["fence"], match["info"].strip()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        code = "\n".join(body)
        words = info.split()
        lang = words[0] if words else ""
        title = re.search(r'title="([^"]+)"', info)
        target = title.group(1) if title else None
        step = _step_before(lines, start)
        if target:
            page.blocks.append(Block("file", code, start + 1, info, file=target))
        elif step is not None and lang == "python":
            file, where, anchor = step
            page.blocks.append(Block("step", code, start + 1, info, file, where, anchor))
        elif lang in ("python", "py", "pycon"):
            page.blocks.append(Block("python", code, start + 1, info))
        elif (
            lang == "text"
            and page.blocks
            and page.blocks[-1].kind == "python"
            and page.blocks[-1].expected is None
            and _only_blank_between(lines, page, start)
        ):
            page.blocks[-1].expected = code
        elif lang == "console":
            page.blocks.append(Block("console", code, start + 1, info))
    return page


def _step_before(lines: list[str], start: int) -> tuple[str, str, str] | None:
    """The file, "before" or "after", and anchor of the step line right above a fence."""
    previous = start - 1
    while previous >= 0 and not lines[previous].strip():
        previous -= 1
    match = STEP.match(lines[previous].strip()) if previous >= 0 else None
    return (match["file"], match["where"], match["anchor"]) if match else None


def _only_blank_between(lines: list[str], page: Page, start: int) -> bool:
    previous = page.blocks[-1]
    # find the closing fence of the previous block, then require only blank lines up to start
    code_lines = previous.code.count("\n") + 1 if previous.code else 0
    after_closing = previous.line + code_lines + 1  # 0-based index of the line after it
    return all(not lines[n].strip() for n in range(after_closing, start))


def loose_match(expected: str, actual: str) -> bool:
    parts = [
        r"\s+".join(re.escape(word) for word in piece.split())
        for piece in expected.strip().split("...")
    ]
    pattern = r"(?:.*?)".join(f"\\s*{p}\\s*" if p else "" for p in parts)
    return re.fullmatch(pattern, actual.strip(), re.DOTALL) is not None


def console_commands(code: str) -> Iterator[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    command: list[str] | None = None
    expected: list[str] = []
    continuing = False
    for line in code.splitlines():
        if continuing and command is not None:
            command.append(line)
            continuing = line.endswith("\\")
            continue
        if line.startswith("$ "):
            if command is not None:
                yield "\n".join(command), "\n".join(expected)
            command, expected = [line[2:]], []
            continuing = line.endswith("\\")
        elif command is not None:
            expected.append(line)
    if command is not None:
        yield "\n".join(command), "\n".join(expected)


class DocsError(AssertionError):
    pass


def close_clients(namespace: dict[str, Any]) -> None:
    import mcp_sync

    for value in list(namespace.values()):
        if isinstance(value, (mcp_sync.Client, mcp_sync.ClientGroup)):
            with contextlib.suppress(Exception):
                value.close()


def run_page(page: Page, workdir: Path, env: dict[str, str], namespace: dict[str, Any]) -> None:
    name = str(page.path)
    try:
        for block in page.blocks:
            where = f"{name}:{block.line}"
            if block.kind == "file":
                assert block.file is not None
                target = workdir / block.file
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(block.code + "\n", encoding="utf-8")
            elif block.kind in ("python", "hidden"):
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        exec(compile(block.code, where, "exec"), namespace)
                except BaseException:
                    raise DocsError(
                        f"{where}: this block failed:\n{block.code}\n\n{traceback.format_exc()}"
                    ) from None
                if block.expected is not None and not loose_match(block.expected, out.getvalue()):
                    raise DocsError(
                        f"{where}: output differs.\n--- expected\n{block.expected}\n"
                        f"--- actual\n{out.getvalue()}"
                    )
            elif block.kind == "console":
                for command, expected in console_commands(block.code):
                    if command.startswith(("pip ", "pipx ", "uv ")):
                        continue
                    done = subprocess.run(
                        ["bash", "-c", command],
                        cwd=workdir,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        text=True,
                        timeout=90,
                    )
                    if done.returncode != 0:
                        raise DocsError(
                            f"{where}: `{command}` exited {done.returncode}:\n{done.stdout}"
                        )
                    if expected.strip() and not loose_match(expected, done.stdout):
                        raise DocsError(
                            f"{where}: `{command}` output differs.\n--- expected\n{expected}\n"
                            f"--- actual\n{done.stdout}"
                        )
    finally:
        close_clients(namespace)
