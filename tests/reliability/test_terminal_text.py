"""Everything mcp_sync prints for a person goes through ``mcp_sync.terminal.safe``: escaped,
bounded, in linear time. One hostile server's text is sent through every such path that
``tests/cli/test_cli_terminal.py`` (the CLI's verbs) does not walk: the ``-v`` stderr relay,
the warnings about stdout chatter, a table and an error message holding a 3 MB word, the pins'
diff and warning, and the pytest plugin's report.

The server is real: ``tests/servers/hostile_server.py`` (the official Python SDK's low-level
server; ``--noisy`` makes it write chatter on stdout and hostile, long and unfinished lines on
stderr, ``--wide N`` adds a tool whose description is one word of N characters and ends an
error message with such a word).

The linear-time tests compare the CPU time of the same work for n and 4n characters (a ratio,
never a time): linear work grows about 4 times, quadratic work 16 times.
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
import warnings
from collections.abc import Callable

import pytest

from mcp_sync import Client, Pins, StdioTransport, ToolChanged, ToolChangedWarning
from mcp_sync.cli import main
from mcp_sync.cli._connecting import _LinePrefixer
from mcp_sync.cli._render import table
from mcp_sync.pins import fingerprint, record
from mcp_sync.terminal import LIMIT
from tests.helpers.support import SERVERS
from tests.servers.hostile_server import CHATTER, HOSTILE, LONG_LINE, RAW

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(120)

SCRIPT = str(SERVERS / "hostile_server.py")
HOSTILE_SERVER = [sys.executable, SCRIPT]
#: HOSTILE escaped, wherever it is shown.
ESCAPED = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\rfake$ ok\\x9b31m\\u202eevil\\u200b\\U000e0041"
SKIPPED = "mcp-sync: warning: skipped a line of the server's output that is not JSON: "


def assert_no_raw_control(text: str) -> None:
    found = [repr(ch) for ch in RAW if ch in text]
    assert not found, f"raw {', '.join(found)} reached the terminal: {text[:2000]!r}"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def work_ratio(work: Callable[[int], object], n: int, repeat: int = 3) -> float:
    """CPU time of ``work(4 * n)`` over that of ``work(n)``, each the least of ``repeat`` runs."""

    def least(size: int) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            work(size)
            times.append(time.process_time() - start)
        return max(min(times), 1e-6)

    return least(4 * n) / least(n)


# -- the CLI ---------------------------------------------------------------------------------


def test_the_stderr_relay_escapes_caps_a_long_line_and_shows_the_last_unfinished_one():
    # Before: the line with no newline was never shown, and the relay kept a line without
    # bound (each chunk copied all that came before it).
    code, _, err = cli("-v", "ping", "--", *HOSTILE_SERVER, "--noisy")
    assert code == 0, err
    assert_no_raw_control(err)
    shown = err.splitlines()
    assert f"[server stderr] stderr {ESCAPED}" in err
    long = [line for line in shown if line.startswith("[server stderr] xxx")]
    assert len(long) == 1
    assert long[0] == f"[server stderr] {'x' * LIMIT}... [{LONG_LINE - LIMIT} more characters]"
    assert shown[-1] == f"[server stderr] last words {ESCAPED}"


def test_the_stderr_relay_is_linear_in_a_line_without_a_newline():
    def relay(size: int) -> None:
        prefixer = _LinePrefixer(io.StringIO(), "[server stderr] ")
        chunk = "y" * 65536  # what the stderr pump hands over at a time
        for _ in range(size // len(chunk)):
            prefixer(chunk)

    ratio = work_ratio(relay, 2 * 1024 * 1024)
    assert ratio < 8, f"4 times the text took {ratio:.1f} times the work"


def test_stdout_chatter_is_one_warning_per_line_in_the_clis_name_saying_it_was_skipped():
    # Before: "mcp_sync: invalid JSON (Expecting value: ...): b'Loading configuration...\n'",
    # quoted as bytes or as text depending on how the line arrived, and not saying it was
    # skipped.
    code, _, err = cli("tools", "--", *HOSTILE_SERVER, "--noisy")
    assert code == 0, err
    assert_no_raw_control(err)
    assert err.splitlines() == [SKIPPED + repr(line) for line in CHATTER]
    assert repr(CHATTER[1]) == f"'loaded {ESCAPED}'"


def test_a_three_megabyte_word_in_a_description_is_shown_bounded(monkeypatch):
    # Before: 9.3 s of CPU in textwrap, and 8 MB of table.
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = cli("tools", "--", *HOSTILE_SERVER, "--wide", str(3 * 1024 * 1024))
    assert code == 0, err
    # LIMIT characters of it, wrapped in the 20 columns left beside the escaped hostile names
    # (which are whole: 85 columns)
    assert sum(map(len, re.findall("w{2,}", out))) == LIMIT
    assert f"[{3 * 1024 * 1024 - LIMIT} more" in out
    assert len(out) < 10 * LIMIT, len(out)
    # and an error message holding it
    code, _, err = cli("call", "refuse", "--", *HOSTILE_SERVER, "--wide", str(3 * 1024 * 1024))
    assert code == 3
    assert err.startswith(f"mcp-sync: the server reported an error: refused {ESCAPED} www"), err
    assert len(err) < LIMIT + 200, len(err)


def test_a_table_is_linear_in_the_length_of_a_description():
    def render(size: int) -> None:
        table(["TOOL", "DESCRIPTION"], [["wide", "w" * size]], width=80)

    ratio = work_ratio(render, 512 * 1024)
    assert ratio < 8, f"4 times the text took {ratio:.1f} times the work"


# -- the pins --------------------------------------------------------------------------------


def test_the_pins_diff_and_warning_show_a_hostile_tool_name_escaped(tmp_path):
    # Before: the "--- pinned NAME" and "+++ listed NAME" lines held the raw name, so a
    # rug-pulling server could rewrite the very diff a pin exists to show.
    path = tmp_path / "pins.json"
    with Client(protocol="handshake").connect(StdioTransport(sys.executable, [SCRIPT])) as client:
        record(client, path)
    saved = json.loads(path.read_text())
    tools = saved["tools"]
    changed = tools[f"echo{HOSTILE}"]["definition"]
    changed["description"] = "does nothing"
    tools[f"echo{HOSTILE}"] = {"sha256": fingerprint(changed), "definition": changed}
    gone = {"name": f"gone{HOSTILE}", "inputSchema": {"type": "object"}}
    tools[f"gone{HOSTILE}"] = {"sha256": fingerprint(gone), "definition": gone}
    del tools["fail"]
    path.write_text(json.dumps(saved))

    transport = StdioTransport(sys.executable, [SCRIPT])
    client = Client(pin=path, protocol="handshake").connect(transport)
    with client, pytest.raises(ToolChanged) as caught:
        client.list_tools()
    message = str(caught.value)
    assert {change.kind for change in caught.value.changes} == {"changed", "added", "removed"}
    assert_no_raw_control(message)
    assert f"--- pinned echo{ESCAPED}" in message
    assert f"+++ listed echo{ESCAPED}" in message
    assert f"--- pinned gone{ESCAPED}" in message

    transport = StdioTransport(sys.executable, [SCRIPT])
    client = Client(pin=Pins(path, on_change="warn"), protocol="handshake").connect(transport)
    with client, warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        client.list_tools()
    shown = [str(w.message) for w in caught_warnings if w.category is ToolChangedWarning]
    assert len(shown) == 3
    for text in shown:
        assert_no_raw_control(text)


# -- the pytest plugin -----------------------------------------------------------------------


def test_the_plugin_report_shows_the_server_stderr_escaped_and_bounded(pytester):
    # Before: the "mcp server stderr" section printed the escape sequences raw.
    command = [*HOSTILE_SERVER, "--noisy", f"--tag={HOSTILE}"]
    pytester.makepyfile(
        test_hostile=f"""
        import threading

        def test_fails(mcp_client):
            seen, done = [], threading.Event()

            def listen(text):
                seen.append(text)
                if "last words" in "".join(seen):
                    done.set()

            mcp_client({command!r}, on_stderr=listen)
            assert done.wait(30)
            assert not "the server's stderr is in the report"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert f"- mcp server stderr: {sys.executable} {SCRIPT} --noisy '--tag={ESCAPED}' -" in text
    assert f"\nlast words {ESCAPED}\n" in text  # the end of the stderr: the long line's tail
    assert len(text) < 2 * 64 * 1024
    assert_no_raw_control(text)
