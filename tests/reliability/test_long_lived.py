"""Long-lived use: a forked child's copy of a client, a cancellation right before ``close()``,
a listing's timeout, and answers over stdio that cannot be used (docs/reliability.md, "Long-lived
use: fork, close, listings and unusable answers").

The fork, cancellation and listing tests run real servers: the official SDK's (over stdio and
Streamable HTTP) and server-everything. The unusable answers come from the scripted fake peer
``tests/servers/stdio_fault_peer.py`` (``unusable`` mode): no real server can be made to write
them on demand.
"""

from __future__ import annotations

import _thread
import gc
import os
import resource
import threading
import time

import pytest

import mcp_sync
from mcp_sync import AbortController, Client
from mcp_sync.errors import Aborted, InvalidStateError, ProtocolError, RequestTimeout
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.reliability_support import PYTHON, SERVERS, connect, fault_peer
from tests.helpers.support import (
    NODE,
    PEERS,
    HttpServer,
    free_port,
    in_forked_child,
    open_fds,
    wait_until,
)

pytestmark = pytest.mark.timeout(120)

MiB = 1024 * 1024
SDK_STDIO = [PYTHON, str(SERVERS / "sdk_server.py")]
SDK_HTTP = str(SERVERS / "http_fixture_server.py")
EVERYTHING = PEERS / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

# -- fork -------------------------------------------------------------------------------------

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork()")
#: How a forked child lets go of the client it inherited.
LETTING_GO = ["close", "drop", "with", "multiprocessing-close"]


def _let_go(box: list[Client], how: str) -> dict:
    """In the child: let go of ``box[0]`` as ``how`` says; then say how many descriptors that
    closed and what a call does."""
    before = open_fds()
    if how == "drop":
        box.clear()  # the child's only reference
        gc.collect()
        for thread in threading.enumerate():  # a finaliser may shut down on a thread
            if thread.name == "mcp-sync-finalizer":
                thread.join(20)
        return {"call": "dropped", "released": len(before - open_fds())}
    client = box[0]
    if how == "with":
        with client:
            pass
    else:
        client.close()
    released = len(before - open_fds())
    started = time.monotonic()
    try:
        client.call_tool("add", {"a": 1, "b": 2}, timeout=10)
    except InvalidStateError as exc:
        return {"call": str(exc), "took": time.monotonic() - started, "released": released}
    except Exception as exc:
        return {"call": f"{type(exc).__name__}: {exc}"}
    return {"call": "answered"}


def _in_child(box: list[Client], how: str) -> dict:
    via = "multiprocessing" if how.startswith("multiprocessing") else "os.fork"
    return in_forked_child(lambda: _let_go(box, how.rpartition("-")[2]), via=via)


def _check_child(outcome: dict, how: str) -> None:
    assert "unexpected" not in outcome, outcome
    if how != "drop":
        # the child's calls keep failing at once, with the error they gave before it let go
        assert "after the fork" in outcome["call"], outcome
        assert outcome["took"] < 5, outcome


@needs_fork
@pytest.mark.parametrize("how", LETTING_GO)
def test_a_forked_child_letting_go_of_a_stdio_client_leaves_the_parents_server_alone(
    how: str,
) -> None:
    transport = StdioTransport(SDK_STDIO[0], SDK_STDIO[1:])
    box = [Client("fork-test", "1.0").connect(transport)]  # no other reference: "drop" drops it
    try:
        server_pid = transport.pid
        assert server_pid is not None
        outcome = _in_child(box, how)
        _check_child(outcome, how)
        # the child closed its copies of the server's stdin, stdout, stderr and the wake pipe
        assert outcome["released"] >= 5, outcome
        os.kill(server_pid, 0)  # no SIGTERM reached the parent's server
        answer = box[0].call_tool("add", {"a": 20, "b": 22}, timeout=20)
        assert answer.structured_content == {"result": 42}
    finally:
        box[0].close()


@pytest.fixture(scope="module")
def sdk_http_url():
    port = free_port()
    with HttpServer([PYTHON, SDK_HTTP, "streamable-http", str(port)], port) as server:
        yield server.url()


@needs_fork
@pytest.mark.parametrize("how", LETTING_GO)
def test_a_forked_child_letting_go_of_an_http_client_leaves_the_parents_session_alone(
    sdk_http_url: str, how: str
) -> None:
    box = [mcp_sync.connect(sdk_http_url, request_timeout=20, protocol="handshake")]
    try:
        assert box[0].call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2}
        outcome = _in_child(box, how)
        _check_child(outcome, how)
        assert outcome["released"] >= 1, outcome  # its copies of the GET stream's, the pool's
        # A DELETE from the child would have ended the session: the server answers 404 for it.
        answer = box[0].call_tool("add", {"a": 20, "b": 22}, timeout=20)
        assert answer.structured_content == {"result": 42}
    finally:
        box[0].close()


# -- answers that cannot be used --------------------------------------------------------------

UNUSABLE = {
    "deep": ({"fault": "deep", "depth": 100_000}, "nested too deeply"),
    "large": ({"fault": "large", "size": 17 * MiB}, "exceeds max_message_bytes (16777216)"),
    "unparsable": ({"fault": "unparsable"}, "unparsable JSON"),
}


