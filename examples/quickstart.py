"""The main job: spawn a real MCP server over stdio, list its tools, call one, close.

Run it with `make demo` (which installs `mcp-server-time` into the project's venv first), or
`python examples/quickstart.py` in an environment that has `mcp-server-time` on PATH.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import mcp_sync

# The venv's bin/ holds mcp-server-time when run through `make demo`.
SERVER = os.path.join(os.path.dirname(sys.executable), "mcp-server-time")


def main() -> None:
    command = [SERVER] if os.path.exists(SERVER) else ["mcp-server-time"]
    with mcp_sync.connect(command, request_timeout=20) as client:
        info = client.server_info
        print(f"server: {info.name} {info.version} (protocol {client.protocol_version})")
        print("tools:")
        tools = client.list_tools()
        width = max(len(tool.name) for tool in tools)
        for tool in tools:
            summary = textwrap.shorten(tool.description or "", 70)
            print(f"  {tool.name:<{width}}  {summary}")
        arguments = {"timezone": "Europe/Paris"}
        result = client.call_tool("get_current_time", arguments, timeout=10)
        print(f"get_current_time({arguments}) ->")
        if result.structured_content is not None:
            print(json.dumps(result.structured_content, indent=2))
        else:
            print(result.text)
        if result.is_error:
            raise SystemExit("the tool reported an error")


if __name__ == "__main__":
    main()
