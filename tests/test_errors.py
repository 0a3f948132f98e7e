"""One home for the exceptions: every error a library call can raise is defined in
``mcp_sync.errors`` (the OAuth client's in their own subtree, ``mcp_sync.oauth.errors``), is
listed in that module's tree and in docs/errors.md, and is still importable from where it used
to live."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import mcp_sync
import mcp_sync.errors
import mcp_sync.oauth.errors

ROOT = Path(__file__).resolve().parents[1]
HOMES = {"mcp_sync.errors", "mcp_sync.oauth.errors"}
# Control flow that never leaves the library: caught where raised and turned into something
# else (a typed McpError, a retry, an exit status of the command line).
INTERNAL = {
    "ArgumentError",  # the CLI's: becomes a UsageError
    "UsageError",  # the CLI's: becomes exit status 2 in its main()
    "OutputClosed",  # the CLI's: its output's reader left; becomes exit status 0 in its main()
    "Cancelled",  # the HTTP transport's worker pool: a request given up, never raised out
    "TooLarge",  # the HTTP transport's body limit: becomes a TransportError
    "PipeClosed",  # the stdio transports' pipe writer: becomes a ConnectionClosed
    "Reopen",  # the HTTP stream loop's: one more attempt under the Backoff policy
    "StreamGaveUp",  # the HTTP stream loop's: becomes a TransportError (raised or reported)
}
OPTIONAL = ("mcp_sync.integrations", "mcp_sync.oauth.redis_store", "mcp_sync.pytest_plugin")


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(mcp_sync.__path__, "mcp_sync."):
        if info.name.startswith(OPTIONAL) or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_exception_class_lives_in_the_errors_modules():
    strays = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, BaseException)):
                continue
            if value.__module__ != name or attr.startswith("_"):
                continue  # imported from elsewhere, or private to its module
            if attr not in INTERNAL and name not in HOMES:
                strays.append(f"{name}.{attr}")
    assert strays == []


@pytest.mark.parametrize("module", [mcp_sync.errors, mcp_sync.oauth.errors])
def test_the_tree_in_the_docstring_lists_every_error(module):
    tree = set(re.findall(r"^ {4}(?:[│ ]*[├└]── )?([A-Z]\w+)", module.__doc__ or "", re.MULTILINE))
    defined = {
        name
        for name in module.__all__
        if inspect.isclass(getattr(module, name))
        and issubclass(getattr(module, name), BaseException)
    }
    assert defined - tree == set()
    assert tree - defined <= {"OAuthError"}  # errors.py points at the OAuth subtree


def test_every_error_is_subclass_of_mcp_error_and_in_the_errors_page():
    page = (ROOT / "docs" / "errors.md").read_text()
    for module in (mcp_sync.errors, mcp_sync.oauth.errors):
        for name in module.__all__:
            error = getattr(module, name)
            assert issubclass(error, mcp_sync.McpError), name
            if module is mcp_sync.errors:
                assert re.search(rf"`{name}\b", page), f"docs/errors.md does not mention {name}"
    assert "`OAuthError`" in page


def test_moved_errors_are_still_importable_from_their_old_modules():
    from mcp_sync.cli import StdioServerError
    from mcp_sync.config import ConfigError, ServerConnectError
    from mcp_sync.protocol.jsonrpc import InvalidMessage
    from mcp_sync.protocol.validation import OutputValidationError

    assert ConfigError is mcp_sync.errors.ConfigError is mcp_sync.ConfigError
    assert ServerConnectError is mcp_sync.errors.ServerConnectError is mcp_sync.ServerConnectError
    assert OutputValidationError is mcp_sync.errors.OutputValidationError
    assert InvalidMessage is mcp_sync.errors.InvalidMessage
    assert StdioServerError is mcp_sync.errors.StdioServerError
    assert issubclass(ConfigError, ValueError)
    assert issubclass(InvalidMessage, mcp_sync.ProtocolError)


def test_a_bad_config_raises_the_documented_error(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"time": {"command": 7}}}')
    with pytest.raises(mcp_sync.ConfigError, match=r'server .time.: "command" must be a string'):
        mcp_sync.connect("time", config=path)
