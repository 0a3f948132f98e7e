"""Credentials never appear in text: every error path that can show a body or a header is
driven with a real HTTP server on 127.0.0.1, and str(), repr(), the log records and the CLI's
output are searched for the secret.

The servers that echo what they were sent (the request's ``Authorization`` header in a 500
body, in a JSON-RPC error message, a refresh token in a token endpoint's error) are scripted
fault peers: a real server can be made to do it only by a bug, which is what these stand for.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import re
import sys
import threading
import traceback
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

import mcp_sync
from mcp_sync import redaction
from mcp_sync.auth import BearerToken
from mcp_sync.cli import main as cli_main
from mcp_sync.errors import HttpError, InvalidHeaderValue, McpError, RpcError, TransportError
from mcp_sync.oauth import (
    ClientCredentialsProvider,
    OAuthProvider,
    TokenError,
    headless_redirect,
)
from mcp_sync.protocol import jsonrpc
from mcp_sync.transports.http import StreamableHttpTransport
from mcp_sync.transports.sse_legacy import SseTransport
from tests.helpers.http_faults import FaultServer, Request, answer
from tests.helpers.oauth_stub import Stub
from tests.helpers.support import free_port
from tests.oauth.test_oauth_refusals import REDIRECT, challenge

pytestmark = pytest.mark.timeout(60)

TOKEN = "t0ken-Zq8vW3xY7kL2mN5pR9sT"


def assert_hidden(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text, text
        assert redaction.MASK in text or not text, text


def logged(records: list[logging.LogRecord]) -> str:
    formatter = logging.Formatter("%(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in records)


def connect(url: str, **kwargs: object) -> mcp_sync.Client:
    client = mcp_sync.Client("redact", "1", protocol="handshake", request_timeout=10)
    return client.connect(StreamableHttpTransport(url, **kwargs))  # type: ignore[arg-type]


def echo_authorization_in_500(req: Request) -> None:
    """A scripted fault peer: a 500 whose body quotes the request's Authorization header."""
    req.reply(500, json.dumps({"error": "boom", "echo": req.header("authorization")}))


def echo_authorization_in_rpc_error(req: Request) -> None:
    """A scripted fault peer: a handshake-era server whose every tools/call fails with a
    JSON-RPC error whose message quotes the request's Authorization and X-Tenant headers."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "tools/list":
        tool = {"name": "whoami", "inputSchema": {"type": "object"}}
        req.reply_json(jsonrpc.result_response(msg["id"], {"tools": [tool]}))
        return
    if msg["method"] != "tools/call":
        answer(req)
        return
    quoted = f"refused {req.header('authorization')} for tenant {req.header('x-tenant')}"
    req.reply_json(jsonrpc.error_response(msg["id"], -32000, quoted, {"seen": quoted}))


# -- item 1: a header value the client cannot send --------------------------------------------


@pytest.mark.parametrize("how", ["auth", "headers", "own-session"])
def test_a_token_with_a_trailing_newline_is_named_not_quoted(how: str, records) -> None:
    kwargs: dict[str, object]
    if how == "auth":
        kwargs = {"auth": BearerToken(TOKEN + "\n")}
    elif how == "headers":
        kwargs = {"headers": {"Authorization": f"Bearer {TOKEN}\n"}}
    else:  # a session of the user's own: requests validates the headers itself
        kwargs = {"auth": BearerToken(TOKEN + "\n"), "session": requests.Session()}
    with FaultServer(answer) as server:
        with pytest.raises(McpError) as raised:
            connect(server.url, **kwargs)
        assert server.requests == []  # nothing was sent
    error = raised.value
    assert isinstance(error, InvalidHeaderValue) and isinstance(error, TransportError)
    assert error.header == "Authorization"
    assert "Authorization" in str(error) and "newline" in str(error)
    chain = []
    current: BaseException | None = error
    while current is not None:
        chain += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    for text in [*chain, logged(records)]:
        assert TOKEN not in text, text


# -- item 2: an HTTP error body echoing the token ---------------------------------------------


@pytest.mark.parametrize("kind", [StreamableHttpTransport, SseTransport])
def test_an_http_500_echoing_the_authorization_header_hides_the_token(kind, records) -> None:
    with FaultServer(echo_authorization_in_500) as server:
        transport = kind(server.url, auth=BearerToken(TOKEN))
        with pytest.raises(HttpError) as raised:
            mcp_sync.Client("redact", "1", protocol="handshake").connect(transport)
        assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"  # it was sent
    error = raised.value
    assert error.status == 500
    assert_hidden(TOKEN, str(error), repr(error), error.body)
    assert json.loads(error.body)["error"] == "boom"  # the body is still the body
    assert TOKEN not in repr(transport) and TOKEN not in logged(records)


def test_a_cookie_and_a_proxy_authorization_header_are_hidden_too() -> None:
    cookie = "sid=c00kie-Gf4hJ8kL1zX"
    proxy = "Basic cHJveHktdXNlcjpwcm94eS1wYXNz"

    def echo(req: Request) -> None:
        """A scripted fault peer: a 502 quoting the request's Cookie and Proxy-Authorization."""
        req.reply(502, f"{req.header('cookie')} {req.header('proxy-authorization')}")

    with FaultServer(echo) as server, pytest.raises(HttpError) as raised:
        connect(server.url, headers={"cookie": cookie, "Proxy-Authorization": proxy})
    for secret in (cookie, "c00kie-Gf4hJ8kL1zX", proxy, "proxy-pass"):
        assert secret not in str(raised.value) and secret not in raised.value.body


