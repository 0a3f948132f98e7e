"""One registry of secrets: a secret becomes one when it enters (a header given to ``headers=``,
a config entry or ``extra_headers``, a URL's password or ``api_key=``, a tool argument under a
secret-looking name, a bearer token), and no output shows it: an exception's message and
repr, a transport's and a client's repr, a log record, a cassette, a tracing span, the CLI.

Each entry is walked through every output, against one server on 127.0.0.1 that quotes
everything it was sent (the request line, every header, the body) back in a JSON-RPC error
and in a tool result. It is a scripted fault peer: a real server does that only by a bug,
which is what it stands for. The test checks that the secret did reach the server and came
back, so that an output without it means redaction, not a secret that was never sent.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import mcp_sync
from mcp_sync import BearerToken, Cassette, RpcError, extra_headers
from mcp_sync.cli import main as cli_main
from mcp_sync.integrations import tracing
from mcp_sync.protocol import jsonrpc
from tests.helpers.http_faults import FaultServer, Request, answer

pytestmark = pytest.mark.timeout(60)

TOOLS = [{"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "fail", "whoami")]


def quote_everything(req: Request) -> None:
    """A scripted fault peer (handshake era): ``echo`` answers with a text quoting the request
    line, every header and the body; ``fail`` fails with a JSON-RPC error quoting them."""
    msg = req.rpc_request()
    if msg is None:
        return
    if msg["method"] == "tools/list":
        req.reply_json(jsonrpc.result_response(msg["id"], {"tools": TOOLS}))
        return
    if msg["method"] != "tools/call":
        answer(req)
        return
    seen = f"{req.path} {json.dumps(req.headers)} {req.body.decode()}"
    if msg["params"]["name"] == "fail":
        req.reply_json(jsonrpc.error_response(msg["id"], -32000, f"refused: {seen}"))
    else:
        result = {"content": [{"type": "text", "text": f"you sent: {seen}"}]}
        req.reply_json(jsonrpc.result_response(msg["id"], result))


@dataclass
class Entry:
    """How the secret enters: the URL, the target (what ``transport_for`` is given), the
    ``headers=`` and ``auth=``, the block the calls run in, the calls' arguments, and the form
    the server receives it in."""

    url: Callable[[str], str] = lambda url: url
    target: Callable[[str], Any] = lambda url: url
    headers: dict[str, str] | None = None
    auth: Any = None
    block: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext
    arguments: dict[str, Any] = field(default_factory=dict)
    received: str = ""


def config_entry(url: str, secret: str) -> Any:
    servers = {"s": {"url": url, "headers": {"X-Api-Key": secret}}}
    return mcp_sync.config.parse({"mcpServers": servers})["s"]


def basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


#: Each entry, made for one secret (a new one per test: a secret another test's objects still
#: hold would be redacted for the wrong reason).
ENTRIES: dict[str, Callable[[str], Entry]] = {
    "headers=": lambda s: Entry(headers={"X-Api-Key": s}),
    "a config entry's headers": lambda s: Entry(target=lambda url: config_entry(url, s)),
    "extra_headers": lambda s: Entry(block=lambda: extra_headers({"X-Api-Key": s})),
    "the URL's password": lambda s: Entry(
        url=lambda url: url.replace("://", f"://alice:{s}@"), received=basic("alice", s)
    ),
    "the URL's api_key": lambda s: Entry(url=lambda url: f"{url}?api_key={s}"),
    "an argument": lambda s: Entry(arguments={"password": s}),
    "a bearer token": lambda s: Entry(auth=BearerToken(s)),
}


def new_secret() -> str:
    return f"s3cret-{secrets.token_hex(10)}"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.instrument(provider)
    try:
        yield exporter
    finally:
        tracing.uninstrument()


def span_texts(exporter: InMemorySpanExporter) -> list[str]:
    texts = []
    for span in exporter.get_finished_spans():
        texts += [span.name, json.dumps(dict(span.attributes or {})), str(span.status)]
        texts += [json.dumps(dict(event.attributes or {})) for event in span.events]
    return texts


@pytest.mark.parametrize("name", ENTRIES)
def test_one_secret_through_every_entry_reaches_no_output(
    name: str, tmp_path: Path, records: list[logging.LogRecord], spans: InMemorySpanExporter
) -> None:
    secret = new_secret()
    entry = ENTRIES[name](secret)
    forms = [secret, entry.received or secret]
    cassette = tmp_path / "session.jsonl"
    with FaultServer(quote_everything) as server:
        target = entry.target(entry.url(server.url))
        transport = mcp_sync.transport_for(target, headers=entry.headers, auth=entry.auth)
        shown = [repr(transport)]  # before it ever sent anything
        client = mcp_sync.Client("secrets", "1", protocol="handshake", request_timeout=10)
        client.connect(Cassette(cassette, transport, mode="all"))
        try:
            client.list_tools()  # a client already used: the block's headers come later
            with entry.block():
                echoed = client.call_tool("echo", entry.arguments).text
                with pytest.raises(RpcError) as raised:
                    client.call_tool("fail", entry.arguments)
                logging.getLogger("mcp_sync").warning("the server said %s", echoed, exc_info=True)
            shown += [repr(transport), repr(client)]
        finally:
            client.close()
    assert forms[1] in echoed  # it was sent, and came back
    error = raised.value
    logged = "\n".join(logging.Formatter("%(message)s").format(record) for record in records)
    outputs = {
        "the error": [str(error), repr(error), error.message],
        "a repr": shown,
        "the log": [logged],
        "the cassette": [cassette.read_text(encoding="utf-8")],
        "a span": span_texts(spans),
    }
    leaked = [
        where for where, texts in outputs.items() if any(f in t for f in forms for t in texts)
    ]
    assert leaked == [], f"{name}: the secret shows in {', '.join(leaked)}"
    assert "refused:" in str(error) and "you sent:" in logged  # the rest is still shown


CLI_ENTRIES: dict[str, Callable[[str, str, Path], list[str]]] = {
    "--header": lambda url, s, _: ["--url", url, "--header", f"X-Api-Key: {s}"],
    "a config file's headers": lambda url, s, tmp: ["--config", str(config_file(url, s, tmp))],
    "the URL's password": lambda url, s, _: ["--url", url.replace("://", f"://alice:{s}@")],
    "the URL's api_key": lambda url, s, _: ["--url", f"{url}?api_key={s}"],
    "an argument": lambda url, s, _: ["--url", url],
}


def config_file(url: str, secret: str, tmp: Path) -> Path:
    path = tmp / "mcp.json"
    servers = {"s": {"url": url, "headers": {"X-Api-Key": secret}}}
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", CLI_ENTRIES)
def test_the_cli_shows_no_secret_from_any_entry(name: str, tmp_path: Path) -> None:
    """What the CLI prints (with ``-vv``: its debug log too) and what ``--record`` writes."""
    secret = new_secret()
    forms = [secret, basic("alice", secret)]
    argument = [f"password={secret}"] if name == "an argument" else []
    with FaultServer(quote_everything) as server:
        for tool in ("echo", "fail"):
            out, err = io.StringIO(), io.StringIO()
            record = tmp_path / f"{tool}.jsonl"
            argv = ["-vv", "--record", str(record), "--protocol", "handshake"]
            argv += [*CLI_ENTRIES[name](server.url, secret, tmp_path), "call", tool, *argument]
            code = cli_main(argv, out=out, err=err)
            printed = out.getvalue() + err.getvalue()
            assert (code == 0) == (tool == "echo"), printed
            assert ("you sent:" if tool == "echo" else "refused:") in printed
            recorded = record.read_text(encoding="utf-8")
            assert not [f for f in forms if f in printed], f"{name}: the CLI printed the secret"
            assert not [f for f in forms if f in recorded], f"{name}: the recording shows it"
        sent = "".join(json.dumps(r.headers) + r.path + r.body.decode() for r in server.requests)
        assert any(f in sent for f in forms)
