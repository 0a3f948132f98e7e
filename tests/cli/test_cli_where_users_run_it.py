"""The CLI against the servers users have (issue 35): pydantic schemas (``$ref``, ``$defs``,
``allOf``), capability flags, structured results, arrays, help, and small hints.

The servers are real: ``tests/servers/sdk_cli_server.py`` (official Python SDK: MCPServer with
pydantic Enum and BaseModel parameters, and a low-level Server without templates),
``sdk_server.py`` and the reference "everything" server.
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from mcp_sync.cli import main
from mcp_sync.cli._arguments import ArgumentError, parse_arguments
from tests.helpers.cli_support import run_cli
from tests.helpers.support import SERVERS

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def typed() -> list[str]:
    return [sys.executable, str(SERVERS / "sdk_cli_server.py")]


@pytest.fixture
def lowlevel() -> list[str]:
    return [sys.executable, str(SERVERS / "sdk_cli_server.py"), "lowlevel"]


# -- $ref / $defs / allOf -----------------------------------------------------------------


def test_a_string_enum_behind_a_ref_is_sent_as_a_string(typed):
    run = run_cli("call", "paint", "color=red", "code=10", "--", *typed)
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"color": "red", "code": "10", "shade": 3}


def test_a_wrong_value_behind_a_ref_is_caught_before_sending(typed):
    run = run_cli("call", "order", "item=pencil", "--", *typed)
    assert run.code == 2, (run.out, run.err)
    assert "argument 'item': expected a JSON object" in run.err
    enum = run_cli("call", "paint", "color=blue", "code=10", "--", *typed)
    assert enum.code == 2, (enum.out, enum.err)
    assert "argument 'color': expected one of \"red\", \"green\", got 'blue'" in enum.err
    ok = run_cli("call", "order", 'item={"name": "pen"}', 'extras=[{"name": "ink"}]', "--", *typed)
    assert ok.code == 0, ok.err
    assert json.loads(ok.out)["extras"] == [{"name": "ink", "qty": 1}]


def test_an_optional_enum_is_checked_too(typed):
    """pydantic writes ``Color | None`` as ``anyOf: [{$ref}, {type: null}]``."""
    run = run_cli("call", "paint", "color=red", "code=10", "trim=blue", "--", *typed)
    assert run.code == 2, (run.out, run.err)
    assert "argument 'trim': expected one of \"red\", \"green\" or null, got 'blue'" in run.err
    ok = run_cli("call", "paint", "color=red", "code=20", "trim=green", "--", *typed)
    assert ok.code == 0, ok.err
    assert json.loads(ok.out) == {"color": "red", "code": "20", "shade": 3, "trim": "green"}


def test_allof_and_definitions_refs_type_a_parameter():
    schema = {
        "type": "object",
        "definitions": {"Level": {"type": "integer"}, "Mode": {"enum": ["1", "2"]}},
        "properties": {
            "level": {"allOf": [{"$ref": "#/definitions/Level"}], "description": "how loud"},
            "mode": {"allOf": [{"$ref": "#/definitions/Mode"}]},
        },
    }
    assert parse_arguments(["level=7", "mode=1"], schema) == {"level": 7, "mode": "1"}
    with pytest.raises(ArgumentError, match="'level': expected an integer"):
        parse_arguments(["level=loud"], schema)


def test_hostile_schemas_are_resolved_within_bounds():
    """Cycles, a long chain, a huge fan-out and a remote ref: typing gives up (the value is
    read as JSON, else text) in bounded time and never fetches anything."""
    chain = {f"D{i}": {"$ref": f"#/$defs/D{i + 1}"} for i in range(10_000)}
    chain["D10000"] = {"type": "string"}
    wide = {"allOf": [{"$ref": "#/$defs/Wide"}] * 50}
    schema = {
        "type": "object",
        "$defs": {"Loop": {"$ref": "#/$defs/Loop"}, "Wide": wide, **chain},
        "properties": {
            "loop": {"$ref": "#/$defs/Loop"},
            "chain": {"$ref": "#/$defs/D0"},
            "wide": {"$ref": "#/$defs/Wide"},
            "remote": {"$ref": "http://127.0.0.1:9/schema.json#/Remote"},
            "dangling": {"$ref": "#/$defs/Nowhere"},
            "huge": {"anyOf": [{"$ref": "#/$defs/Wide"}] * 100_000},
        },
    }
    started = time.monotonic()
    words = ["loop=1", "chain=2", "wide=3", "remote=4", "dangling=x", "huge=5"]
    assert parse_arguments(words, schema) == {
        "loop": 1,
        "chain": 2,
        "wide": 3,
        "remote": 4,
        "dangling": "x",
        "huge": 5,
    }
    assert time.monotonic() - started < 5


# -- info --------------------------------------------------------------------------------


def test_info_shows_only_the_capability_flags_that_are_set(sdk, everything):
    run = run_cli("--protocol", "handshake", "info", "--", *sdk)
    assert run.code == 0, run.err
    line = next(line for line in run.out.splitlines() if "resources" in line)
    # the SDK server says {"subscribe": false, "listChanged": false}
    assert line.split()[-1] == "resources", run.out
    assert "subscribe" not in run.out and "listChanged" not in run.out
    full = run_cli("--protocol", "handshake", "--json", "info", "--", *everything)
    assert full.code == 0, full.err
    resources = json.loads(full.out)["capabilities"]["resources"]
    shown = run_cli("--protocol", "handshake", "info", "--", *everything)
    set_flags = [k for k, v in resources.items() if v]
    assert set_flags, resources
    for flag in set_flags:
        assert flag in shown.out, shown.out


# -- results -----------------------------------------------------------------------------


def test_structured_content_the_text_leaves_out_is_shown(typed, sdk):
    run = run_cli("call", "read_bytes", "--", *typed)
    assert run.code == 0, run.err
    assert run.out.startswith("4 bytes at 0/596\n"), run.out
    assert "structured content:" in run.out
    assert '"total": 596' in run.out and '"data": "JVBE"' in run.out
    # a text that already is the structured content (what the SDK writes) is not repeated
    weather = run_cli("call", "weather", "city=Paris", "--", *sdk)
    assert weather.code == 0, weather.err
    assert weather.out.count('"city"') == 1 and "structured content" not in weather.out


def test_structured_content_shown_after_the_text_is_escaped(typed):
    run = run_cli("call", "read_bytes", "data=\x1b]0;owned\x07\u202e", "--", *typed)
    assert run.code == 0, run.err
    assert "\x1b" not in run.out and "\x07" not in run.out and "\u202e" not in run.out
    assert '"data": "\\u001b]0;owned\\u0007\\u202e"' in run.out, run.out


# -- arrays ------------------------------------------------------------------------------


def test_a_bare_value_for_an_array_is_a_one_item_list(typed):
    run = run_cli("call", "files", "paths=a.txt", "counts=3", "--", *typed)
    assert run.code == 0, run.err
    assert json.loads(run.out) == {"paths": ["a.txt"], "counts": [3]}
    both = run_cli("call", "files", 'paths=["a", "b"]', "--", *typed)
    assert both.code == 0 and json.loads(both.out)["paths"] == ["a", "b"], both.err


def test_a_bare_value_that_cannot_be_an_item_names_the_json_form(typed):
    run = run_cli("call", "files", "paths=a", "counts=three", "--", *typed)
    assert run.code == 2, (run.out, run.err)
    assert "argument 'counts'" in run.err and "counts='[...]'" in run.err, run.err


# -- help and listings -------------------------------------------------------------------


def _help(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_each_verbs_help_shows_the_targets_and_its_positionals(capsys):
    text = _help(capsys, "call", "--help")
    assert "-- COMMAND" in text and "URL" in text and "--config FILE" in text
    assert "the tool's name" in text and "converted to the type" in text
    read = _help(capsys, "read", "--help")
    assert "-- COMMAND" in read and "the resource's URI" in read


def test_login_help_shows_the_url_and_only_options_that_apply(capsys):
    text = _help(capsys, "login", "--help")
    assert "login URL" in text
    for useless in ("--protocol", "--ignore-capabilities", "--json", "--header"):
        assert useless not in text, useless
    assert "--no-browser" in text and "--timeout" in text


def test_the_tools_table_shows_enum_values_and_defaults(typed):
    run = run_cli("tools", "--", *typed)
    assert run.code == 0, run.err
    assert 'color*: "red" | "green"' in run.out, run.out
    assert "shade: integer = 3" in run.out, run.out
    assert "item*: Item" in run.out, run.out


# -- small ones --------------------------------------------------------------------------


def test_a_url_without_its_scheme_gets_a_hint():
    # what a user types, never dialled: each is a usage error before any connection
    run = run_cli("127.0.0.1:8000/mcp", "tools")
    assert run.code == 2
    assert "http://127.0.0.1:8000/mcp" in run.err, run.err
    assert "invalid choice" not in run.err
    local = run_cli("tools", "localhost:3000")
    assert local.code == 2 and "http://localhost:3000" in local.err, local.err


def test_templates_refused_by_a_server_that_advertises_resources_says_so(lowlevel):
    run = run_cli("templates", "--", *lowlevel)
    assert run.code == 3, (run.out, run.err)
    assert "advertises the 'resources' capability" in run.err, run.err
    assert "resources/templates/list" in run.err and "method not found" in run.err.lower()
    resources = run_cli("resources", "--", *lowlevel)
    assert resources.code == 0 and "memo://one" in resources.out, resources.err


# -- VS Code configs ---------------------------------------------------------------------


def test_a_vscode_config_with_an_input_and_comments(tmp_path):
    folder = tmp_path / "project" / ".vscode"
    folder.mkdir(parents=True)
    config = folder / "mcp.json"
    config.write_text(
        """{
  "inputs": [{"type": "promptString", "id": "region"}],
  // the fixture reports its environment
  "servers": {
    "env": {
      "command": "PYTHON",
      "args": ["${workspaceFolder}/../env_server.py"],
      "env": {"REGION": "${input:region}"},
    },
  },
}""".replace("PYTHON", sys.executable)
    )
    (tmp_path / "env_server.py").write_text((SERVERS / "env_server.py").read_text())
    refused = run_cli("--config", str(config), "call", "getenv", "name=REGION")
    assert refused.code == 2, (refused.out, refused.err)
    assert "${input:region}" in refused.err and "--input region=VALUE" in refused.err
    run = run_cli(
        "--config", str(config), "--input", "region=eu-west", "call", "getenv", "name=REGION"
    )
    assert run.code == 0, run.err
    assert run.out == "eu-west\n"
