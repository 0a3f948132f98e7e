"""How mcp_sync names itself on HTTP: ``User-Agent: mcp-sync/<version>`` followed by requests'
own (``python-requests/<version>``, as httpx-based clients name both), on every request it
makes (Streamable HTTP's and HTTP+SSE's, the OAuth requests), unless the user named an agent:
in ``headers=`` or ``extra_headers``, or on a ``requests.Session`` of theirs.

An application names itself after it with ``user_agent_suffix=`` (``"my-app/1.2"``): an HTTP
setting (:class:`~mcp_sync.transports._http.options.HttpOptions`), checked here where it is
made, so it reaches every request the transport makes and an OAuth provider's requests
through ``tls_session(user_agent_suffix=)``.

The sessions mcp_sync makes carry it as their default header (nothing to do per request); a
request through a session the user gave goes through :func:`with_user_agent`. Imported by the
HTTP modules only: ``import mcp_sync`` loads no networking.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import requests
from requests.structures import CaseInsensitiveDict

from ..._version import __version__
from ...errors import InvalidHeaderValue
from ...protocol.headers import value_problem

__all__ = ["own_session", "user_agent", "with_user_agent"]


@functools.lru_cache(maxsize=1)
def _ours() -> str:
    return f"mcp-sync/{__version__} {requests.utils.default_user_agent()}"


def user_agent(suffix: str | None = None) -> str:
    """``mcp-sync/<version> python-requests/<version>``, then ``suffix`` (the application's
    ``user_agent_suffix=``). Raises :class:`~mcp_sync.errors.InvalidHeaderValue` (a
    ``ValueError``) naming the option for a suffix a header cannot carry."""
    if suffix is None or suffix == "":
        return _ours()
    problem = value_problem(suffix)
    if problem is not None:
        raise InvalidHeaderValue("User-Agent", f"user_agent_suffix= is unfit: {problem}")
    return f"{_ours()} {suffix}"


def own_session(suffix: str | None = None) -> requests.Session:
    """A new session of mcp_sync's own, naming it (and ``suffix``) in every request."""
    session = requests.Session()
    session.headers["User-Agent"] = user_agent(suffix)
    return session


def with_user_agent(
    headers: Mapping[str, str], session: requests.Session, agent: str | None = None
) -> dict[str, str]:
    """``headers``, a request's through ``session``, with ``agent`` (default mcp_sync's own:
    :func:`user_agent`) as its ``User-Agent`` unless they or the session's own headers name
    one (requests' default names none)."""
    merged: CaseInsensitiveDict[str] = CaseInsensitiveDict(session.headers)  # type: ignore[arg-type]
    merged.update(headers)
    named = merged.get("User-Agent")
    if named is not None and named != requests.utils.default_user_agent():
        return dict(headers)
    return {**headers, "User-Agent": agent or _ours()}
