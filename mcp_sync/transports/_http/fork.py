"""What a forked child's copy of an HTTP transport closes: its copies of the sockets.

After ``fork()`` the child holds a copy of every socket of its parent's transport, pooled or in
use by a thread of the parent. Closing a copy leaves the parent's connection alone (the kernel
ends a connection when its last descriptor closes), but ``shutdown()``, a ``DELETE`` or a TLS
goodbye would end it for the parent too, so only the descriptors are closed. The pools are read
without their locks: a thread of the parent may have held one at the instant of the fork, and
in the child nobody would release it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

from .client import HttpClient
from .exchange import Exchange

__all__ = ["close_socket_copies"]


def close_socket_copies(http: HttpClient | None, exchanges: Iterable[Exchange]) -> None:
    """Close the child's copies of the sockets of ``exchanges`` and of the connections idle in
    ``http``'s pools (when ``http`` made its own ``requests.Session``)."""
    sockets: list[Any] = [exchange.socket() for exchange in exchanges]
    if http is not None and http.owns_session:
        for adapter in list(http.session.adapters.values()):
            pools = getattr(getattr(adapter, "poolmanager", None), "pools", None)
            for pool in list(getattr(pools, "_container", {}).values()):  # no lock: see above
                idle = getattr(getattr(pool, "pool", None), "queue", ())
                sockets += [getattr(conn, "sock", None) for conn in list(idle)]
    for sock in sockets:
        # detach(): the socket object lets go of the number, so nothing closes it again later
        # (by then the number may belong to something else of the child's)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.close(sock.detach())
