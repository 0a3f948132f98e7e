"""``import mcp_sync`` loads only what a stdio client needs: no networking and no HTML.

A stdio-only program pays for every module the package imports on load (``make bench``'s
import row); the HTTP transports, OAuth and the HTML rendering import theirs when first used.
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
# against the ~760M of `import mcp_sync`; the rest are the HTTP stack.
NOT_ON_IMPORT = ("socket", "ssl", "http", "html", "requests", "urllib3", "sseclient")


def test_import_mcp_sync_loads_no_networking_and_no_html() -> None:
    code = CHECK.format(names=NOT_ON_IMPORT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


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
