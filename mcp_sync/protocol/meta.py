"""Well-known ``_meta`` keys."""

from __future__ import annotations

PROGRESS_TOKEN = "progressToken"
RELATED_TASK = "io.modelcontextprotocol/related-task"

# 2026-07-28 per-request metadata
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
