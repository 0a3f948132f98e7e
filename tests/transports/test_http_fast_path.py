"""What a user configures on ``requests`` still applies now that a request skips
``Session.prepare_request`` / ``Session.send`` and goes to the session's adapter itself
(``mcp_sync/transports/_http/send.py``), and a request's answer is awaited on the caller's
thread.

Each test runs against a real HTTP server on 127.0.0.1 (the scripted one of
tests/helpers/http_faults.py, here only a server that records what reached it) and says
whether its requests took the short path (``Session.send`` never called) or, for what only
``Session.send`` applies, the long one. gzip, TLS with a CA bundle from the environment or a
session, a CONNECT proxy from the environment and same-origin redirects are covered by
tests/reliability/test_faults_http.py and tests/reliability/test_security.py, which now take
the short path too.
"""

from __future__ import annotations

import os
import signal
import ssl
import threading
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

import mcp_sync
from mcp_sync.abort import AbortController
from mcp_sync.errors import RequestTimeout
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import StreamableHttpTransport
from tests.helpers.http_faults import FaultServer, Request, initialize_result
from tests.helpers.support import free_port, wait_until
from tests.helpers.tls_certs import make_certificates

pytestmark = pytest.mark.timeout(60)


def answer(req: Request, headers: dict[str, str] | None = None) -> None:
    """A plain Streamable HTTP server: JSON answers echoing the method and arguments."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "initialize":
        value = initialize_result()
    else:
        value = {"method": msg["method"], "arguments": msg.get("params", {}).get("arguments")}
    req.reply_json(jsonrpc.result_response(msg["id"], value), headers=headers)


def connect(url: str, **kwargs: Any) -> mcp_sync.Client:
    client = mcp_sync.Client("t", "1", protocol="handshake", request_timeout=10)
    return client.connect(StreamableHttpTransport(url, open_get_stream=False, **kwargs))


@pytest.fixture
def session_sends(monkeypatch) -> list[str]:
    """Every request that went through ``requests.Session.send`` (its method and URL)."""
    sent: list[str] = []
    original = requests.Session.send

    def send(self: requests.Session, request: Any, **kwargs: Any) -> Any:
        sent.append(f"{request.method} {request.url}")
        return original(self, request, **kwargs)

    monkeypatch.setattr(requests.Session, "send", send)
    return sent


def posts(server: FaultServer, method: str) -> list[Any]:
    return [r for r in server.of("POST") if r.json.get("method") == method]


# -- a user's session, short path ---------------------------------------------------------------


def test_session_headers_and_cookies_go_out_and_set_cookies_are_kept(session_sends) -> None:
    def handler(req: Request) -> None:
        answer(req, {"Set-Cookie": "sticky=node-2; Path=/"} if b"initialize" in req.body else None)

    session = requests.Session()
    session.headers["X-Team"] = "blue"
    session.headers["User-Agent"] = "their-agent/1"
    session.cookies.set("preset", "1")
    with FaultServer(handler) as server, connect(server.url, session=session) as client:
        assert client.call_tool("echo", {"n": 1}).structured_content is None
        call = posts(server, "tools/call")[0]
        assert call.headers["x-team"] == "blue"
        assert call.headers["user-agent"] == "their-agent/1"
        assert sorted(call.headers["cookie"].split("; ")) == ["preset=1", "sticky=node-2"]
        assert call.headers["content-type"] == "application/json"  # ours, not overridden
        assert session.cookies.get("sticky") == "node-2"
    assert session_sends == []


def test_a_client_certificate_from_the_session(tmp_path, clean_env, session_sends) -> None:
    paths = make_certificates(tmp_path)
    server = FaultServer(answer)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(paths["cert"], paths["key"])
    context.load_verify_locations(paths["ca"])
    context.verify_mode = ssl.CERT_REQUIRED  # no client certificate: no handshake
    server._server.socket = context.wrap_socket(
        server._server.socket, server_side=True, do_handshake_on_connect=False
    )
    url = f"https://localhost:{server.port}/mcp"
    session = requests.Session()
    session.verify = str(paths["ca"])
    session.cert = (str(paths["client_cert"]), str(paths["client_key"]))
    with server, connect(url, session=session) as client:
        assert client.call_tool("echo", {"n": 2}).structured_content is None
        assert len(posts(server, "tools/call")) == 1
    assert session_sends == []


def test_a_mounted_adapter_of_the_users_own_sends_every_request(session_sends) -> None:
    class CountingAdapter(HTTPAdapter):
        def __init__(self) -> None:
            super().__init__()
            self.sent: list[str] = []

        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            self.sent.append(request.method)
            return super().send(request, *args, **kwargs)

    adapter = CountingAdapter()
    session = requests.Session()
    session.mount("http://127.0.0.1", adapter)
    with FaultServer(answer) as server, connect(server.url, session=session) as client:
        client.call_tool("echo", {})
        client.list_tools()
    assert adapter.sent.count("POST") == len(server.of("POST")) >= 4
    assert session_sends == []


def test_retry_configured_on_the_adapter_applies(session_sends) -> None:
    failed: list[int] = []

    def handler(req: Request) -> None:
        if b"tools/call" in req.body and not failed:
            failed.append(1)
            req.reply(503, "busy", {"Retry-After": "0"})
            return
        answer(req)

    session = requests.Session()
    retry = Retry(total=2, status_forcelist=[503], allowed_methods=None, backoff_factor=0)
    session.mount("http://", HTTPAdapter(max_retries=retry))
    with FaultServer(handler) as server, connect(server.url, session=session) as client:
        assert client.call_tool("echo", {"n": 3}).is_error is False
        assert len(posts(server, "tools/call")) == 2  # the 503, then the retry
    assert session_sends == []


def test_an_http_proxy_from_the_environment_and_trust_env_off(clean_env, session_sends) -> None:
    # The "proxy" answers as the server would: a request reaches it only through the proxy
    # setting, since nothing listens at the URL's own port.
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    with FaultServer(answer) as proxy:
        clean_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        with connect(dead) as client:
            assert client.call_tool("echo", {}).is_error is False
        assert {r.path for r in proxy.of("POST")} == {dead}  # the absolute form: via the proxy
        with FaultServer(answer) as server:
            before = len(proxy.requests)
            session = requests.Session()
            session.trust_env = False  # the user's choice: HTTP_PROXY is not read
            with connect(server.url, session=session) as client:
                assert client.call_tool("echo", {}).is_error is False
            assert len(proxy.requests) == before and posts(server, "tools/call")
    assert session_sends == []


# -- what only Session.send applies: the long path ---------------------------------------------


def test_session_auth_and_response_hooks_still_apply(session_sends) -> None:
    seen: list[int] = []
    session = requests.Session()
    session.auth = ("user", "secret")
    session.hooks["response"].append(lambda response, **_: seen.append(response.status_code))
    with FaultServer(answer) as server, connect(server.url, session=session) as client:
        client.call_tool("echo", {})
        call = posts(server, "tools/call")[0]
        assert call.headers["authorization"] == "Basic dXNlcjpzZWNyZXQ="
    assert seen.count(200) >= 2
    assert any(sent.startswith("POST ") for sent in session_sends)


def test_a_session_class_that_overrides_send_is_called(session_sends) -> None:
    class Recording(requests.Session):
        def __init__(self) -> None:
            super().__init__()
            self.methods: list[str] = []

        def send(self, request: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            self.methods.append(request.method)
            return super().send(request, **kwargs)

    session = Recording()
    with FaultServer(answer) as server, connect(server.url, session=session) as client:
        client.call_tool("echo", {})
        # every POST the server got went through the user's send (the notification's POST may
        # still be on its way to the server's log when the call returns)
        wait_until(lambda: session.methods.count("POST") == len(server.of("POST")), timeout=10)
        assert session.methods.count("POST") >= 2


# -- the answer awaited on the caller's thread --------------------------------------------------


def hanging_call(req: Request) -> None:
    """Never answers a call of the tool ``slow``."""
    if b'"name":"slow"' in req.body:
        req.hang()
        return
    answer(req)


def test_an_abort_from_another_thread_ends_a_call_waiting_for_its_answer() -> None:
    with FaultServer(hanging_call) as server, connect(server.url) as client:
        controller = AbortController()
        outcome: list[BaseException] = []

        def call() -> None:
            try:
                client.call_tool("slow", signal=controller.signal)
            except BaseException as exc:
                outcome.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        wait_until(lambda: posts(server, "tools/call"), timeout=10)
        controller.abort("the user gave up")
        caller.join(10)
        assert not caller.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], mcp_sync.Aborted)
        # the cancellation went out, and the client goes on
        wait_until(lambda: posts(server, "notifications/cancelled"), timeout=10)
        assert client.call_tool("echo", {}).is_error is False


def test_a_call_whose_answer_never_comes_times_out_and_is_cancelled() -> None:
    with FaultServer(hanging_call) as server, connect(server.url) as client:
        with pytest.raises(RequestTimeout):
            client.call_tool("slow", timeout=0.3)
        wait_until(lambda: posts(server, "notifications/cancelled"), timeout=10)
        assert client.call_tool("echo", {}).is_error is False


def test_threads_sharing_a_client_each_get_their_own_answer() -> None:
    with FaultServer(answer) as server, connect(server.url) as client:
        wrong: list[Any] = []

        def work(worker: int) -> None:
            for n in range(20):
                result = client.request(
                    "tools/call", {"name": "e", "arguments": {"w": worker, "n": n}}
                )
                if result["arguments"] != {"w": worker, "n": n}:
                    wrong.append(result)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not wrong and len(posts(server, "tools/call")) == 160


def test_ctrl_c_while_waiting_for_the_answer_cancels_it_on_the_wire() -> None:
    assert threading.current_thread() is threading.main_thread()
    with FaultServer(hanging_call) as server, connect(server.url) as client:

        def ctrl_c() -> None:  # a real Ctrl-C, once the call is in flight
            wait_until(lambda: posts(server, "tools/call"), timeout=10)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=ctrl_c).start()
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("slow", timeout=20)
        cancel = wait_until(lambda: posts(server, "notifications/cancelled"), timeout=10)[0]
        assert "Interrupted" in cancel.json["params"]["reason"]
        assert client.call_tool("echo", {}).is_error is False
