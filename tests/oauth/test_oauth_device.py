"""Headless sign-in, the device authorization grant (RFC 8628), end to end: fastmcp's real
MCP endpoint behind its authorization server with the device grant of oauth_device_server
(scripted but RFC-faithful), and a test thread playing the user who approves the code on
another device, started by the client's own display of the code."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.support import FASTMCP_MISSING, wait_until

pytest.importorskip("fastmcp", reason=FASTMCP_MISSING)

import mcp_sync
from mcp_sync.abort import AbortController
from mcp_sync.cli import main
from mcp_sync.errors import Aborted
from mcp_sync.oauth import (
    AuthorizationDenied,
    DeviceCode,
    DeviceCodeExpired,
    DeviceFlowProvider,
    DeviceGrantNotSupported,
    DeviceSignInTimeout,
    FileStateStore,
    ForbiddenEndpointError,
    InsecureEndpointError,
    device,
    show_device_code,
)
from mcp_sync.oauth.device import MAX_EXPIRY, MAX_INTERVAL
from tests.helpers.oauth_device_server import DeviceGrant, DeviceScript, approve
from tests.helpers.oauth_fastmcp_server import serve
from tests.oauth.test_oauth_e2e import mcp_post_status


@pytest.fixture
def script():
    return DeviceScript()


@pytest.fixture
def server(script):
    with serve(wrap=lambda app, running: DeviceGrant(app, running, script)) as running:
        yield running


class User:
    """The person at the verification page: decides on each code shown (in a thread, as
    someone on their phone would), and remembers what they were shown."""

    def __init__(self, server, decision: str | None = "approve") -> None:
        self.server, self.decision = server, decision
        self.codes: list[DeviceCode] = []
        self.shown = threading.Event()
        self.threads: list[threading.Thread] = []

    def __call__(self, code: DeviceCode) -> None:
        self.codes.append(code)
        self.shown.set()
        if self.decision is not None:
            self.decide(code.user_code)

    def decide(self, user_code: str) -> None:
        thread = threading.Thread(
            target=approve, args=(self.server.base_url, user_code, self.decision)
        )
        thread.start()
        self.threads.append(thread)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(10)


def provider_for(server, user, **options) -> DeviceFlowProvider:
    return DeviceFlowProvider(server.url, client_id="device-client", on_code=user, **options)


def signing_in(provider: DeviceFlowProvider, **options):
    """provider.sign_in(**options) in a thread; (thread, outcome: {"error"|"tokens": ...})."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["tokens"] = provider.sign_in(**options)
        except Exception as exc:
            outcome["error"] = exc
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.timeout(60)
def test_a_device_sign_in_shows_the_code_and_the_call_goes_through(server, script, caplog):
    caplog.set_level(logging.DEBUG)
    user = User(server)
    provider = provider_for(server, user)
    with mcp_sync.connect(server.url, auth=provider) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    user.join()
    (code,) = user.codes
    assert code.verification_uri == server.base_url + "/device"
    assert code.verification_uri_complete.endswith("user_code=" + code.user_code)
    assert code.interval == 1
    assert script.answers()[-1] == "ok"
    (token,) = script.issued
    assert provider.tokens.access_token == token
    assert mcp_post_status(server, token) != 401
    # neither the device code nor the token reach a log record or a repr
    for secret in (code.device_code, token):
        assert secret not in caplog.text
        assert secret not in repr(provider) + repr(code) + repr(provider.tokens)


@pytest.mark.timeout(60)
def test_slow_down_adds_five_seconds_to_the_interval(server, script):
    script.slow_down = 1
    user = User(server)
    provider_for(server, user).sign_in(timeout=40)
    user.join()
    assert script.answers() == ["slow_down", "ok"]
    first, second = (poll.at for poll in script.polls)
    # the server's interval was 1 s; after slow_down it is 6 s (and the server refuses sooner)
    assert second - first >= 5.9


@pytest.mark.timeout(60)
@pytest.mark.parametrize("who", ["client", "server"])
def test_an_expired_code_is_a_typed_error(server, script, who):
    if who == "client":
        script.expires_in = 2  # the client stops at the lifetime it was told
    else:
        script.lifetime = 1.5  # the server's clock says expired_token first
    user = User(server, decision=None)
    with pytest.raises(DeviceCodeExpired, match="expired"):
        provider_for(server, user).sign_in(timeout=30)
    assert user.codes
    if who == "server":
        assert script.answers()[-1] == "expired_token"