def test_a_password_or_an_api_key_in_the_url_is_hidden() -> None:
    key, password = "k3y-Abc123Def456", "pa55-Ghi789Jkl"

    def echo(req: Request) -> None:
        """A scripted fault peer: a 500 quoting the request's path and query."""
        req.reply(500, f"no such thing as {req.path}")

    with FaultServer(echo) as server:
        url = server.url.replace("http://", f"http://user:{password}@") + f"?api_key={key}"
        with pytest.raises(HttpError) as raised:
            connect(url)
    text = str(raised.value)
    assert "api_key=" in text and key not in text and password not in text


def test_the_whole_traceback_of_a_failed_connect_hides_the_key_in_the_url() -> None:
    key = "k3y-Mno345Pqr678"
    url = f"http://127.0.0.1:{free_port()}/mcp?api_key={key}"  # nothing listens there
    with pytest.raises(McpError) as raised:
        connect(url)
    error = raised.value
    shown = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert "api_key=" in shown and "refused" in shown
    assert key not in shown


def test_the_basic_credentials_of_a_session_of_your_own_are_hidden() -> None:
    session = requests.Session()
    session.auth = ("user", "pa55word-Stu901")
    with FaultServer(echo_authorization_in_500) as server:
        with pytest.raises(HttpError) as raised:
            connect(server.url, session=session)
        sent = server.requests[0].headers["authorization"]
    assert sent.startswith("Basic ")
    for secret in ("pa55word-Stu901", sent, sent.split()[1]):
        assert secret not in str(raised.value) and secret not in raised.value.body


# -- JSON-RPC errors; config values from the environment --------------------------------------


def test_an_rpc_error_echoing_the_token_hides_it_in_the_message_and_repr(records) -> None:
    with FaultServer(echo_authorization_in_rpc_error) as server:
        client = connect(server.url, auth=BearerToken(TOKEN))
        try:
            with pytest.raises(RpcError) as raised:
                client.call_tool("whoami", {})
        finally:
            client.close()
    error = raised.value
    assert error.code == -32000 and error.message.startswith("refused")
    assert_hidden(TOKEN, str(error), repr(error), error.message)
    assert TOKEN not in logged(records)


