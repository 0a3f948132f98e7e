"""The conformance-suite client: a user of mcp_sync's public API, nothing else.

`npx conformance client --command "python tests/conformance/client.py" --scenario NAME` starts
a test server for the scenario, sets MCP_CONFORMANCE_SCENARIO and runs this program with the
server's URL as its last argument. Exit status 0 means the client did what the scenario asks.
"""

from __future__ import annotations

import logging
import os
import sys

import mcp_sync
from mcp_sync import ElicitRequestFormParams, ElicitResult


def accept_with_defaults(params: ElicitRequestFormParams) -> ElicitResult:
    # Accept without values: the client fills the schema's defaults in (SEP-1034).
    return ElicitResult(action="accept", content={})


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    client = mcp_sync.Client("mcp-sync-conformance", "0.1.0", request_timeout=20)
    client.on_elicitation(accept_with_defaults)
    with client.connect(mcp_sync.StreamableHttpTransport(url)):
        tools = client.list_tools() if client.server_capabilities.tools is not None else []
        if scenario == "tools_call":
            result = client.call_tool("add_numbers", {"a": 5, "b": 3})
            print(result.text)
        elif scenario == "elicitation-sep1034-client-defaults":
            print(client.call_tool("test_client_elicitation_defaults", {}).text)
        elif scenario == "sse-retry":
            print(client.call_tool("test_reconnection", {}).text)
        else:
            print(f"{scenario}: listed {len(tools)} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
