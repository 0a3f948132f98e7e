"""Human output of the CLI: aligned tables with wrapped text, results, a progress bar.

Every string a server sent goes through :func:`mcp_sync.terminal.safe` before it reaches the
terminal (escape sequences, controls and hidden characters shown as escapes; ``--json``
output as JSON escapes), bounded in length except what the user asked for (a result, a
prompt's messages, ``--json``): the reasons are in that module.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from .. import tool_parameters
from ..terminal import LIMIT, safe

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


#: The narrowest the last column (descriptions) is shown beside the others.
MIN_LAST = 20
#: How far a description shown under its row is indented.
UNDER = "    "


def table(headers: Sequence[str], rows: Sequence[Sequence[Cell]], width: int | None = None) -> str:
    """Rows aligned under ``headers``, fitted to ``width``.

    A cell is a string or a list of lines. Names, URIs and commands stay whole, to be copied:
    the first column is never cut or wrapped, and the middle ones wrap between words only. The
    last column (descriptions) wraps into what is left, keeping about 40% of the width where
    the middle ones can give way; where fewer than 20 columns would be left, each description
    goes under its row instead.
    """
    width = width or terminal_width()
    gap = "  "
    cols = len(headers)
    cells = [[_lines(cell) for cell in row] for row in rows]
    natural = [len(h) for h in headers]
    words = [len(h) for h in headers]  # the longest word of each column
    for row in cells:
        for i, lines in enumerate(row[: cols - 1]):
            natural[i] = max([natural[i], *map(len, lines)])
            words[i] = max([words[i], *(len(word) for line in lines for word in line.split())])
    # how narrow a middle column may become: its longest word on an indented line
    floors = [natural[0]] + [min(natural[i], words[i] + 2) for i in range(1, cols - 1)]
    beside = width - len(gap) * (cols - 1)  # for the columns, the last one beside them
    widths = _shrunk(natural[:-1], floors, beside - max(min(50, width * 2 // 5), MIN_LAST))
    last = beside - sum(widths)
    if last < MIN_LAST:  # the descriptions go under their rows, the others take the width
        widths = _shrunk(natural[:-1], floors, width - len(gap) * (cols - 2))

    def wrap(lines: list[str], w: int) -> list[str]:
        out: list[str] = []
        for line in lines:
            out.extend(_wrap(line, w) or [""])
        return out

    def joined(columns: Sequence[Sequence[str]], n: int) -> str:
        lines = [c[n] if n < len(c) else "" for c in columns]
        parts = [line.ljust(w) for line, w in zip(lines, widths, strict=False)]
        if len(columns) == cols:  # the last column, not padded
            parts.append(lines[-1])
        return gap.join(parts).rstrip()

    beside_rows = last >= MIN_LAST
    out = [joined([[h] for h in headers[: cols if beside_rows else -1]], 0)]
    for row in cells:
        columns = [wrap(cell, w) for cell, w in zip(row, widths, strict=False)]
        if beside_rows:
            columns.append(wrap(row[-1], last))
        out.extend(joined(columns, n) for n in range(max(map(len, columns))))
        if not beside_rows:
            out.extend(UNDER + line for line in wrap(row[-1], width - len(UNDER)) if line)
    return "\n".join(out)


def _shrunk(widths: list[int], floors: list[int], budget: int) -> list[int]:
    """``widths`` made to fit ``budget`` where they can: the widest column gives way first,
    none below its floor."""
    widths = list(widths)
    for _ in range(sum(widths) - budget):
        shrinkable = [i for i, w in enumerate(widths) if w > floors[i]]
        if not shrinkable:
            break
        widths[max(shrinkable, key=widths.__getitem__)] -= 1
    return widths


def _wrap(line: str, width: int, indent: str = "  ") -> list[str]:
    """``line`` filled into lines of ``width`` at its spaces (the next ones indented), in
    linear time (``textwrap`` is quadratic on a long word, and breaks at hyphens); a word
    longer than a line starts a line and is cut into pieces."""
    out: list[str] = []
    parts: list[str] = []
    size, filled = 0, False
    for word in line.split():
        if filled and size + 1 + len(word) > width:
            out.append("".join(parts))
            parts, size, filled = [indent], len(indent), False
        if filled:
            parts.append(" ")
            size += 1
        start = 0  # offsets, not slices of what is left: a slice copies it
        while size + len(word) - start > width:
            cut = max(width - size, 1)
            parts.append(word[start : start + cut])
            out.append("".join(parts))
            start += cut
            parts, size = [indent], len(indent)
        parts.append(word[start:])
        size += len(word) - start
        filled = True
    if filled:
        out.append("".join(parts))
    return out


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
        write_lines(text, out, limit=None)
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


def write_lines(text: str, out: IO[str], limit: int | None = LIMIT) -> None:
    """Multi-line text from a server, escaped, ending with a newline; ``limit`` None for what
    the user asked for (a result), shown whole."""
    text = safe(text, lines=True, limit=limit)
    out.write(text if text.endswith("\n") else text + "\n")


def dump_json(value: Any, out: IO[str]) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    out.write(safe(text, lines=True, as_json=True, limit=None))
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
