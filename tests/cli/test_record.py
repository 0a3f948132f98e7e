"""``mcp-sync record`` and ``--record FILE``: what the CLI did, recorded against a real server
(the official SDK server), replayable with the server gone."""

from __future__ import annotations

import json

import mcp_sync
from mcp_sync import Cassette
from tests.helpers.cli_support import run_cli
from tests.helpers.support import PYTHON, SERVERS, HttpServer, free_port

SDK = [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]


def test_record_verb_writes_a_look_at_the_server(tmp_path):
    path = tmp_path / "session.jsonl"
    run = run_cli("record", "-o", str(path), "--", *SDK)
    assert run.code == 0, run.err
    summary = json.loads(run.out)
    assert summary["recorded"] == str(path) and summary["tools"] >= 5 and summary["prompts"] >= 1
    methods = [
        json.loads(line)["message"].get("method") for line in path.read_text().splitlines()[1:]
    ]
    assert {"tools/list", "resources/list", "prompts/list"} <= set(methods)
    # the recording replays: the report's reader needs no server
    with mcp_sync.connect(Cassette(path, mode="none")) as client:
        assert "add" in [tool.name for tool in client.list_tools()]


def test_record_option_works_with_any_verb_and_replays(tmp_path):
    path = tmp_path / "call.jsonl"
    run = run_cli("--record", str(path), "call", "add", "a=1", "b=2", "--", *SDK)
    assert run.code == 0, run.err
    assert '"arguments":{"a":1,"b":2}' in path.read_text()
    with mcp_sync.connect(Cassette(path, mode="none")) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_record_over_http_redacts_the_header_token(tmp_path):
    path = tmp_path / "http.jsonl"
    token = "cli-secret-token-987654321"
    port = free_port()
    argv = [PYTHON, str(SERVERS / "sdk_server.py"), "streamable-http", str(port)]
    with HttpServer(argv, port) as server:
        run = run_cli(
            "record", "-o", str(path), "-H", f"Authorization: Bearer {token}", server.url()
        )
    assert run.code == 0, run.err
    text = path.read_text()
    assert token not in text
    assert json.loads(text.splitlines()[0])["headers"] == {"Authorization": "[redacted]"}


def test_record_verb_needs_its_output(tmp_path):
    run = run_cli("record", "--", *SDK)
    assert run.code == 2 and "-o" in run.err
