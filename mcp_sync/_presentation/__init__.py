"""What a person or a model is shown.

- ``repr``: readable renderings of tools, prompts, resources and results (Jupyter, the CLI).
- ``tool_view``: the model-facing view of a tool, decided in one place.
- ``schema_types``: Python types and names from a tool's JSON schemas.
- ``stderr_text``: what an error message shows of a server's stderr.

(``mcp_sync.terminal`` and ``mcp_sync.llm`` are the public halves of this room.)
"""
