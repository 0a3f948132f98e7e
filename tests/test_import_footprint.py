"""``import mcp_sync`` loads only what a stdio client needs: no networking, no HTML, and none
of the features a plain client does not use.

A stdio-only program pays for every module the package imports on load (``make bench``'s
import row); the HTTP transports, OAuth, the HTML rendering and the features below import
theirs when first used.
"""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
import mcp_sync
print(sorted(m for m in sys.modules if m.split(".")[0] in {names!r}))
"""

# socket (16M instructions to import: its enums) and html (8.6M: its entity table), measured
# against the ~760M of `import mcp_sync` then; the rest are the HTTP stack.
NOT_ON_IMPORT = ("socket", "ssl", "http", "html", "requests", "urllib3", "sseclient")


def test_import_mcp_sync_loads_no_networking_and_no_html() -> None:
    code = CHECK.format(names=NOT_ON_IMPORT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# What `import mcp_sync` loaded on 2026-12-03 that a client needs only for a feature it is
# given (instructions to import, of the ~850M of `import mcp_sync` then): the features'
# modules load where first used (a lazy top-level name, `client.functions`, `sandbox=`,
# `config=`, a tool that changed, an error pickled), and a plain stdio client never loads
# them. Issue 43's import row went from 0.25x to 0.37x of the SDK's as they piled up.
FEATURES = (
    "mcp_sync.cassette",  # 7M: Cassette
    "mcp_sync.config",  # 7M: connect_all, connect(config=)
    "mcp_sync.group",  # 3M: ClientGroup, and the breaker's 8M
    "mcp_sync._connection.breaker",
    "mcp_sync.shared",  # 2.5M: shared_client
    "mcp_sync.llm",  # 2M: clean_tool, to_llm_*
    "mcp_sync.functions",  # 2M: client.functions, and the schema-to-type code's 11M
    "mcp_sync._presentation.schema_types",
    "mcp_sync._presentation.tool_view",
    "mcp_sync._presentation.repr",  # 5M: tool_parameters, notebooks' tables
    "mcp_sync.transports.sandbox",  # 6.5M: sandbox=
    "shutil",  # 8M with bz2 and lzma: the sandbox's `which`
    "pickle",  # 6M: an error pickled with a cause that cannot be
    "difflib",  # 4M: the diff of a pinned tool that changed
)

USE = """
import sys
import mcp_sync
on_import = sorted(m for m in {features!r} if m in sys.modules)
if sys.argv[1] == "used":
    with mcp_sync.connect([sys.executable, {server!r}, "stdio"], pin=False) as client:
        client.call_tool(client.list_tools()[0].name, {{"a": 1, "b": 2}})
# (pydantic's first validator loads shutil itself, looking for its plugins)
print(on_import, sorted(m for m in {features!r} if m in sys.modules and "mcp_sync" in m))
"""


def test_a_stdio_client_loads_no_feature_it_is_not_given() -> None:
    """None of :data:`FEATURES` on import, nor ours through a connect, a listing and a call."""
    from pathlib import Path

    server = str(Path(__file__).parent / "servers" / "sdk_server.py")
    code = USE.format(features=FEATURES, server=server)
    out = subprocess.run(
        [sys.executable, "-c", code, "used"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] []"


LAZY = """
import sys
import mcp_sync
modules = [m for m in ("config", "cassette", "pins", "terminal", "auth", "testing", "types")
           if getattr(mcp_sync, m).__name__ != "mcp_sync." + m]
names = [name for name in mcp_sync.__all__ if getattr(mcp_sync, name, None) is None]
print(modules, names, hasattr(mcp_sync, "no_such_name"))
"""


def test_every_public_name_and_module_is_reached_from_the_package() -> None:
    """What loads on first use is still there: each name of ``__all__``, and a public module as
    an attribute of the package (``mcp_sync.config.load(...)`` after ``import mcp_sync``)."""
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] [] False"


NOISY_SERVER = """
import runpy, sys
print("Starting server... (not JSON)", flush=True)  # what many servers print on stdout
sys.argv = ["sdk_server.py", "stdio"]
runpy.run_path({server!r}, run_name="__main__")
"""

CONNECT = """
import logging, sys
import mcp_sync
if sys.argv[1] == "configured":
    logging.basicConfig(format="LOGGED %(name)s: %(message)s")
with mcp_sync.connect([sys.executable, "-c", {noisy!r}]) as client:
    print(len(client.list_tools()))
"""


def test_library_warnings_reach_stderr_only_where_the_program_configured_logging() -> None:
    """The official SDK server behind a line of noise on stdout: the client reports the line
    through its logger. A program that configured no logging printed it raw through Python's
    last-resort handler (``mcp_sync: invalid JSON (...)``); the package's NullHandler keeps it
    quiet, and a program that configures logging still gets it."""
    from pathlib import Path

    server = str(Path(__file__).parent / "servers" / "sdk_server.py")
    code = CONNECT.format(noisy=NOISY_SERVER.format(server=server))
    for mode, shown in (("unconfigured", False), ("configured", True)):
        out = subprocess.run(
            [sys.executable, "-c", code, mode], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        assert int(out.stdout) > 0  # connected and listed
        assert ("not JSON" in out.stderr) is shown, (mode, out.stderr)
        assert ("LOGGED mcp_sync" in out.stderr) is shown, (mode, out.stderr)