def test_a_config_header_from_the_environment_is_secret(monkeypatch) -> None:
    tenant = "tenant-Qw7Er4Ty1Ui"  # under a name that says nothing: secret by its ${VAR}
    monkeypatch.setenv("REDACT_TENANT", tenant)
    with FaultServer(echo_authorization_in_rpc_error) as server:
        config = mcp_sync.config.parse(
            {"mcpServers": {"s": {"url": server.url, "headers": {"X-Tenant": "${REDACT_TENANT}"}}}}
        )
        entry = config["s"]
        assert entry.headers["X-Tenant"] == tenant  # sent as is
        assert tenant not in repr(entry) and tenant not in repr(dict(entry.headers))
        client = mcp_sync.connect(entry, protocol="handshake", request_timeout=10)
        try:
            with pytest.raises(RpcError) as raised:
                client.call_tool("whoami", {})
        finally:
            client.close()
        assert server.of("POST")[-1].headers["x-tenant"] == tenant
    assert_hidden(tenant, str(raised.value), raised.value.message)


def test_a_stdio_server_printing_its_token_to_stderr_has_it_redacted(monkeypatch) -> None:
    token = "ghp_Rs4Tu8Vw2Xy6Za0Bc"
    monkeypatch.setenv("REDACT_GH", token)
    code = "import os, sys; sys.stderr.write('bad credentials ' + os.environ['GITHUB_TOKEN'])"
    entry = mcp_sync.config.parse(
        {
            "mcpServers": {
                "gh": {
                    "command": sys.executable,
                    "args": ["-c", code, "--token", "${REDACT_GH}"],
                    "env": {"GITHUB_TOKEN": "${REDACT_GH}"},
                }
            }
        }
    )["gh"]
    assert token not in repr(entry)
    with pytest.raises(McpError) as raised:
        mcp_sync.connect(entry, request_timeout=10)
    assert "bad credentials" in str(raised.value)
    assert_hidden(token, str(raised.value), repr(raised.value))


def test_a_stdio_server_given_a_token_by_connect_env_has_it_redacted() -> None:
    """``connect(command, env=)``, no config: the transport holds what it is given under a
    secret name."""
    token = "ghp_Hk3Lm7Np1Qr5St9Uv"
    code = "import os, sys; sys.stderr.write('bad credentials ' + os.environ['API_TOKEN'])"
    with pytest.raises(McpError) as raised:
        mcp_sync.connect([sys.executable, "-c", code], env={"API_TOKEN": token}, request_timeout=10)
    assert "bad credentials" in str(raised.value)
    assert_hidden(token, str(raised.value), repr(raised.value))


# -- OAuth: the token endpoint echoing what it was sent ---------------------------------------


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    yield server
    server.close()


REFRESH = "rt-Hk3Lm8Np2Qr6St0Uv"
ACCESS = "at-Bx5Cy9Dz4Ea8Fb2Gc"
CLIENT_SECRET = "cs-Jd7Ke1Lf5Mg9Nh3Oi"


def echoing_token_endpoint(request: dict) -> tuple[int, dict, object]:
    """A scripted fault peer: an error whose description quotes the request's form and
    Authorization header (a client secret in Basic, a refresh token, a code verifier)."""
    quoted = f"{request['form']} {request['headers'].get('Authorization')}"
    return 400, {}, {"error": "invalid_request", "error_description": quoted[:290]}


def test_a_token_endpoint_echoing_the_refresh_token_and_client_secret(stub, records) -> None:
    stub.standard(tokens=[{"access_token": ACCESS, "refresh_token": REFRESH, "expires_in": 3600}])
    stub.route("POST", "/register", (201, {"client_id": "c-1", "client_secret": CLIENT_SECRET}))
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    assert provider.on_unauthorized(challenge(stub.url)) is True
    stub.route("POST", "/token", echoing_token_endpoint)
    with pytest.raises(TokenError) as raised:
        provider.refresh()
    sent = stub.hits("/token")[-1]
    assert sent["form"]["refresh_token"] == REFRESH and "Authorization" in sent["headers"]
    error = raised.value
    assert error.description is not None
    basic = sent["headers"]["Authorization"]
    for secret in (REFRESH, CLIENT_SECRET, basic, basic.split()[1]):
        for text in (str(error), repr(error), error.description, logged(records)):
            assert secret not in text, text


