"""The HTTP library's failures arrive as typed errors (``transports/_http/errors.py``) that say
whether the request provably never left, and recovery reads that type, never a class name.

Against real sockets on 127.0.0.1: a port nothing listens on, and the scripted
``FaultServer`` for a connection dropped after the request arrived (a real server cannot be
made to drop one on cue).
"""

from __future__ import annotations

import sys
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "servers"))

from http_faults import FaultServer, Request, started_transports
from support import free_port

from mcp_sync import _recovery
from mcp_sync.errors import ConnectFailed, NetworkError, TransportError
from mcp_sync.protocol import jsonrpc

LIST = jsonrpc.request(7, "tools/list")


def test_a_refused_connection_is_connect_failed_and_provably_not_sent() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    with started_transports() as make:
        transport, inbox = make(dead, connect_timeout=10)
        transport.send(LIST)
        error = inbox.error(timeout=20)
    assert isinstance(error, ConnectFailed), repr(error)
    assert error.sent is False and error.request_id == 7
    assert "connection refused" in str(error) and dead in str(error)
    assert isinstance(error.__cause__, requests.ConnectionError)  # the library's, kept
    assert _recovery.refused_unprocessed(error)  # so recovery may send it again


def test_a_connection_dropped_after_the_request_arrived_may_have_run() -> None:
    def handler(req: Request) -> None:
        req.drop()  # the request was read: the server may have acted on it

    with FaultServer(handler) as server, started_transports() as make:
        transport, inbox = make(server.url, connect_timeout=10)
        transport.send(LIST)
        error = inbox.error(timeout=20)
    assert isinstance(error, NetworkError) and not isinstance(error, ConnectFailed), repr(error)
    assert error.sent is None and error.request_id == 7
    assert not _recovery.refused_unprocessed(error)  # never sent twice on a guess
    assert _recovery.dropped_in_flight(error)


def test_recovery_does_not_take_an_exception_named_like_urllib3s_for_one() -> None:
    """Before, recovery matched causes by class name: any exception called ``ConnectTimeout``
    or ``gaierror`` (an auth provider's, a library's) made a failed call count as never sent,
    so a tool call that may have run would be sent again."""

    class ConnectTimeout(Exception):  # not requests'
        pass

    error = TransportError("tools/call failed: the token service timed out")
    error.__cause__ = ConnectTimeout("token service")
    assert not _recovery.refused_unprocessed(error)


def test_one_list_of_statuses_worth_retrying() -> None:
    from mcp_sync import backoff
    from mcp_sync.transports._http import streams

    assert streams.RETRY_STATUSES is backoff.RETRY_STATUSES
    assert not hasattr(_recovery, "_RETRY_STATUSES")
