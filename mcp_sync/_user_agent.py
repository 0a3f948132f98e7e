"""How mcp_sync names itself on HTTP: ``User-Agent: mcp-sync/<version>`` followed by requests'
own (``python-requests/<version>``, as httpx-based clients name both), on every request it
makes (Streamable HTTP's and HTTP+SSE's, the OAuth requests), unless the user named an agent:
in ``headers=`` or ``extra_headers``, or on a ``requests.Session`` of theirs.

The sessions mcp_sync makes carry it as their default header (nothing to do per request); a
request through a session the user gave goes through :func:`with_user_agent`. Imported by the
HTTP modules only: ``import mcp_sync`` loads no networking.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import requests
from requests.structures import CaseInsensitiveDict

from ._version import __version__

__all__ = ["own_session", "user_agent", "with_user_agent"]


@functools.lru_cache(maxsize=1)
def user_agent() -> str:
    """``mcp-sync/<version> python-requests/<version>``."""
    return f"mcp-sync/{__version__} {requests.utils.default_user_agent()}"


def own_session() -> requests.Session:
    """A new session of mcp_sync's own, naming it in every request."""
    session = requests.Session()
    session.headers["User-Agent"] = user_agent()
    return session


def with_user_agent(headers: Mapping[str, str], session: requests.Session) -> dict[str, str]:
    """``headers``, a request's through ``session``, with mcp_sync's ``User-Agent`` unless
    they or the session's own headers name an agent (requests' default names none)."""
    merged: CaseInsensitiveDict[str] = CaseInsensitiveDict(session.headers)  # type: ignore[arg-type]
    merged.update(headers)
    named = merged.get("User-Agent")
    if named is not None and named != requests.utils.default_user_agent():
        return dict(headers)
    return {**headers, "User-Agent": user_agent()}
