"""The CLI's output, exit codes and target rules as real servers showed them (issue 42):
tables that keep names and URIs whole, an HTTP auth refusal with a JSON-RPC body, a URL at the
end of the line, a closed output pipe, and the words for a server's own failure.

The servers are real: server-everything (its hyphenated tool names and long resource URIs),
the official Python SDK's example server over Streamable HTTP (``sdk_url``), and
``tests/servers/api_key_server.py`` (the same SDK behind an API key, refusing with a JSON-RPC
error body as the servers tried for the issue did).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_sync import HttpError, connect
from mcp_sync.cli._render import param_lines
from tests.helpers.cli_support import run_cli
from tests.helpers.support import SERVERS, HttpServer, free_port

pytestmark = pytest.mark.timeout(120)

KEY = "k-123"


# -- tables ----------------------------------------------------------------------------------


def words_of(verb: str, item: dict[str, Any]) -> list[str]:
    """The words a row's middle columns show for ``item`` (the wire form)."""
    if verb == "tools":
        return [word for line in param_lines(item["inputSchema"]) for word in line.split()]
    if verb == "prompts":
        arguments = item.get("arguments") or []
        return [a["name"] + ("*" if a.get("required") else "") for a in arguments]
    return f"{item['name']} {item.get('mimeType') or ''}".split()


@pytest.mark.parametrize("columns", ["80", "60"])
@pytest.mark.parametrize(
    ("verb", "first"),
    [("tools", "name"), ("resources", "uri"), ("templates", "uriTemplate"), ("prompts", "name")],
)
def test_a_table_never_breaks_a_name_or_uri(everything, monkeypatch, verb, first, columns):
    # Before, at 80 columns: "toggle-simulated-" / "logging", "demo://resourc" /
    # "e/static/doc" / "ument/archit" / "ecture.md", and a default of "https:" /
    # "//raw.githubusercont".
    monkeypatch.setenv("COLUMNS", columns)
    listed = run_cli("--json", "--protocol", "handshake", verb, "--", *everything)
    assert listed.code == 0, listed.err
    items = json.loads(listed.out)
    assert items
    shown = run_cli("--protocol", "handshake", verb, "--", *everything)
    assert shown.code == 0, shown.err
    rows = [line for line in shown.out.splitlines()[1:] if not line.startswith(" ")]
    assert [row.split("  ")[0] for row in rows] == [item[first] for item in items], shown.out
    words = set(shown.out.split())
    for item in items:  # the middle columns wrap between words only
        assert set(words_of(verb, item)) <= words, (item, shown.out)


# -- an HTTP auth refusal --------------------------------------------------------------------


@pytest.fixture(scope="module")
def api_key_url() -> Iterator[str]:
    port = free_port()
    with HttpServer([sys.executable, str(SERVERS / "api_key_server.py"), str(port), KEY], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize(
    ("header", "status", "said"),
    [(None, 401, "Unauthorized: Missing bearer token"), ("Bearer nope", 403, "Forbidden")],
)
def test_an_http_auth_refusal_with_a_json_rpc_body_is_exit_6_with_a_header_hint(
    api_key_url, header, status, said
):
    # Before: exit 3, "protocol error: Unauthorized: Missing bearer token (JSON-RPC error
    # -32001)", and a hint to `mcp-sync login`, which this server does not offer.
    headers = ["-H", f"Authorization: {header}"] if header else []
    run = run_cli(api_key_url, *headers, "tools")
    assert run.code == 6, run.err
    first, hint = run.err.splitlines()
    assert first.startswith(f"mcp-sync: authorization: HTTP {status} "), run.err
    assert f"{said} (JSON-RPC error -32001)" in first
    assert hint == (
        "mcp-sync: the server offers no OAuth sign-in: send its credentials with "
        "-H 'Authorization: ...'"
    )
    assert "login" not in run.err
    ok = run_cli(api_key_url, "-H", f"Authorization: Bearer {KEY}", "call", "add", "a=1", "b=2")
    assert (ok.code, ok.out) == (0, "3\n"), ok.err


@pytest.mark.parametrize(("headers", "status"), [(None, 401), ({"Authorization": "Bearer x"}, 403)])
def test_the_library_keeps_the_status_of_an_auth_refusal_with_a_json_rpc_body(
    api_key_url, headers, status
):
    with pytest.raises(HttpError) as caught:
        connect(api_key_url, headers=headers, timeout=30)
    assert caught.value.status == status
    assert json.loads(caught.value.body)["error"]["code"] == -32001


# -- the target at the end of the line -------------------------------------------------------


def test_a_url_at_the_end_of_the_line_is_the_target(sdk_url):
    # Before: "no server given" (call), "unrecognized arguments" (read).
    call = run_cli("call", "add", "a=2", "b=40", sdk_url)
    assert (call.code, call.out) == (0, "42\n"), call.err
    read = run_cli("read", "greeting://ada", sdk_url)
    assert (read.code, read.out) == (0, "Hello, ada!\n"), read.err
    prompt = run_cli("prompt", "review", "code=x", sdk_url, "--json")
    assert prompt.code == 0, prompt.err
    complete = run_cli("complete", "prompt:review", "language", "p", sdk_url)
    assert (complete.code, complete.out) == (0, "python\nperl\nphp\n"), complete.err


def test_a_url_that_is_the_resource_stays_the_resource(sdk_url):
    # `read URI` with a URI that is a URL, and the target given another way: nothing is taken
    run = run_cli("--url", sdk_url, "read", "https://example.com/page")
    assert run.code == 3, run.err
    assert "https://example.com/page" in run.err


# -- a closed output pipe --------------------------------------------------------------------


def cli_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess[bytes]:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written: every write fails
    try:
        return subprocess.run(
            [sys.executable, "-m", "mcp_sync", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=60,
        )
    finally:
        os.close(write)


def test_a_closed_output_pipe_exits_0_quietly_every_time(everything):
    # Before: "mcp-sync: connection failed: [Errno 32] Broken pipe", exit 4.
    for argv in (["--json", "tools"], ["tools"], ["--json", "resources"]):
        done = cli_into_closed_pipe(*argv, "--protocol", "handshake", "--", *everything)
        assert (done.returncode, done.stderr) == (0, b""), (argv, done.stderr)
    line = shlex.join([sys.executable, "-m", "mcp_sync", "--json", "tools", "--", *everything])
    for _ in range(3):  # as a shell runs it: head may close before or after the last write
        done = subprocess.run(
            ["bash", "-c", f'{line} | head -2; exit "${{PIPESTATUS[0]}}"'],
            capture_output=True,
            timeout=60,
        )
        assert (done.returncode, done.stderr) == (0, b""), done.stderr
        assert done.stdout.count(b"\n") == 2


# -- a server's own failure ------------------------------------------------------------------


def test_a_servers_own_failure_is_named_so_not_a_protocol_error(sdk_url):
    # Before: "mcp-sync: protocol error: Unknown resource: nothing://here (JSON-RPC error ...)"
    run = run_cli(sdk_url, "read", "nothing://here")
    assert run.code == 3
    assert run.err.startswith("mcp-sync: the server reported an error: "), run.err
    assert "protocol error" not in run.err
