"""VS Code's ``.vscode/mcp.json`` (issue 35): JSONC, ``${workspaceFolder}``, ``${userHome}``,
``${input:ID}`` and ``envFile``; what reaches the server is checked on a real stdio server
(``tests/servers/env_server.py``, official Python SDK)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync.config import ConfigError, load
from mcp_sync.redaction import Secret

pytestmark = pytest.mark.timeout(60)

ENV_SERVER = str(Path(__file__).resolve().parent / "servers" / "env_server.py")


def vscode(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "project" / ".vscode"
    folder.mkdir(parents=True)
    path = folder / "mcp.json"
    path.write_text(text)
    return path


def test_jsonc_comments_and_trailing_commas_are_read(tmp_path):
    path = vscode(
        tmp_path,
        """{
  // VS Code writes comments
  "servers": {
    /* a block comment */
    "env": {
      "type": "stdio",
      "command": "python",
      "args": ["http://example.com/a//b", "/* not a comment */", "x,]", "\\"q\\" // "],
    },
  },
}
""",
    )
    entry = load(path)["env"]
    assert entry.args == ("http://example.com/a//b", "/* not a comment */", "x,]", '"q" // ')


def test_a_jsonc_error_names_the_right_line(tmp_path):
    path = vscode(tmp_path, '{\n  // a comment\n  "servers": {"a": {"command": "x"},, }\n}\n')
    with pytest.raises(ConfigError, match=r"not valid JSON \(line 3, column"):
        load(path)


def test_workspace_folder_and_user_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    text = json.dumps(
        {
            "servers": {
                "s": {
                    "command": "python",
                    "args": ["${workspaceFolder}/server.py", "${userHome}/.cache"],
                    "cwd": "${workspaceFolder}",
                }
            }
        }
    )
    entry = load(vscode(tmp_path, text))["s"]
    project = str(tmp_path / "project")
    assert entry.args == (f"{project}/server.py", f"{tmp_path / 'home'}/.cache")
    assert entry.cwd == project
    # a config that is not .vscode/mcp.json: its own folder is the workspace
    plain = tmp_path / "other" / "mcp.json"
    plain.parent.mkdir()
    plain.write_text(text)
    assert load(plain)["s"].cwd == str(tmp_path / "other")


def test_an_input_is_refused_by_name_never_passed_literally(tmp_path):
    text = """{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "Key", "password": true}],
  "servers": {
    "s": {"command": "python", "env": {"API_KEY": "${input:api-key}"}},
    "other": {"command": "python"}
  }
}"""
    config = load(vscode(tmp_path, text))
    assert config["other"].command == "python"  # the other entry stays usable
    with pytest.raises(ConfigError) as caught:
        config["s"]
    message = str(caught.value)
    assert "server 's'" in message and "${input:api-key}" in message and "inputs=" in message
    given = load(vscode(tmp_path / "2", text), inputs={"api-key": "k-123"})["s"]
    assert given.env["API_KEY"] == "k-123" and isinstance(given.env["API_KEY"], Secret)


def test_env_file_reaches_the_server(tmp_path):
    path = vscode(
        tmp_path,
        json.dumps(
            {
                "servers": {
                    "env": {
                        "type": "stdio",
                        "command": sys.executable,
                        "args": [ENV_SERVER],
                        "envFile": "${workspaceFolder}/.env",
                        "env": {"B": "from env"},
                    }
                }
            }
        ),
    )
    (tmp_path / "project" / ".env").write_text(
        "# a comment\n"
        "A=plain\n"
        "B=overridden by env\n"
        "export C='single # kept'\n"
        'D="double\\nline"  # trailing comment\n'
        "E=value # comment\n"
        "\n"
    )
    with mcp_sync.connect("env", config=load(path)) as client:
        seen = {name: client.call_tool("getenv", {"name": name}).text for name in "ABCDE"}
    assert seen == {
        "A": "plain",
        "B": "from env",
        "C": "single # kept",
        "D": "double\nline",
        "E": "value",
    }


def test_a_missing_env_file_is_a_clear_error(tmp_path):
    path = vscode(
        tmp_path, json.dumps({"servers": {"s": {"command": "python", "envFile": "nope.env"}}})
    )
    with pytest.raises(ConfigError, match=r"server 's': cannot read envFile .*nope\.env"):
        load(path)["s"]


def test_a_bad_env_file_line_names_the_line(tmp_path):
    path = vscode(
        tmp_path, json.dumps({"servers": {"s": {"command": "python", "envFile": ".env"}}})
    )
    (tmp_path / "project" / ".env").write_text("A=1\nthis is not an assignment\n")
    with pytest.raises(ConfigError, match=r"\.env line 2: expected KEY=VALUE"):
        load(path)["s"]