@pytest.mark.timeout(60)
def test_access_denied_is_a_typed_error(server, script):
    user = User(server, decision="deny")
    provider = provider_for(server, user)
    with pytest.raises(AuthorizationDenied) as caught:
        provider.sign_in(timeout=30)
    user.join()
    assert caught.value.error == "access_denied"
    assert script.answers()[-1] == "access_denied"
    assert provider.tokens is None


@pytest.mark.timeout(60)
def test_the_abort_signal_ends_polling_at_once(server, script):
    script.interval = 30
    user = User(server, decision=None)
    cancelled = threading.Event()
    thread, outcome = signing_in(provider_for(server, user), cancelled=cancelled, timeout=50)
    assert user.shown.wait(20)
    aborted_at = time.monotonic()
    cancelled.set()
    thread.join(20)
    assert isinstance(outcome.get("error"), Aborted)
    assert outcome["ended"] - aborted_at < 10  # not the 30 s interval
    assert script.polls == []  # no poll was due yet


@pytest.mark.timeout(60)
def test_a_calls_abort_signal_ends_the_sign_in_it_started(server, script):
    user = User(server)
    provider = provider_for(server, user)
    with mcp_sync.connect(server.url, auth=provider) as client:
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
        user.join()
        server.provider.access_tokens.clear()  # the server forgets it: the next call gets 401
        script.interval = 30
        user.decision = None
        controller = AbortController()
        user.shown.clear()
        threading.Thread(target=lambda: user.shown.wait(20) and controller.abort()).start()
        started = time.monotonic()
        with pytest.raises(Aborted):
            client.call_tool("add", {"a": 2, "b": 2}, signal=controller.signal, timeout=50)
        assert time.monotonic() - started < 15  # not the 30 s interval
    assert len(user.codes) == 2  # the second sign-in was shown, then abandoned


@pytest.mark.timeout(60)
def test_the_timeout_ends_polling(server, script):
    script.interval = 30
    user = User(server, decision=None)
    started = time.monotonic()
    with pytest.raises(DeviceSignInTimeout, match="timeout"):
        provider_for(server, user).sign_in(timeout=2)
    assert time.monotonic() - started < 20  # not the 30 s interval, nor the 600 s code


@pytest.mark.timeout(60)
@pytest.mark.parametrize("protocol", ["auto", "handshake", "2026-07-28"])
@pytest.mark.parametrize("started_by", ["connect", "call"])
def test_a_calls_timeout_bounds_the_sign_in_it_started(server, script, protocol, started_by):
    """The sign-in a request's 401 starts waits by that request's deadline, the one of the
    whole user call (tests/reliability/test_one_deadline.py walks the other waits). Before,
    connect(request_timeout=4) in auto mode took 8 s (the probe and initialize each waited
    4 s), and in every mode the error was a bare RequestTimeout: the DeviceSignInTimeout
    was dropped."""
    user = User(server, decision="approve" if started_by == "call" else None)
    client = mcp_sync.Client("deadline", "1", protocol=protocol, request_timeout=4)
    provider = provider_for(server, user)
    try:
        if started_by == "call":
            client.connect(mcp_sync.StreamableHttpTransport(server.url, auth=provider))
            user.join()
            server.provider.access_tokens.clear()  # the server forgets it: the call gets 401
            user.decision = None
            user.codes.clear()
            run = lambda: client.call_tool("add", {"a": 1, "b": 1})  # noqa: E731
        else:
            run = lambda: client.connect(  # noqa: E731
                mcp_sync.StreamableHttpTransport(server.url, auth=provider)
            )
        script.interval = 30  # (no poll comes before the deadline: the wait is the user's)
        started = time.monotonic()
        with pytest.raises(mcp_sync.RequestTimeout) as caught:
            run()
        took = time.monotonic() - started
    finally:
        client.close()
    assert took < 4 + 1.5, f"the sign-in's call (request_timeout=4) took {took:.1f} s"
    assert len(user.codes) == 1  # the code was shown once: the wait was for the user
    assert caught.value.timeout == 4
    chain, error = [], caught.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    assert any(isinstance(e, DeviceSignInTimeout) for e in chain), chain


