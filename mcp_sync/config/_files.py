"""The text formats around config files: JSONC (JSON with comments and trailing commas, as
VS Code writes ``.vscode/mcp.json``) and dotenv files (VS Code's ``envFile``)."""

from __future__ import annotations

import re

from ..errors import ConfigError

__all__ = ["parse_env_file", "strip_jsonc"]


def strip_jsonc(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments and trailing commas blanked out.

    Each removed character becomes a space (a newline stays a newline), so that a JSON error
    in what is left points at the same line and column of the file. Strings are left alone:
    ``"http://x"`` and ``"a,]"`` keep their text.
    """
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1  # the index of a comma that a ``]`` or ``}`` may make trailing
    while i < n:
        ch = text[i]
        if ch == '"':
            last_comma = -1
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if ch == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if ch == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2  # unterminated: JSON parsing reports what is left
            out[i:end] = [c if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        if ch == ",":
            last_comma = i
        elif ch in "]}":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif not ch.isspace():
            last_comma = -1
        i += 1
    return "".join(out)


_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def parse_env_file(text: str, name: str) -> dict[str, str]:
    """The variables of a dotenv file: ``KEY=VALUE`` lines, ``export KEY=VALUE``, ``#``
    comments (whole lines, or after a value and a space), ``'single'`` quotes taken
    literally and ``"double"`` quotes with ``\\n``, ``\\t``, ``\\"`` and ``\\\\`` escapes.
    Nothing is expanded: ``$HOME`` stays ``$HOME``. ``name`` is the file, for errors: a line
    that is not an assignment raises :class:`ConfigError` naming it."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _ASSIGNMENT.match(stripped)
        if match is None:
            raise ConfigError(f"{name} line {number}: expected KEY=VALUE, not {stripped[:60]!r}")
        key, raw = match.groups()
        found[key] = _value(raw, f"{name} line {number}")
    return found


def _value(raw: str, where: str) -> str:
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        i, chars = 1, []
        while i < len(raw) and raw[i] != quote:
            if quote == '"' and raw[i] == "\\" and i + 1 < len(raw):
                chars.append(_ESCAPES.get(raw[i + 1], "\\" + raw[i + 1]))
                i += 2
                continue
            chars.append(raw[i])
            i += 1
        if i >= len(raw):
            raise ConfigError(f"{where}: the {quote} quote is not closed")
        rest = raw[i + 1 :].strip()
        if rest and not rest.startswith("#"):
            raise ConfigError(f"{where}: unexpected text after the quoted value: {rest[:40]!r}")
        return "".join(chars)
    return re.split(r"\s#", raw, maxsplit=1)[0].strip()