def test_a_token_endpoint_echoing_the_code_and_pkce_verifier_of_a_sign_in(stub, records) -> None:
    """The code exchange's form holds the authorization code and the PKCE verifier: with both,
    anyone who reads the error could redeem the sign-in. Neither shows (before, both were in
    the message, its repr and the log)."""
    stub.standard()
    stub.route("POST", "/token", echoing_token_endpoint)
    provider = OAuthProvider(stub.url, REDIRECT, on_redirect=headless_redirect())
    with pytest.raises(TokenError) as raised:
        provider.on_unauthorized(challenge(stub.url))
    form = stub.hits("/token")[-1]["form"]
    assert form["grant_type"] == "authorization_code"
    error = raised.value
    for secret in (form["code_verifier"], form["code"]):
        for text in (str(error), repr(error), error.description or "", logged(records)):
            assert secret not in text, text


def test_a_machine_client_secret_echoed_by_the_token_endpoint_is_hidden(stub) -> None:
    stub.standard()
    stub.route("POST", "/token", echoing_token_endpoint)
    provider = ClientCredentialsProvider(stub.url, "machine", client_secret=CLIENT_SECRET)
    with pytest.raises(TokenError) as raised:
        provider.on_unauthorized(challenge(stub.url))
    basic = stub.hits("/token")[-1]["headers"]["Authorization"]
    for secret in (CLIENT_SECRET, basic.split()[1]):
        assert_hidden(secret, str(raised.value), repr(raised.value))


def test_an_id_jag_exchange_secret_and_id_token_never_show_in_an_error(stub) -> None:
    from mcp_sync.oauth import IdJagExchange, JwtBearerProvider

    id_token, idp_secret = "eyJ.id-token-Vwx234Yz", "idp-secret-Abc567De"
    exchange = IdJagExchange(
        f"{stub.base}/idp", id_token, client_id="app", client_secret=idp_secret
    )
    provider = JwtBearerProvider(stub.url, exchange, client_id="app")
    error = McpError(f"the IdP said: {id_token} / {idp_secret}")
    assert_hidden(id_token, str(error))
    assert_hidden(idp_secret, str(error))
    del provider


def test_a_dpop_private_key_never_shows_in_an_error() -> None:
    from mcp_sync.oauth import DPoPKey

    key = DPoPKey()
    provider = OAuthProvider("http://127.0.0.1:9/mcp", REDIRECT, dpop=key)
    pem = key.private_pem()
    line = pem.splitlines()[1]
    error = McpError(f"store is broken: {pem}")
    assert line not in str(error) and line not in repr(error)
    del provider


# -- the CLI ----------------------------------------------------------------------------------


def test_the_cli_never_prints_the_token(records) -> None:
    with FaultServer(echo_authorization_in_rpc_error) as server:
        for verbose in ([], ["-v"], ["-vv"]):
            out, err = io.StringIO(), io.StringIO()
            argv = [*verbose, "--url", server.url, "--header", f"Authorization: Bearer {TOKEN}"]
            code = cli_main([*argv, "call", "whoami"], out=out, err=err)
            assert code != 0
            assert "refused" in out.getvalue() + err.getvalue()
            assert TOKEN not in out.getvalue() and TOKEN not in err.getvalue()
    with FaultServer(echo_authorization_in_500) as server:
        out, err = io.StringIO(), io.StringIO()
        argv = ["-vv", "--url", server.url, "--header", f"Authorization: Bearer {TOKEN}"]
        assert cli_main([*argv, "tools"], out=out, err=err) != 0
        assert "500" in err.getvalue() and TOKEN not in out.getvalue() + err.getvalue()


