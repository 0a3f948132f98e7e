"""The libraries tests import: shared fixtures and checks (``support``), in-process servers
(scripted fakes such as ``http_faults``, and real ones such as ``oauth_fastmcp_server``), and
wrappers that start a real program (``redis_server``, ``tinyproxy``). What a test starts as a
process of its own is in ``tests/servers/``."""
