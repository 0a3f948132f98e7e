"""Text from a server, fit for a terminal: :func:`safe`, for whatever prints what a server
sent (a tool's description, a result, an error message, a diff, its stderr).

A server is code the user did not write, and ESC, OSC and CSI sequences, BEL, a carriage
return or a C1 control can retitle the terminal, clear or hide text, or draw a fake prompt;
bidi controls, zero-width and tag characters hide or reorder text. They are shown as Python
escapes (``\\x1b``, ``\\u202e``). A lone surrogate, which no terminal encoding can write, is
shown the same way. ``as_json`` turns the same characters into JSON escapes, so that the text
of a JSON document still parses to exactly what the server sent.

A server also chooses how long its text is: :func:`safe` shows at most :data:`LIMIT`
characters of it and says how many it left out, and its work is linear in the length of the
text, so that a 3 MB description costs the terminal (and the table around it) no more than
10,000 characters do.

Everything mcp_sync prints for a person goes through it: the CLI's tables, messages, warnings,
server logs and stderr, the pins' diff, the pytest plugin's report, the OAuth device grant's
code and address.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ._rules.numbers import whole

__all__ = ["LIMIT", "safe"]

#: The most characters of one text that :func:`safe` shows (each escape counts as one).
LIMIT = 10_000

# Runs of characters that need a closer look: anything outside printable ASCII (and, in
# multi-line text, newline and tab).
_LOOK_LINE = re.compile(r"[^\x20-\x7e]+")
_LOOK_LINES = re.compile(r"[^\x20-\x7e\n\t]+")
# Controls (C0, DEL, C1), format characters (bidi controls, zero-width, tags, soft hyphen),
# lone surrogates, and the line and paragraph separators. Spaces of every width, private-use
# and not-yet-assigned characters are shown as they are.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


_SHORT = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}


def _python_escape(code: int) -> str:
    if code in _SHORT:
        return _SHORT[code]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _json_escape(code: int) -> str:
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def safe(
    text: str,
    *,
    lines: bool = False,
    as_json: bool = False,
    limit: int | None = LIMIT,
    strict: bool = False,
    left_out: int = 0,
) -> str:
    """``text`` from a server, fit for the terminal: each control, format character and lone
    surrogate escaped, and at most ``limit`` characters of it, followed by
    ``... [N more characters]`` when it is longer.

    ``lines`` keeps newlines and tabs (a CRLF is a newline); ``as_json`` writes JSON escapes,
    for the text of a JSON document (with ``limit=None``: a cut document does not parse);
    ``limit`` None shows it all (a result the user asked for, to read or to pipe on).
    ``strict`` escapes every character that is not printable, spaces other than the space,
    private-use and unassigned characters too: for a diff, where every difference must show.
    ``left_out`` counts characters of the same text already dropped on its way here (a line
    cut as it arrived), for the note.
    """
    if limit is not None and limit is not LIMIT:
        whole(limit, "safe: limit")
    if limit is not None and len(text) > limit:
        left_out += len(text) - limit
        text = text[:limit]
    if lines:
        text = text.replace("\r\n", "\n")
    escape: Callable[[int], str] = _json_escape if as_json else _python_escape

    def hidden(ch: str) -> bool:
        if lines and ch in "\n\t":
            return False
        return not ch.isprintable() if strict else unicodedata.category(ch) in _HIDDEN

    def fix(match: re.Match[str]) -> str:
        run = match.group()
        if run.isprintable():  # accents, CJK, emoji: the common case, decided in C
            return run
        return "".join(escape(ord(ch)) if hidden(ch) else ch for ch in run)

    shown = (_LOOK_LINES if lines else _LOOK_LINE).sub(fix, text)
    return f"{shown}... [{left_out} more characters]" if left_out else shown