def test_a_result_echoing_the_token_is_rendered_redacted_in_a_notebook() -> None:
    with FaultServer(echo_authorization_in_rpc_error) as server:
        client = connect(server.url, auth=BearerToken(TOKEN))
        try:
            listed = client.list_tools()
            result = mcp_sync.types.CallToolResult.model_validate(
                {"content": [{"type": "text", "text": f"you are Bearer {TOKEN}"}]}
            )
            for shown in (result._repr_html_(), result._repr_markdown_()):
                assert TOKEN not in shown and redaction.MASK in shown
            assert "whoami" in listed[0]._repr_html_()  # the rest is shown as it was
        finally:
            client.close()


# -- the registry itself ----------------------------------------------------------------------


def test_a_log_record_carrying_a_secret_is_redacted_on_every_mcp_sync_logger(records) -> None:
    transport = StreamableHttpTransport("http://127.0.0.1:9/mcp", auth=BearerToken(TOKEN))
    redaction.hold(transport, f"Bearer {TOKEN}")
    names = set()
    for path in Path(mcp_sync.__file__).parent.rglob("*.py"):
        names |= set(re.findall(r'getLogger\("([^"]+)"\)', path.read_text(encoding="utf-8")))
    names.add("mcp_sync.group")  # (getLogger(__name__))
    for name in sorted(names):
        try:
            raise ValueError(f"Bearer {TOKEN}")
        except ValueError:
            logging.getLogger(name).exception("seen %s", TOKEN)
    assert {record.name for record in records} == names
    assert_hidden(TOKEN, logged(records))
    del transport


def test_short_and_common_strings_are_never_redacted() -> None:
    owner = BearerToken("x")
    redaction.hold(owner, "abc1234", "none", "Bearer")  # all under 8: never held
    redaction.hold(owner, "Bearer xyz9876")  # held whole; its 7-character token is not
    text = "Bearer abc1234 none; xyz9876 alone"
    assert redaction.redact(text) == text
    assert str(McpError(text)) == text
    assert redaction.redact("sent Bearer xyz9876") == f"sent {redaction.MASK}"
    assert redaction.MIN_LENGTH == 8


def test_the_registry_holds_secrets_only_as_long_as_their_owner() -> None:
    with FaultServer(echo_authorization_in_500) as server:
        transport = StreamableHttpTransport(server.url, auth=BearerToken(TOKEN))
        with pytest.raises(HttpError):
            mcp_sync.Client("redact", "1", protocol="handshake").connect(transport)
    assert TOKEN not in redaction.redact(TOKEN)
    ref = weakref.ref(transport)
    del transport
    gc.collect()
    assert ref() is None
    assert redaction.redact(TOKEN) == TOKEN  # nothing holds it any more
    # an error made while the owner lived stays redacted after it is gone


def test_the_registry_under_threads_and_a_collector_running_finalisers_that_log(records) -> None:
    class Logs:
        """Dropped in a cycle: the collector finalises it wherever it runs, even while the
        registry's lock is held, and the finaliser logs (which redacts)."""

        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            logging.getLogger("mcp_sync").debug("finalised, still hiding %s", TOKEN)

    keeper = BearerToken("keeper")
    redaction.hold(keeper, TOKEN)
    failures: list[str] = []

    def churn(n: int) -> None:
        for i in range(300):
            owner = BearerToken("churn")
            redaction.hold(owner, f"churn-secret-{n}-{i:04d}")
            Logs()
            del owner
            if i % 50 == 0:
                gc.collect()

    def check() -> None:
        for _ in range(300):
            if TOKEN in redaction.redact(f"sent {TOKEN}"):
                failures.append("the token showed")

    threads = [threading.Thread(target=churn, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=check) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)
    gc.collect()
    assert failures == [] and TOKEN not in logged(records)
    assert any("finalised" in record.getMessage() for record in records)
    assert "churn-secret-0-0000" in redaction.redact("churn-secret-0-0000")  # owners gone
    del keeper
