"""mcp_sync: a synchronous, thread-based client for the Model Context Protocol."""
