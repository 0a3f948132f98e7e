"""The HTTP library's failures arrive as typed errors (``transports/_http/errors.py``) that say
whether the request provably never left, and recovery reads that type, never a class name.

Against real sockets on 127.0.0.1: a port nothing listens on, and the scripted
``FaultServer`` for a connection dropped after the request arrived (a real server cannot be
made to drop one on cue).
"""

from __future__ import annotations

import requests

from mcp_sync._connection import recovery as _recovery
from mcp_sync.errors import ConnectFailed, NetworkError, TransportError
from mcp_sync.protocol import jsonrpc
from tests.helpers.http_faults import INIT, FaultServer, Request, answer, started_transports
from tests.helpers.support import free_port

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


def test_the_resend_after_a_reset_is_a_policy_value() -> None:
    """A read-only request whose reused connection is reset after it was sent goes once more
    by default; with ``ResendOnReset(max_resends=0)`` it fails, typed, and is never resent."""
    from mcp_sync.transports._http.client import ResendOnReset
    from mcp_sync.transports.base import MessageOptions

    def run(policy: ResendOnReset | None) -> tuple[int, object]:
        lists: list[Request] = []

        def handler(req: Request) -> None:
            if req.method == "POST" and (req.json or {}).get("method") == "tools/list":
                lists.append(req)
                if len(lists) == 1:
                    req.drop()
                    return
            answer(req)

        with FaultServer(handler) as server, started_transports() as make:
            transport, inbox = make(server.url, open_get_stream=False, connect_timeout=10)
            if policy is not None:
                transport._http.resend_on_reset = policy
            transport.send(INIT)  # the keep-alive connection the list then reuses
            inbox.response(1, timeout=20)
            transport.send(LIST, options=MessageOptions(safe_to_resend=True))
            outcome = inbox.wait_for(
                lambda: (
                    inbox.errors[0]
                    if inbox.errors
                    else next(
                        (m for m in inbox.messages if isinstance(m, dict) and m.get("id") == 7),
                        None,
                    )
                ),
                timeout=20,
            )
            return len(lists), outcome

    count, outcome = run(None)
    assert count == 2 and isinstance(outcome, dict) and "result" in outcome
    count, outcome = run(ResendOnReset(max_resends=0))
    assert count == 1 and isinstance(outcome, NetworkError), outcome


def test_an_error_retold_for_what_was_being_sent_keeps_its_type_facts_and_cause() -> None:
    """``retold`` gives a reported error the message of what was being sent; the base class's
    copy keeps the rest (the type, ``sent``, the request, the proxy, the library's cause)."""
    from mcp_sync.errors import ProxyError
    from mcp_sync.transports._http.errors import retold

    error = ProxyError("the proxy refused", proxy="http://proxy:3128", request_id=4)
    error.sent = False
    error.__cause__ = requests.ConnectionError("tunnel failed")
    told = retold(error, "sending the answer to request 9: the proxy refused")
    assert type(told) is ProxyError and str(told).startswith("sending the answer")
    assert (told.sent, told.request_id, told.proxy) == (False, 4, "http://proxy:3128")
    assert told.__cause__ is error.__cause__ and str(error) == "the proxy refused"
