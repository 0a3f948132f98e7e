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
