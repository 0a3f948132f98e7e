"""The Client layer's parts, behind the facade in ``mcp_sync/client.py``.

- ``calls``: a typed request from its row in ``protocol/methods.py``, and its result parsed.
- ``tools``, ``tasks``: a connection's tools; a tool call running as a task (``client.tasks``).
- ``facade``: the descriptors ``Client`` is built from besides its methods.
- ``targets``: what ``connect()`` accepts, and where each kind of target becomes a transport.
- ``connect``: ``mcp_sync.connect()``.
"""