@pytest.mark.timeout(60)
def test_an_authorization_server_without_the_endpoint_is_named(server, script):
    script.advertise = False
    user = User(server)
    with pytest.raises(DeviceGrantNotSupported, match="device_authorization_endpoint"):
        provider_for(server, user).sign_in(timeout=10)
    assert user.codes == []


class _Approving(io.StringIO):
    """stderr of the CLI, read by the user: they approve the code the CLI printed."""

    def __init__(self, server) -> None:
        super().__init__()
        self.user = User(server)

    def write(self, text: str) -> int:
        found = re.search(r"enter the code: (\S+)", text)
        if found:
            self.user.decide(found.group(1))
        return super().write(text)


@pytest.mark.timeout(60)
def test_cli_login_device_prints_the_code_and_stores_the_token(
    server, script, tmp_path, monkeypatch
):
    path = tmp_path / "oauth.json"
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(path))
    err = _Approving(server)
    code = main(
        ["login", "--device", server.url, "--client-id", "device-client", "--timeout", "30"],
        out=io.StringIO(),
        err=err,
    )
    err.user.join()
    text = err.getvalue()
    assert code == 0, text
    assert f"open {server.base_url}/device" in text
    (pending,) = script.codes.values()
    assert f"enter the code: {pending.user_code}" in text
    assert "Signed in" in text
    (token,) = script.issued
    stored = FileStateStore(path)
    # a later command finds the token (the browser sign-in's provider reads the same entry)
    provider = mcp_sync.oauth.OAuthProvider(server.url, store=stored)
    assert provider.tokens.access_token == token
    out = io.StringIO()
    assert main([server.url, "tools"], out=out, err=io.StringIO()) == 0
    assert "add" in out.getvalue()


HOSTILE_CODE = "AB\x1b[2J\x1b]0;owned\x07CD"


@pytest.mark.timeout(60)
def test_terminal_escapes_in_the_code_and_uri_are_neutralised(
    server, script, tmp_path, monkeypatch
):
    script.user_code = HOSTILE_CODE
    script.verification_uri = server.base_url + "/device\x1b[31m"
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(tmp_path / "oauth.json"))
    err = io.StringIO()
    user = User(server, decision=None)
    code = main(
        ["login", "--device", server.url, "--client-id", "device-client", "--timeout", "2"],
        out=io.StringIO(),
        err=err,
    )
    assert code != 0
    assert "enter the code" in err.getvalue()
    assert "\x1b" not in err.getvalue() and "\x07" not in err.getvalue()
    # the library's own display (a script's stderr) and its Jupyter renderings as well
    provider = provider_for(server, user)
    with pytest.raises(DeviceSignInTimeout):
        provider.sign_in(timeout=1.5)
    (shown,) = user.codes
    assert shown.user_code == HOSTILE_CODE  # kept as sent: what the user must type
    line = io.StringIO()
    show_device_code(shown, line)
    for rendering in (line.getvalue(), shown._repr_html_(), shown._repr_markdown_()):
        assert "\x1b" not in rendering and "\x07" not in rendering
        assert "AB" in rendering and "CD" in rendering


@pytest.mark.timeout(60)
def test_a_device_endpoint_at_a_link_local_address_is_never_contacted(server, script):
    script.endpoint = "https://169.254.169.254/device_authorization"  # the cloud metadata host
    user = User(server)
    with pytest.raises(ForbiddenEndpointError) as caught:
        provider_for(server, user).sign_in(timeout=10)
    assert "169.254.169.254" in str(caught.value)
    assert user.codes == [] and script.codes == {}


@pytest.mark.timeout(60)
def test_a_verification_uri_that_is_no_web_address_is_refused(server, script):
    script.verification_uri = "javascript:alert(1)"
    user = User(server)
    with pytest.raises(InsecureEndpointError, match="verification URI"):
        provider_for(server, user).sign_in(timeout=10)
    assert user.codes == []  # nothing shown


