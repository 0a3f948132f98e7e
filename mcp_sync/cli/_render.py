"""Human output of the CLI: aligned tables with wrapped text, results, a progress bar.

Every string a server sent goes through :func:`mcp_sync.terminal.safe` before it reaches the
terminal (escape sequences, controls and hidden characters shown as escapes; ``--json``
output as JSON escapes): the reasons are in that module.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import threading
from collections.abc import Sequence
from typing import IO, Any

from .. import tool_parameters
from ..terminal import safe

__all__ = ["Progress", "render_result", "safe", "table", "terminal_width"]


def terminal_width() -> int:
    try:
        return max(int(os.environ["COLUMNS"]), 40)
    except (KeyError, ValueError):
        pass
    return max(shutil.get_terminal_size((100, 24)).columns, 40)


Cell = str | Sequence[str]


def _lines(cell: Cell) -> list[str]:
    return [safe(cell)] if isinstance(cell, str) else [safe(line) for line in cell]


def table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], width: int | None = None) -> str:
    """Rows aligned under ``headers``; the last column wraps to fit ``width``.

    A cell is a string (wrapped) or a list of lines (each wrapped on its own).
    """
    width = width or terminal_width()
    gap = "  "
    cols = len(headers)
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row[: cols - 1]):
            widths[i] = max(widths[i], *(len(line) for line in _lines(cell) or [""]))
    # The last column (descriptions) keeps at least ~40% of the width; the others share
    # the rest, the widest giving way first.
    min_last = max(min(50, width * 2 // 5), 20)
    fixed_budget = max(width - min_last - len(gap) * (cols - 1), (cols - 1) * 10)
    while sum(widths[:-1]) > fixed_budget:
        widest = max(range(cols - 1), key=lambda i: widths[i])
        widths[widest] -= 1
    widths[-1] = max(width - sum(widths[:-1]) - len(gap) * (cols - 1), 20)

    def wrap(cell: Cell, w: int) -> list[str]:
        out: list[str] = []
        for line in _lines(cell):
            out.extend(textwrap.wrap(line, w, subsequent_indent="  ") or [""])
        return out

    out = [gap.join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for row in rows:
        wrapped = [wrap(cell, w) for cell, w in zip(row, widths, strict=True)]
        height = max(len(c) for c in wrapped)
        for n in range(height):
            parts = [
                (c[n] if n < len(c) else "").ljust(w) for c, w in zip(wrapped, widths, strict=True)
            ]
            out.append(gap.join(parts).rstrip())
    return "\n".join(out)


def describe(text: str | None) -> str:
    return " ".join((text or "").split())


def param_lines(input_schema: Any) -> list[str]:
    """One line per parameter: ``name*: type = default`` (``*`` = required). A ``$ref`` or
    ``allOf`` (pydantic's enums and models) is followed: an enum shows its values."""
    from ._arguments import effective_schema

    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    lines = []
    for p in tool_parameters(input_schema):
        schema = properties.get(p.name) if isinstance(properties, dict) else None
        kind = p.type
        if isinstance(schema, dict):
            resolved = effective_schema(schema, input_schema)
            if "enum" in resolved or "const" in resolved or _ref_name(schema) is None:
                kind = _type_name(resolved)
            default = resolved.get("default")
            if default is not None:
                shown = json.dumps(default, ensure_ascii=False)
                kind += f" = {shown if len(shown) <= 30 else shown[:27] + '...'}"
        lines.append(f"{p.name}{'*' if p.required else ''}: {kind}")
    return lines or ["-"]


def _type_name(schema: dict[str, Any]) -> str:
    """The short type name :func:`mcp_sync.tool_parameters` gives ``schema``."""
    return tool_parameters({"properties": {"p": schema}})[0].type


def _ref_name(schema: dict[str, Any]) -> str | None:
    """The ``$ref`` a parameter names, itself or as the one member of its ``allOf``."""
    members = schema.get("allOf")
    if isinstance(members, list) and len(members) == 1 and isinstance(members[0], dict):
        schema = members[0]
    ref = schema.get("$ref")
    return ref if isinstance(ref, str) else None


def render_result(result: Any, out: IO[str]) -> None:
    """A tool result or a resource read for people: text as is, other content summarised.
    Structured content follows as JSON unless the text already is that JSON (as the SDKs
    write it): a server may summarise in the text and keep the data for machines."""
    from .. import to_llm_text

    text = to_llm_text(result)
    if text:
        write_lines(text, out)
    structured = getattr(result, "structured_content", None)
    if structured is not None and text and not _text_is(result, text, structured):
        out.write("structured content:\n")
        dump_json(structured, out)


def _text_is(result: Any, text: str, structured: Any) -> bool:
    """Whether the text (all of it, or one text block) is the structured content as JSON,
    or the one value the SDKs wrap a plain return in (``{"result": 42}`` for ``42``)."""
    texts = [text] + [
        block.text for block in getattr(result, "content", None) or [] if hasattr(block, "text")
    ]
    wanted = [structured]
    if isinstance(structured, dict) and len(structured) == 1:
        wanted.extend(structured.values())
    for candidate in texts:
        if candidate in wanted:
            return True
        try:
            if json.loads(candidate) in wanted:
                return True
        except (ValueError, TypeError):
            continue
    return False


def write_lines(text: str, out: IO[str]) -> None:
    """Multi-line text from a server, escaped, ending with a newline."""
    text = safe(text, lines=True)
    out.write(text if text.endswith("\n") else text + "\n")


def dump_json(value: Any, out: IO[str]) -> None:
    out.write(safe(json.dumps(value, indent=2, ensure_ascii=False), lines=True, as_json=True))
    out.write("\n")


class Progress:
    """Progress reports on stderr: a bar redrawn in place on a terminal, plain lines
    otherwise (only when ``verbose``)."""

    def __init__(self, stream: IO[str] | None = None, *, verbose: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.verbose = verbose
        self._drawn = False
        self._done = False
        self._lock = threading.Lock()

    def __call__(self, params: Any) -> None:
        progress, total, message = params.progress, params.total, params.message
        with self._lock:
            if self.tty:
                if self._done:  # a report that came with the result: the bar is gone
                    return
                self._draw(progress, total, message)
            elif self.verbose:
                of = f"/{_num(total)}" if total is not None else ""
                note = f" {safe(message)}" if message else ""
                self.stream.write(f"progress {_num(progress)}{of}{note}\n")
                self.stream.flush()

    def _draw(self, progress: float, total: float | None, message: str | None) -> None:
        width = min(terminal_width(), 100)
        if total:
            fraction = max(0.0, min(progress / total, 1.0))
            bar_width = 30
            filled = int(bar_width * fraction)
            head = f"[{'#' * filled}{'.' * (bar_width - filled)}] {fraction:4.0%}"
        else:
            head = f"[{_num(progress)}]"
        line = f"{head} {safe(message or '')}"[: width - 1]
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        with self._lock:
            self._done = True
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._drawn = False


def _num(value: float | None) -> str:
    if value is None:
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
