"""Helpers of the integration tests: the real servers they run against."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.support import PYTHON, SERVERS

SDK_SERVER = [PYTHON, str(SERVERS / "sdk_server.py"), "stdio"]

# fastmcp and langchain-core need Python 3.11 (their tests are skipped on 3.10, with this reason)
needs_py311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="the library under test needs Python >= 3.11"
)


def load_server(filename: str) -> ModuleType:
    """Import one of tests/servers/*.py as a module (to serve its server object in-process)."""
    name = f"inprocess_{Path(filename).stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SERVERS / filename)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


# MCP Apps visibility, SEP-2200 results, a stalling tool, progress, resources, a prompt
APPS_SERVER = [PYTHON, str(SERVERS / "apps_server.py"), "stdio"]
