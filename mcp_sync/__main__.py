"""``python -m mcp_sync``: the ``mcp-sync`` command line (see :mod:`mcp_sync.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
