"""The mcp-sync CLI against real servers: output, exit codes, config and URL targets."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.helpers.cli_support import run_cli

pytestmark = pytest.mark.timeout(60)


def test_tools_table_lists_names_parameters_and_descriptions(sdk):
    run = run_cli("tools", "--", *sdk)
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert lines[0].split() == ["TOOL", "PARAMETERS", "(*", "required)", "DESCRIPTION"]
    add = next(line for line in lines if line.startswith("add "))
    assert add.split() == ["add", "a*:", "integer", "Add", "two", "integers."]
    # columns are aligned: every row's description starts under DESCRIPTION
    column = lines[0].index("DESCRIPTION")
    assert add.index("Add two") == column
    assert any(line.split()[:1] == ["b*:"] for line in lines)  # second parameter, own line


def test_tools_json_is_the_wire_form(time_server):
    run = run_cli("--json", "tools", "--", *time_server)
    assert run.code == 0, run.err
    tools = json.loads(run.out)
    assert {t["name"] for t in tools} == {"get_current_time", "convert_time"}
    assert tools[0]["inputSchema"]["type"] == "object"


def test_call_converts_arguments_by_schema_and_prints_the_result(sdk_url):
    sdk = [sdk_url]
    run = run_cli("call", "add", "a=2", "b=40", "--", *sdk)
    assert (run.code, run.out) == (0, "42\n"), run.err
    run = run_cli("call", "weather", "--json", '{"city": "Paris"}', "--", *sdk)
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"city": "Paris", "temperature": 21.5, "conditions": "sunny"}
    run = run_cli("call", "weather", "city=Oslo", "--json", "--", *sdk)
    assert json.loads(run.out)["structuredContent"]["city"] == "Oslo"


def test_exit_codes(sdk_url, tmp_path):
    sdk = [sdk_url]
    tool_error = run_cli("call", "fail", "message=boom", "--", *sdk)
    assert tool_error.code == 1 and tool_error.err == "tool error: Error executing tool fail\n"
    bad_arg = run_cli("call", "add", "a=2", "b=two", "--", *sdk)
    assert bad_arg.code == 2
    assert bad_arg.err == "mcp-sync: error: add: argument 'b': expected an integer, got 'two'\n"
    unknown = run_cli("call", "nope", "--", *sdk)
    assert unknown.code == 2 and "has no tool 'nope' (tools: add, " in unknown.err
    protocol = run_cli("read", "nothing://here", "--", *sdk)
    assert protocol.code == 3
    assert protocol.err.startswith("mcp-sync: the server reported an error:")
    missing = run_cli("tools", "--", str(tmp_path / "no-such-server"))
    assert missing.code == 4 and missing.err.startswith("mcp-sync: connection failed:")
    crashed = run_cli(
        "tools",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('bad config\\n'); sys.exit(3)",
    )
    assert crashed.code == 4 and "bad config" in crashed.err
    refused = run_cli("ping", "http://127.0.0.1:9/mcp")
    assert refused.code == 4
    usage = run_cli("tools")
    assert usage.code == 2 and "no server given" in usage.err


def test_timeout_exits_5(everything):
    run = run_cli(
        "--timeout",
        "0.5",
        "call",
        "trigger-long-running-operation",
        "duration=20",
        "steps=1",
        "--",
        *everything,
    )
    assert run.code == 5, run.err
    assert run.err.startswith("mcp-sync: timeout:")


def test_prompts_prompt_resources_templates_read_complete(sdk_url):
    sdk = [sdk_url]
    prompts = run_cli("prompts", "--", *sdk)
    assert prompts.code == 0 and prompts.out.splitlines()[1].split() == [
        "review",
        "code*",
        "Review",
        "some",
        "code.",
    ]
    prompt = run_cli("prompt", "review", "code=print(1)", "language=007", "--", *sdk)
    assert prompt.out == "# Review some code.\n[user]\nPlease review this 007 code:\nprint(1)\n"
    resources = run_cli("resources", "--", *sdk)
    assert resources.out.splitlines()[1].split()[:3] == [
        "config://app",
        "app_config",
        "application/json",
    ]
    templates = run_cli("templates", "--", *sdk)
    assert "greeting://{name}" in templates.out
    read = run_cli("read", "greeting://ada", "--", *sdk)
    assert read.out == "Hello, ada!\n"
    complete = run_cli("complete", "prompt:review", "language", "p", "--", *sdk)
    assert complete.out.split() == ["python", "perl", "php"]
    bad_ref = run_cli("complete", "review", "language", "--", *sdk)
    assert bad_ref.code == 2


def test_info_and_ping(sdk_url):
    sdk = [sdk_url]
    info = run_cli("info", "--protocol", "handshake", "--", *sdk)
    assert info.code == 0, info.err
    assert info.out.splitlines()[0].split() == ["server", "sdk-fixture"]
    assert "protocol      2025-11-25 (handshake era)" in info.out
    # the server says {"listChanged": false}: a false flag is not shown as set (issue 35)
    assert "tools" in info.out and "listChanged" not in info.out
    assert info.out.endswith("instructions:\n  A fixture server for mcp_sync's tests.\n")
    data = json.loads(run_cli("info", "--json", "--", *sdk).out)
    assert data["server"]["name"] == "sdk-fixture" and data["era"] in ("handshake", "stateless")
    ping = run_cli("ping", "--", *sdk)
    assert ping.code == 0 and ping.out.startswith("pong (")


def test_verbose_shows_server_logs_progress_and_stderr(sdk_url):
    for protocol in ("handshake", "auto"):
        run = run_cli("-v", "--protocol", protocol, "call", "slow", "steps=2", "--", sdk_url)
        assert run.code == 0 and run.out == "done after 2 steps\n"
        assert "[server info] step 1 of 2\n" in run.err
        assert "progress 1/2 step 1\n" in run.err
    noisy = run_cli(
        "-v",
        "ping",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('hello from stderr\\n'); sys.stderr.flush(); sys.exit(1)",
    )
    assert "[server stderr] hello from stderr\n" in noisy.err
    quiet = run_cli("call", "slow", "steps=2", "--", sdk_url)
    assert quiet.err == ""


def test_config_target(tmp_path, time_server, sdk_url):
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {"command": time_server[0]},
                    "sdk": {"url": sdk_url},
                }
            }
        )
    )
    run = run_cli(
        "--config", str(config), "--server", "time", "call", "get_current_time", "timezone=UTC"
    )
    assert run.code == 0, run.err
    assert json.loads(run.out)["timezone"] == "UTC"
    ambiguous = run_cli("--config", str(config), "tools")
    assert (
        ambiguous.code == 2
        and "has 2 servers: choose one with --server (time, sdk)" in ambiguous.err
    )
    unknown = run_cli("tools", "--config", str(config), "--server", "nope")
    assert unknown.code == 2 and "no server named 'nope'" in unknown.err
    remote = run_cli("--config", str(config), "--server", "sdk", "call", "add", "a=1", "b=1")
    assert remote.out == "2\n", remote.err


def test_url_target(sdk_url):
    run = run_cli(sdk_url, "call", "add", "a=1", "b=2")
    assert (run.code, run.out) == (0, "3\n"), run.err
    run = run_cli("tools", "--url", sdk_url, "--json")
    assert "weather" in {t["name"] for t in json.loads(run.out)}


def test_read_summarises_a_binary_resource(everything):
    uri = "demo://resource/dynamic/blob/3"
    run = run_cli("read", uri, "--", *everything)
    assert run.code == 0, run.err
    assert re.fullmatch(rf"\[binary resource {uri} \(text/plain, \d+ bytes\)\]\n", run.out), run.out
