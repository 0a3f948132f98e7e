"""The CLI as a new user tries it (issue 22): option order, argument checks before sending,
the probe wait, a stdio command that is really an HTTP server, hints that fit a shell."""

from __future__ import annotations

import json
import sys

import pytest

from mcp_sync.cli import connect, parse_command_line
from tests.helpers.cli_support import run_cli

pytestmark = pytest.mark.timeout(90)


def test_only_the_selected_servers_variables_are_resolved(tmp_path, time_server, monkeypatch):
    monkeypatch.delenv("MCP_SYNC_TEST_TEAM", raising=False)
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": time_server[0]},
                    "team": {
                        "url": "https://example.com/mcp",
                        "headers": {"X-Team": "${MCP_SYNC_TEST_TEAM}"},
                    },
                }
            }
        )
    )
    run = run_cli("--config", str(config), "--server", "time", "--json", "tools")
    assert run.code == 0, run.err
    assert "get_current_time" in {tool["name"] for tool in json.loads(run.out)}
    team = run_cli("--config", str(config), "--server", "team", "tools")
    assert team.code == 2
    assert "server 'team': ${MCP_SYNC_TEST_TEAM} in headers.X-Team is not set" in team.err


def test_global_options_may_come_before_a_url(sdk_url):
    tools = run_cli("--json", sdk_url, "tools")
    assert tools.code == 0, tools.err
    assert "add" in {tool["name"] for tool in json.loads(tools.out)}
    verbose = run_cli("-v", sdk_url, "ping")
    assert verbose.code == 0 and verbose.out.startswith("pong ("), verbose.err
    timeout = run_cli("--timeout", "5", sdk_url, "ping")
    assert timeout.code == 0 and timeout.out.startswith("pong ("), timeout.err
    legacy = run_cli("--protocol", "handshake", sdk_url, "info")
    assert legacy.code == 0 and "(handshake era)" in legacy.out, legacy.err
    after = run_cli("tools", sdk_url, "--json")
    assert after.code == 0 and json.loads(after.out), after.err


def test_options_after_a_url_option_value_are_not_taken_for_the_target(sdk_url):
    args = parse_command_line(["--url", sdk_url, "--json", "tools"])
    assert (args.url, args.json, args.verb) == (sdk_url, True, "tools")
    args = parse_command_line(["--timeout", "5", "--server", "ping", "--config", "c.json", "tools"])
    assert (args.server, args.verb, args.timeout) == ("ping", "tools", 5.0)


def test_words_after_arguments_json_override_its_keys(sdk_url):
    run = run_cli(sdk_url, "call", "add", "--arguments", '{"a": 1, "b": 5}', "b=2")
    assert (run.code, run.out) == (0, "3\n"), run.err
    run = run_cli(
        sdk_url, "call", "add", "--json", '{"a": 1, "b": 5}', "b=40", "--timeout", "10", "a=2"
    )
    assert (run.code, run.out) == (0, "42\n"), run.err
    run = run_cli(sdk_url, "prompt", "review", "--arguments", '{"code": "x"}', "language=go")
    assert run.code == 0 and "Please review this go code:\nx\n" in run.out, run.err


def test_unknown_prompt_is_a_usage_error(sdk_url):
    run = run_cli(sdk_url, "prompt", "nope")
    assert run.code == 2, run.err
    assert run.err == "mcp-sync: error: the server has no prompt 'nope' (prompts: review)\n"


def test_required_prompt_arguments_are_checked_before_sending(sdk_url):
    run = run_cli(sdk_url, "-v", "prompt", "review", "language=go")
    assert run.code == 2
    assert "mcp-sync: error: review: missing required argument: code\n" in run.err
    # a typo is warned about and sent: this server refuses it, others ignore it
    unknown = run_cli(sdk_url, "prompt", "review", "code=x", "langauge=go")
    assert unknown.err.startswith(
        "mcp-sync: warning: review: unknown argument 'langauge' (arguments: code, language); "
        "sent anyway\nmcp-sync: the server reported an error: "
    ), unknown.err


def test_unknown_tool_parameters_are_warned_about(sdk_url):
    typo = run_cli(sdk_url, "call", "add", "a=1", "b=2", "bb=3")
    assert (typo.code, typo.out) == (0, "3\n"), typo.err
    assert typo.err == (
        "mcp-sync: warning: add: unknown argument 'bb' (parameters: a, b); sent anyway\n"
    )
    from_json = run_cli(sdk_url, "call", "add", "--arguments", '{"a": 1, "b": 2, "c": 3}')
    assert from_json.code == 0 and "unknown argument 'c'" in from_json.err


def test_the_probe_waits_the_documented_two_seconds(time_server):
    args = parse_command_line(["tools", "--", *time_server])
    client = connect(args, sys.stderr)
    try:
        assert client.probe_timeout == 2.0
    finally:
        client.close()
    args = parse_command_line(["--timeout", "20", "tools", "--", *time_server])
    client = connect(args, sys.stderr)
    try:
        assert (client.probe_timeout, client.request_timeout) == (2.0, 20.0)
    finally:
        client.close()


def test_a_stdio_command_that_is_an_http_server_fails_fast_saying_what_it_printed():
    # `python -m http.server` is a real HTTP server that announces its URL on stdout.
    server = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"]
    run = run_cli("tools", "--", *server)
    assert run.code == 4, run.err
    assert "the server printed on stdout: 'Serving HTTP on 127.0.0.1 port " in run.err
    assert "it looks like an HTTP server: connect to http://127.0.0.1:" in run.err
    assert "initialize timed out" not in run.err


def test_noise_on_stdout_is_shown_when_a_stdio_server_never_answers():
    silent = [
        sys.executable,
        "-u",
        "-c",
        "import sys, time; print('hello, not JSON'); sys.stdin.read()",
    ]
    run = run_cli("--timeout", "1", "ping", "--", *silent)
    assert run.code == 5, run.err
    assert "the server printed on stdout: 'hello, not JSON'" in run.err


def test_a_missing_capability_suggests_the_cli_flag(time_server):
    run = run_cli("complete", "prompt:x", "a", "--", *time_server)
    assert run.code == 3
    assert run.err == (
        "mcp-sync: protocol error: the server does not advertise the 'completions' capability "
        "needed by completion/complete (add --ignore-capabilities to send the request anyway)\n"
    )
    forced = run_cli("complete", "prompt:x", "a", "--ignore-capabilities", "--", *time_server)
    assert forced.code == 3
    assert forced.err.startswith("mcp-sync: the server reported an error: ")
    assert "capability" not in forced.err  # sent: the server itself refused
