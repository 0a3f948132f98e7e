"""What an error message shows of a server's stderr (pure text work, no I/O)."""

from __future__ import annotations

__all__ = ["STDERR_SHOWN", "shown_stderr"]

#: Characters of a server's stderr tail that an error message shows.
STDERR_SHOWN = 2000

_PROBE_COMPLAINT = "Failed to validate request:"


def shown_stderr(tail: str, limit: int = STDERR_SHOWN) -> str:
    """The end of a server's stderr for an error message: whole lines only, at most ``limit``
    characters, without the complaint an mcp 1.x server logs about the ``server/discover``
    probe (thirty lines of validation errors that pushed the real cause out of view)."""
    lines = _without_probe_complaints(tail.rstrip().splitlines())
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        if size + len(line) + 1 > limit:
            if not kept:  # one line longer than the limit: its end
                kept.append("..." + line[len(line) - limit + 3 :])
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(reversed(kept))


def _without_probe_complaints(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith(_PROBE_COMPLAINT):
            out.append(lines[i])
            i += 1
            continue
        end = i + 1  # the block: indented lines and "SomeRequest.field" headings
        while end < len(lines) and (
            lines[end][:1].isspace() or lines[end].split(".")[0].endswith("Request")
        ):
            end += 1
        block = lines[i:end]
        if any("server/discover" in line for line in block):
            out.append(
                f"[{len(block)} lines of the server's complaint about the"
                " server/discover probe left out]"
            )
        else:
            out.extend(block)
        i = end
    return out