@pytest.mark.timeout(180)
def test_in_a_jupyter_kernel_the_code_is_a_rich_display_and_the_sign_in_completes(
    server, script, tmp_path, monkeypatch
):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    user = User(server, decision=None)
    script.on_issue = user.decide  # the user reads the code off the notebook and approves it
    user.decision = "approve"
    source = (
        "from mcp_sync.oauth import DeviceFlowProvider\n"
        f"provider = DeviceFlowProvider({server.url!r}, client_id='device-client')\n"
        "tokens = provider.sign_in(timeout=60)\n"
        "tokens.token_type"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    kernel = nbclient.NotebookClient(
        notebook, timeout=90, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    kernel.execute()
    user.join()
    outputs = notebook.cells[0].outputs
    assert not [o for o in outputs if o["output_type"] in ("error", "stream")], outputs
    (display,) = [o for o in outputs if o["output_type"] == "display_data"]
    (pending,) = script.codes.values()
    assert pending.user_code in display["data"]["text/html"]
    assert f'href="{server.base_url}/device"' in display["data"]["text/html"]
    assert "text/markdown" in display["data"]
    (result,) = [o for o in outputs if o["output_type"] == "execute_result"]
    assert result["data"]["text/plain"] == "'Bearer'"
    assert len(script.issued) == 1


INFINITY = float("inf")  # sent as the JSON token Infinity, which Python's json reads


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("expires_in", "interval"),
    [(1e12, 1e12), (INFINITY, 1), (600, INFINITY), (600, 1e9)],
    ids=["both-1e12", "expires-inf", "interval-inf", "interval-31-years"],
)
def test_absurd_lifetimes_and_intervals_are_capped(server, script, expires_in, interval):
    """RFC 8628 gives no upper bound; a server's ``1e12`` or ``Infinity`` is capped at
    MAX_EXPIRY and MAX_INTERVAL. Before: a raw OverflowError from the wait (1e12), a 31-year
    sleep between polls (1e9), a sign-in without a timeout waiting for a code that never
    expires."""
    script.expires_in, script.interval = expires_in, interval
    user = User(server, decision=None)
    cancelled = threading.Event()
    thread, outcome = signing_in(provider_for(server, user), cancelled=cancelled)  # no timeout
    try:
        assert user.shown.wait(20)
        aborted_at = time.monotonic()
    finally:
        cancelled.set()
        thread.join(20)
    assert isinstance(outcome.get("error"), Aborted), outcome
    assert outcome["ended"] - aborted_at < 10
    (code,) = user.codes
    assert code.expires_in == min(expires_in, MAX_EXPIRY)
    assert code.interval == min(interval, MAX_INTERVAL)


@pytest.mark.timeout(60)
def test_slow_down_never_stretches_the_interval_past_the_cap(server, script, monkeypatch):
    monkeypatch.setattr(device, "MAX_INTERVAL", 3.0)  # (the real cap, 60 s, is slow to watch)
    script.interval = 2
    script.slow_down = 1  # the first poll is told to slow down: 5 s more would pass the cap
    user = User(server, decision=None)
    cancelled = threading.Event()
    thread, _ = signing_in(provider_for(server, user), cancelled=cancelled, timeout=50)
    try:
        wait_until(lambda: len(script.polls) >= 2, timeout=30)
    finally:
        cancelled.set()
        thread.join(20)
    first, second = (poll.at for poll in script.polls[:2])
    assert script.polls[0].answer == "slow_down"
    assert 2.9 <= second - first <= 3.9  # the cap, not 2 + 5


@pytest.mark.timeout(60)
def test_a_huge_user_code_is_shown_bounded(server, script, tmp_path, monkeypatch):
    """A code is a few characters a person types. Before: a 900 KB one was printed whole, on
    one line, by the CLI, the stderr line and the Jupyter renderings alike."""
    script.user_code = "ABCD-" * 180_000  # 900 KB
    script.complete = False  # (twice would pass the 1 MiB a response may have)
    monkeypatch.setenv("MCP_SYNC_OAUTH_FILE", str(tmp_path / "oauth.json"))
    err = io.StringIO()
    code = main(
        ["login", "--device", server.url, "--client-id", "device-client", "--timeout", "2"],
        out=io.StringIO(),
        err=err,
    )
    assert code != 0
    shown = err.getvalue()
    assert "enter the code: ABCD-ABCD" in shown and "more characters" in shown
    assert len(shown) < 10_000
    user = User(server, decision=None)
    with pytest.raises(DeviceSignInTimeout):
        provider_for(server, user).sign_in(timeout=1.5)
    (device_code,) = user.codes
    assert device_code.user_code == script.user_code  # kept whole: only the display is bounded
    line = io.StringIO()
    show_device_code(device_code, line)
    for rendering in (line.getvalue(), device_code._repr_html_(), device_code._repr_markdown_()):
        assert "ABCD-ABCD" in rendering and "more characters" in rendering
        assert len(rendering) < 10_000
