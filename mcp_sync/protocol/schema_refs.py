"""The local ``$ref``s of a JSON Schema: a JSON pointer into the same document.

A ref into another document, or to an anchor, resolves to nothing here: mcp_sync never fetches
a schema, since a server could point it anywhere. Output validation, the typed tool
functions and the CLI's argument typing all follow refs through :func:`resolve_local`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

__all__ = ["resolve_local"]


def resolve_local(root: Any, ref: str) -> Any:
    """The node of ``root`` that the local ``ref`` (``#``, ``#/$defs/Name``) points at; None
    for a ref into another document or to an anchor, and for one that points nowhere."""
    if not ref.startswith("#") or (len(ref) > 1 and not ref.startswith("#/")):
        return None
    node = root
    for raw in ref[2:].split("/") if len(ref) > 1 else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
