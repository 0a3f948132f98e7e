"""The MCP protocol with no I/O: JSON-RPC messages, versions, ``_meta`` keys and types."""
