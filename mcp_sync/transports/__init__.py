"""Transports move whole JSON-RPC messages; see :mod:`mcp_sync.transports.base`."""

from .base import Transport
from .memory import InMemoryTransport, in_memory_transport_pair

__all__ = ["InMemoryTransport", "Transport", "in_memory_transport_pair"]
