"""Side-by-side benchmarks of mcp_sync, the official Python SDK's async client and raw floors.

Run ``python -m bench`` (``make bench``); see ``docs/benchmarks.md`` for what each row means.
"""