@pytest.mark.parametrize("fault", list(UNUSABLE))
def test_an_unusable_answer_fails_its_call_at_once_and_the_session_goes_on(
    leaks, fault: str
) -> None:
    arguments, what = UNUSABLE[fault]
    client = connect(fault_peer("unusable"))
    try:
        errors: list[BaseException] = []
        client.on_error(errors.append)
        started = time.monotonic()
        with pytest.raises(ProtocolError) as caught:
            client.call_tool("t", arguments, timeout=30)
        assert time.monotonic() - started < 15, "the call waited for its timeout"
        assert what in str(caught.value)
        if fault == "large":
            assert "StdioTransport(max_message_bytes=" in str(caught.value)  # how to accept it
        wait_until(lambda: errors, timeout=10)
        assert what in str(errors[0])  # reported through on_error too
        assert client.call_tool("t", {"text": "still here"}).text == "still here"
    finally:
        client.close()


def test_a_huge_base64_image_fails_its_call_at_once_with_memory_bounded(leaks) -> None:
    # The id comes last here, as the TypeScript SDK writes it: it is read from the line's end.
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    client = connect(fault_peer("unusable"))
    try:
        started = time.monotonic()
        with pytest.raises(ProtocolError) as caught:
            client.call_tool("t", {"fault": "image", "size": 256 * MiB}, timeout=40)
        assert time.monotonic() - started < 30, "the call waited for its timeout"
        assert "exceeds max_message_bytes (16777216)" in str(caught.value)
        assert client.call_tool("t", {"text": "still here"}).text == "still here"
    finally:
        client.close()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(f"\npeak RSS growth while skipping a 256 MiB image: {grown / 1024:.1f} MiB")
    assert grown < 48 * 1024


# -- a cancellation right before close() ------------------------------------------------------


def _recorded_server(record: os.PathLike[str]) -> StdioTransport:
    """server-everything behind ``tee``: ``record`` gets every byte the client wrote to it."""
    if not EVERYTHING.exists() or not NODE.exists():
        pytest.fail(f"{EVERYTHING} or {NODE} is missing: run `make test` (it installs tests/peers)")
    script = 'tee -a "$0" | exec "$1" "$2" stdio'
    return StdioTransport("sh", ["-c", script, str(record), str(NODE), str(EVERYTHING)])


@pytest.mark.parametrize("how", ["abort", "ctrl-c"])
def test_a_cancellation_right_before_close_reaches_the_server(tmp_path, how: str) -> None:
    for run in range(3):
        record = tmp_path / f"stdin-{run}.jsonl"
        record.touch()
        client = connect(_recorded_server(record), request_timeout=30)
        controller = AbortController()

        def interrupt_once_sent(record=record, controller=controller) -> None:
            wait_until(lambda: b'"tools/call"' in record.read_bytes(), timeout=20)
            if how == "abort":
                controller.abort("the user gave up")
            else:
                _thread.interrupt_main()  # what Ctrl-C does to the main thread

        interrupter = threading.Thread(target=interrupt_once_sent)
        interrupter.start()
        try:
            client.call_tool(
                "trigger-long-running-operation",
                {"duration": 60, "steps": 60},
                signal=controller.signal,
            )
        except (Aborted, KeyboardInterrupt):
            client.close()  # at once, as the CLI does on Ctrl-C
        else:
            client.close()
            pytest.fail("the call was not interrupted")
        finally:
            interrupter.join(30)
        written = record.read_bytes()
        assert b'"notifications/cancelled"' in written, f"run {run}: {written[-500:]!r}"


# -- a listing's timeout ----------------------------------------------------------------------

LISTINGS = ["list_tools", "list_resources", "list_resource_templates", "list_prompts"]


def _paged_server(pages: int, delay: float) -> Client:
    argv = [str(SERVERS / "progress_lists_server.py"), "pages", str(pages), str(delay)]
    return connect(StdioTransport(PYTHON, argv), request_timeout=30)


@pytest.mark.parametrize("listing", LISTINGS)
def test_a_listings_timeout_bounds_all_of_its_pages(listing: str) -> None:
    # 15 pages of 0.4 s each: every page is well within the timeout, the listing is not.
    client = _paged_server(15, 0.4)
    try:
        started = time.monotonic()
        with pytest.raises(RequestTimeout) as caught:
            getattr(client, listing)(timeout=1.5)
        assert time.monotonic() - started < 5, "the timeout was applied to each page"
        assert "listing" in str(caught.value)
        assert len(getattr(client, listing)(timeout=30)) == 15  # the session goes on
    finally:
        client.close()


def test_progress_renews_a_listings_timeout() -> None:
    # 6 s of pages against a 3 s timeout: progress every 0.1 s keeps the listing alive.
    client = _paged_server(15, 0.4)
    try:
        reports: list[object] = []
        tools = client.list_tools(timeout=3, on_progress=reports.append)
        assert [tool.name for tool in tools] == [f"tool{n}" for n in range(15)]
        assert reports
    finally:
        client.close()
