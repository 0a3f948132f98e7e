"""Bridges from mcp_sync to the libraries users already work with. Each module is optional:
importing it needs its library (a ``pip install mcp-sync-client[EXTRA]`` extra), importing
``mcp_sync`` never does.

- :mod:`~mcp_sync.integrations.mcp_types`: to and from the official SDK's ``mcp.types``.
- :mod:`~mcp_sync.integrations.inprocess`: ``connect()`` to an official SDK ``MCPServer`` (mcp
  1.x: ``FastMCP``) or a fastmcp ``FastMCP`` object in this process (the one place asyncio runs,
  on its own thread).
- :mod:`~mcp_sync.integrations.langchain`, :mod:`~mcp_sync.integrations.smolagents`,
  :mod:`~mcp_sync.integrations.llama_index`: an MCP server's tools as that framework's tools.
- :mod:`~mcp_sync.integrations.tracing`: OpenTelemetry spans for every request, with W3C trace
  context in ``_meta``.
"""
