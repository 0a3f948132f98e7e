"""Option values are checked where they are made (``mcp_sync/_rules/numbers.py``).

The walk finds every parameter typed ``int`` or ``float`` of every public class, method and
function of mcp_sync; each is in :data:`SURFACES`, which says how to reach it, or in
:data:`NOT_OPTIONS`, which says why it is no option a user sets. Then each option is given
NaN, a string, a bool, a fraction where a whole number is meant and an infinity where none
makes sense, and must raise ``TypeError`` or ``ValueError`` naming it, before anything runs
(a server that would answer is there to show a value that slipped through).

Before: ``CircuitBreaker(cool_down=nan)`` left a breaker open forever, ``threshold=nan`` never
opened it, ``threshold=2.5`` and ``True`` were taken, ``threshold="3"`` raised a ``TypeError``
naming nothing; ``Backoff(initial_delay=nan)`` and ``Client(request_timeout=nan)`` were taken,
a call's ``timeout=nan`` waited for ever and ``timeout="3"`` failed deep in the session.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import mcp_sync
from mcp_sync import oauth
from mcp_sync.testing import MockServer
from mcp_sync.types import CallToolResult, Task


def _installed(module: str) -> bool:
    """``module`` imports here: an integration whose framework is not installed (CrewAI has a
    venv of its own; langchain-core, pydantic-ai and google-genai need Python 3.11) does not."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] != "mcp_sync":
            return False
        raise
    return True


NUMERIC = re.compile(r"\b(int|float)\b")

#: Parameters typed as numbers that are not options a user sets, and why.
NOT_OPTIONS = {
    # a transport's send: the deadline the session computed (the call's timeout, checked)
    "mcp_sync.transports.base.Transport.send:deadline": "computed by the session",
    "mcp_sync.transports.memory.InMemoryTransport.send:deadline": "computed by the session",
    "mcp_sync.transports.http.StreamableHttpTransport.send:deadline": "computed by the session",
    "mcp_sync.transports.sse_legacy.SseTransport.send:deadline": "computed by the session",
    "mcp_sync.transports._lines.LineTransport.send:deadline": "computed by the session",
    "mcp_sync.cassette.Cassette.send:deadline": "computed by the session",
    "mcp_sync.integrations.inprocess.InProcessTransport.send:deadline": "computed by the session",
    # a run of a Backoff: steps its loops take with what a server sent, read by
    # backoff.retry_after (and the SSE parser's digits-only retry field)
    "mcp_sync.backoff.Backoff.increment:retry_after": "a server's Retry-After, parsed",
    "mcp_sync.backoff.Backoff.next_delay:server_retry": "a stream's retry field, parsed",
    "mcp_sync.backoff.Backoff.stream_ended:lived": "measured by the stream loop",
    "mcp_sync.backoff.Backoff.stream_ended:server_retry": "a stream's retry field, parsed",
    "mcp_sync.backoff.Backoff.delay:attempt": "counted by the policy",
    "mcp_sync.backoff.Backoff.delay:retry_after": "a server's Retry-After, parsed",
    "mcp_sync.backoff.Backoff.delay:server_retry": "a stream's retry field, parsed",
    # records: what the library saw or made, kept as it was, not settings
    "mcp_sync._connection.breaker.BreakerStatus.__init__:failures": "a breaker's state, as read",
    "mcp_sync._connection.breaker.BreakerStatus.__init__:times_opened": "a breaker's state, as read",
    "mcp_sync._connection.breaker.BreakerStatus.__init__:retry_in": "a breaker's state, as read",
    "mcp_sync.auth.UnauthorizedContext.__init__:status": "an HTTP status received",
    "mcp_sync.auth.UnauthorizedContext.__init__:deadline": "the request's, computed",
    "mcp_sync.auth.RequestContext.__init__:deadline": "the request's, computed",
    "mcp_sync.oauth.registration.ClientInfo.__init__:secret_expires_at": "a server's answer",
    "mcp_sync.oauth.device.DeviceCode.__init__:expires_in": "a server's answer",
    "mcp_sync.oauth.device.DeviceCode.__init__:interval": "a server's answer",
    "mcp_sync.oauth.device.DeviceCode.__init__:issued_at": "a clock reading",
    "mcp_sync.oauth.flow.PendingAuthorization.__init__:created_at": "a clock reading",
    "mcp_sync.oauth.flow.TokenSet.__init__:expires_at": "a server's answer",
    "mcp_sync.oauth.flow.TokenSet.__init__:issued_at": "a clock reading",
    "mcp_sync.oauth.flow.TokenSet.expires_within:seconds": "a question, not a setting",
    "mcp_sync.oauth.flow.TokenSet.refresh_due:margin": "the provider's refresh_margin",
    # wire values, any JSON number the protocol allows
    "mcp_sync.protocol.jsonrpc.ErrorResponse.__init__:code": "a JSON-RPC error code",
    "mcp_sync.protocol.jsonrpc.error_response:code": "a JSON-RPC error code",
    "mcp_sync.protocol.headers.encode_header_value:value": "an Mcp-Param-* header's value",
    "mcp_sync.testing.RequestContext.progress:progress": "a scripted server's message",
    "mcp_sync.testing.RequestContext.progress:total": "a scripted server's message",
    "mcp_sync.protocol.pagination.follow_cursors:max_pages": "the library's own constant",
    "mcp_sync.transports.stdio.PipeTransport.__init__:process_or_streams": "pipes' descriptors",
    "mcp_sync.transports.sandbox.sandboxed_argv:report": "a pipe's descriptor, the transport's",
    "mcp_sync.terminal.safe:left_out": "a count the caller made of what it dropped",
}


def _defined_where(function: Any) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def discovered() -> dict[str, inspect.Parameter]:
    """``"module.Qualname.function:parameter"`` of every parameter annotated ``int`` or
    ``float`` (a callable's own parameters aside) in mcp_sync's public modules' ``__all__``."""
    modules = [mcp_sync]
    for info in pkgutil.walk_packages(mcp_sync.__path__, "mcp_sync."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or not _installed(info.name):
            continue
        modules.append(importlib.import_module(info.name))
    functions: dict[str, Any] = {}
    for module in modules:
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if inspect.isclass(value) and not issubclass(value, BaseException):
                members = [("__init__", value.__init__)]
                for attr, member in inspect.getmembers(value):
                    if isinstance(member, property) and member.fset is not None:
                        members.append((attr, member.fset))
                    elif not attr.startswith("_") and inspect.ismethod(member):
                        members.append((attr, member.__func__))  # a classmethod
                    elif not attr.startswith("_") and inspect.isfunction(member):
                        members.append((attr, member))
                for attr, member in members:
                    if inspect.isfunction(member) and member.__module__.startswith("mcp_sync"):
                        where = f"{_defined_where(member)}"
                        if attr != member.__name__:  # a property's setter
                            where = f"{value.__module__}.{value.__qualname__}.{attr}"
                        functions.setdefault(where, member)
            elif inspect.isfunction(value) and value.__module__.startswith("mcp_sync"):
                functions.setdefault(_defined_where(value), value)
    found = {}
    for where, function in functions.items():
        for parameter in inspect.signature(function).parameters.values():
            annotation = str(parameter.annotation)
            if NUMERIC.search(annotation) and not annotation.startswith("Callable"):
                found[f"{where}:{parameter.name}"] = parameter
    return found


# -- how to reach each option --------------------------------------------------------------


@dataclass
class Context:
    """What the surfaces are reached through: a client of a scripted server that answers
    everything at once (so that a value let through shows as no error), its task handle, a
    group, a config of one command."""

    server: MockServer
    client: mcp_sync.Client
    task: Any
    callbacks: oauth.CallbackServer
    tmp: Path
    closers: list[Callable[[], None]] = field(default_factory=list)

    @property
    def config(self) -> dict[str, Any]:
        return {"mcpServers": {"true": {"command": "true"}}}


@dataclass(frozen=True)
class Option:
    """``reach(context, value)`` gives the option ``value``; ``whole``: a whole number is
    meant; ``infinite``: ``math.inf`` is taken (a timeout that never ends); ``name``: what
    the error calls it, when not the parameter's name (a property's setter)."""

    reach: Callable[[Context, Any], Any]
    whole: bool = False
    infinite: bool = False
    name: str | None = None


def _group(ctx: Context, **options: Any) -> mcp_sync.ClientGroup:
    group = mcp_sync.ClientGroup(**options)
    ctx.closers.append(group.close)
    return group


def _method(path: str, *args: Any) -> Callable[[Context, Any], Any]:
    """A per-call ``timeout=`` of ``ctx.<path>(*args)``."""

    def reach(ctx: Context, value: Any) -> Any:
        target: Any = ctx
        for part in path.split("."):
            target = getattr(target, part)
        return target(*args, timeout=value)

    return reach


def _keyword(make: Callable[..., Any], name: str) -> Callable[[Context, Any], Any]:
    return lambda ctx, value: make(**{name: value})


TIMEOUT = {"infinite": True}
STATES = itertools.count()
CLIENT_CALLS = {
    "discover": (),
    "request": ("ping",),
    "notify": ("notifications/x",),
    "ping": (),
    "set_logging_level": ("info",),
    "list_tools": (),
    "list_tools_page": (),
    "call_tool": ("echo",),
    "list_resources": (),
    "list_resources_page": (),
    "list_resource_templates": (),
    "list_resource_templates_page": (),
    "read_resource": ("mem://a",),
    "subscribe_resource": ("mem://a", lambda uri: None),
    "unsubscribe_resource": ("mem://a",),
    "list_prompts": (),
    "list_prompts_page": (),
    "get_prompt": ("p",),
    "complete": ({"type": "ref/prompt", "name": "p"}, "a", "b"),
}


class _Lazy:
    """A module imported on first use."""

    def __init__(self, load: Callable[[str], Any], name: str) -> None:
        self._load, self._name = load, name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(self._name), attr)


def _surfaces() -> dict[str, Option]:
    from mcp_sync import llm
    from mcp_sync.oauth.redis_store import RedisStateStore

    def integration(name: str) -> Any:  # imported when reached (it may not be installed)
        return importlib.import_module(f"mcp_sync.integrations.{name}")

    langchain, pydantic_ai, openai_agents, google_genai = (
        _Lazy(integration, name)
        for name in ("langchain", "pydantic_ai", "openai_agents", "google_genai")
    )

    client = "mcp_sync.client.Client"
    tasks = "mcp_sync._client.tasks.Tasks"
    handle = "mcp_sync._client.tasks.ToolTask"
    group = "mcp_sync.group.ClientGroup"
    url = "http://127.0.0.1:9/mcp"
    result = CallToolResult.model_validate({"content": []})
    rows: dict[str, Option] = {
        **{
            f"mcp_sync._connection.breaker.CircuitBreaker.__init__:{name}": Option(
                _keyword(mcp_sync.CircuitBreaker, name), whole=name == "threshold"
            )
            for name in ("threshold", "cool_down")
        },
        **{
            f"mcp_sync.{where}.__init__:{name}": Option(
                _keyword(kind, name), whole=name in ("max_retries", "failures")
            )
            for where, kind in (
                ("backoff.Backoff", mcp_sync.Backoff),
                ("transports.http.ReconnectOptions", mcp_sync.ReconnectOptions),
            )
            for name in (
                "initial_delay",
                "max_delay",
                "max_retries",
                "multiplier",
                "jitter",
                "failures",
                "retry_after",
            )
        },
        **{
            f"{client}.__init__:{name}": Option(
                _keyword(mcp_sync.Client, name),
                whole=name == "max_input_rounds",
                infinite=name in ("request_timeout", "max_total_timeout"),
            )
            for name in (
                "request_timeout",
                "max_total_timeout",
                "probe_timeout",
                "max_input_rounds",
            )
        },
        f"{client}.max_input_rounds:rounds": Option(
            lambda ctx, value: setattr(ctx.client, "max_input_rounds", value),
            whole=True,
            name="max_input_rounds",
        ),
        **{
            f"{client}.{name}:timeout": Option(_method(f"client.{name}", *args), **TIMEOUT)
            for name, args in CLIENT_CALLS.items()
        },
        f"{client}.listen:timeout": Option(
            lambda ctx, value: ctx.client.listen(
                tools_list_changed=True, callback=lambda _: None, timeout=value
            ),
            **TIMEOUT,
        ),
        f"{client}.connect:timeout": Option(
            lambda ctx, value: mcp_sync.Client().connect(
                ctx.server.client_transport, timeout=value
            ),
            **TIMEOUT,
        ),
        # (its client options are Client's, **Unpack[ClientOptions]: walked there)
        "mcp_sync._client.connect.connect:timeout": Option(
            lambda ctx, value: mcp_sync.connect(["true"], timeout=value), **TIMEOUT
        ),
        "mcp_sync.config.connect_all:timeout": Option(
            lambda ctx, value: ctx.closers.append(
                mcp_sync.config.connect_all(ctx.config, timeout=value).close
            ),
            **TIMEOUT,
        ),
        "mcp_sync.config.Config.connect:timeout": Option(
            lambda ctx, value: mcp_sync.config.resolve(ctx.config).connect("true", timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync._client.targets.ServerConfig.connect:timeout": Option(
            lambda ctx, value: mcp_sync.config.resolve(ctx.config)["true"].connect(timeout=value),
            **TIMEOUT,
        ),
        f"{group}.__init__:timeout": Option(
            lambda ctx, value: _group(ctx, clients={"t": ["true"]}, timeout=value), **TIMEOUT
        ),
        f"{group}.add:timeout": Option(
            lambda ctx, value: _group(ctx).add("t", ["true"], timeout=value), **TIMEOUT
        ),
        **{
            f"{group}.{name}:timeout": Option(
                lambda ctx, value, name=name: getattr(_group(ctx), name)(timeout=value), **TIMEOUT
            )
            for name in (
                "list_tools",
                "list_prompts",
                "list_resources",
                "list_resource_templates",
                "list_skills",
            )
        },
        f"{tasks}.call_tool:ttl": Option(
            lambda ctx, value: ctx.client.tasks.call_tool("job", ttl=value), whole=True
        ),
        f"{tasks}.call_tool:timeout": Option(_method("client.tasks.call_tool", "job"), **TIMEOUT),
        **{
            f"{tasks}.{name}:timeout": Option(_method(f"client.tasks.{name}", *args), **TIMEOUT)
            for name, args in (
                ("get", ("t1",)),
                ("result", ("t1",)),
                ("list", ()),
                ("cancel", ("t1",)),
                ("update", ("t1", {})),
                ("answer_input_requests", ({},)),
            )
        },
        **{
            f"{handle}.{name}:timeout": Option(_method(f"task.{name}"), **TIMEOUT)
            for name in ("refresh", "wait", "result", "cancel")
        },
        **{
            f"mcp_sync.skills.Skills.{name}:timeout": Option(
                _method(f"client.skills.{name}", *args), **TIMEOUT
            )
            for name, args in (("list", ()), ("get", ("skill://a",)), ("load", ("skill://a",)))
        },
        "mcp_sync.abort.AbortSignal.wait:timeout": Option(
            lambda ctx, value: mcp_sync.AbortController().signal.wait(value)
        ),
        "mcp_sync.abort.AbortSignal.timeout:seconds": Option(
            lambda ctx, value: mcp_sync.AbortSignal.timeout(value)
        ),
        **{
            f"mcp_sync.transports.{where}.__init__:{name}": Option(
                lambda ctx, value, make=make, name=name: make(**{name: value}),
                whole=name != "close_timeout",
            )
            for where, make in (
                ("stdio.StdioTransport", lambda **kw: mcp_sync.StdioTransport("true", **kw)),
                ("_lines.LineTransport", lambda **kw: mcp_sync.StdioTransport("true", **kw)),
                (
                    "stdio.PipeTransport",
                    lambda **kw: mcp_sync.transports.PipeTransport((0, 1), **kw),
                ),
            )
            for name in ("max_message_bytes", "max_stderr_bytes", "close_timeout")
        },
        **{
            f"mcp_sync.transports.{where}.__init__:{name}": Option(
                lambda ctx, value, make=make, name=name: make(url, **{name: value}),
                whole=name == "max_message_bytes",
            )
            for where, make in (
                ("http.StreamableHttpTransport", mcp_sync.StreamableHttpTransport),
                ("sse_legacy.SseTransport", mcp_sync.transports.SseTransport),
            )
            for name in ("max_message_bytes", "connect_timeout")
        },
        **{
            f"mcp_sync.transports.sandbox.Sandbox.__init__:{name}": Option(
                _keyword(mcp_sync.Sandbox, name), whole=True
            )
            for name in ("max_memory", "max_cpu_seconds", "max_processes", "max_open_files")
        },
        **{
            f"mcp_sync.llm.{name}:max_text_bytes": Option(
                lambda ctx, value, name=name, args=args: getattr(llm, name)(
                    *args, max_text_bytes=value
                ),
                whole=True,
            )
            for name, args in (
                ("to_llm_content", (result,)),
                ("to_llm_text", (result,)),
                ("anthropic_tool_result", ("id", result)),
                ("openai_tool_message", ("id", result)),
            )
        },
        "mcp_sync.protocol.types.tools.CallToolResult.to_llm_content:max_text_bytes": Option(
            lambda ctx, value: result.to_llm_content(max_text_bytes=value), whole=True
        ),
        "mcp_sync.pins.record:timeout": Option(
            lambda ctx, value: mcp_sync.pins.record(ctx.client, ctx.tmp / "pins", timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.testing.MockServer.request:timeout": Option(
            lambda ctx, value: ctx.server.request("ping", timeout=value)
        ),
        "mcp_sync.testing.MockServer.wait_for:timeout": Option(
            lambda ctx, value: ctx.server.wait_for("ping", timeout=value)
        ),
        "mcp_sync.integrations.langchain.langchain_tools:timeout": Option(
            lambda ctx, value: langchain.langchain_tools(ctx.client, timeout=value), **TIMEOUT
        ),
        "mcp_sync.integrations.langchain.langchain_tool:timeout": Option(
            lambda ctx, value: langchain.langchain_tool(
                ctx.client, ctx.client.list_tools()[0], timeout=value
            ),
            **TIMEOUT,
        ),
        "mcp_sync.integrations._langchain_loaders.load_mcp_blobs:timeout": Option(
            lambda ctx, value: langchain.load_mcp_blobs(ctx.client, ["mem://a"], timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations._langchain_loaders.load_mcp_documents:timeout": Option(
            lambda ctx, value: langchain.load_mcp_documents(ctx.client, ["mem://a"], timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations._langchain_loaders.load_mcp_prompt:timeout": Option(
            lambda ctx, value: langchain.load_mcp_prompt(ctx.client, "p", timeout=value),
            **TIMEOUT,
        ),
        **{
            f"mcp_sync.integrations.pydantic_ai.{where}:max_retries": Option(
                lambda ctx, value: pydantic_ai.pydantic_ai_toolset(ctx.client, max_retries=value),
                whole=True,
            )
            for where in ("pydantic_ai_toolset", "McpToolset.__init__")
        },
        "mcp_sync.integrations.pydantic_ai.pydantic_ai_toolset:timeout": Option(
            lambda ctx, value: pydantic_ai.pydantic_ai_toolset(ctx.client, timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.pydantic_ai.pydantic_ai_tool:timeout": Option(
            lambda ctx, value: pydantic_ai.pydantic_ai_tool(
                ctx.client, ctx.client.list_tools()[0], timeout=value
            ),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.openai_agents.openai_agents_tools:timeout": Option(
            lambda ctx, value: openai_agents.openai_agents_tools(ctx.client, timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.openai_agents.openai_agents_tool:timeout": Option(
            lambda ctx, value: openai_agents.openai_agents_tool(
                ctx.client, ctx.client.list_tools()[0], timeout=value
            ),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.openai_agents.openai_agents_server:timeout": Option(
            lambda ctx, value: openai_agents.openai_agents_server(ctx.client, timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.google_genai.genai_functions:timeout": Option(
            lambda ctx, value: google_genai.genai_functions(ctx.client, timeout=value),
            **TIMEOUT,
        ),
        "mcp_sync.integrations.google_genai.function_response:timeout": Option(
            lambda ctx, value: google_genai.function_response(
                ctx.client, google_genai.types.FunctionCall(name="echo", args={}), timeout=value
            ),
            **TIMEOUT,
        ),
        **{
            f"mcp_sync.oauth.{where}.__init__:{name}": Option(
                lambda ctx, value, make=make, name=name: make(**{name: value}),
                whole=name == "max_step_up",
            )
            for where, make, names in (
                (
                    "provider.OAuthProvider",
                    lambda **kw: oauth.OAuthProvider(url, **kw),
                    ("max_step_up", "refresh_margin", "timeout"),
                ),
                (
                    "client_credentials.ClientCredentialsProvider",
                    lambda **kw: oauth.ClientCredentialsProvider(
                        url, "id", client_secret="s", **kw
                    ),
                    ("refresh_margin", "timeout"),
                ),
                (
                    "jwt_bearer.JwtBearerProvider",
                    lambda **kw: oauth.JwtBearerProvider(url, "assertion", client_id="i", **kw),
                    ("refresh_margin", "timeout"),
                ),
                (
                    "jwt_bearer.IdJagExchange",
                    lambda **kw: oauth.IdJagExchange(url, "token", client_id="i", **kw),
                    ("timeout",),
                ),
                (
                    "callback.CallbackServer",
                    lambda **kw: oauth.CallbackServer(**kw),
                    ("port", "timeout"),
                ),
                (
                    "redis_store.RedisStateStore",
                    lambda **kw: RedisStateStore("redis://127.0.0.1:9/0", **kw),
                    ("lock_ttl", "lock_wait", "command_timeout"),
                ),
            )
            for name in names
        },
        **{
            f"mcp_sync.oauth.callback.CallbackServer.listen:{name}": Option(
                lambda ctx, value, name=name: ctx.closers.append(
                    oauth.CallbackServer.listen(**{name: value}).close
                ),
                whole=name == "port",
            )
            for name in ("port", "timeout")
        },
        "mcp_sync.terminal.safe:limit": Option(
            lambda ctx, value: mcp_sync.terminal.safe("text", limit=value), whole=True
        ),
        "mcp_sync.oauth.callback.headless_redirect:timeout": Option(
            lambda ctx, value: oauth.headless_redirect(timeout=value)
        ),
        "mcp_sync.oauth.callback.PendingCallback.wait:timeout": Option(
            lambda ctx, value: ctx.callbacks.wait_for_callback(f"state {next(STATES)}").wait(value),
            **TIMEOUT,
        ),
        "mcp_sync.oauth.device.DeviceFlowProvider.sign_in:timeout": Option(
            lambda ctx, value: oauth.DeviceFlowProvider(url).sign_in(timeout=value), **TIMEOUT
        ),
    }
    return rows


SURFACES = {
    where: option
    for where, option in _surfaces().items()
    if not where.startswith("mcp_sync.integrations.") or _installed(".".join(where.split(".")[:3]))
}


def test_every_numeric_parameter_of_the_public_api_is_walked_or_said_to_be_no_option():
    found = set(discovered())
    assert sorted(found - SURFACES.keys() - NOT_OPTIONS.keys()) == []  # a new option: add it
    assert sorted((SURFACES.keys() | NOT_OPTIONS.keys()) - found) == []  # one gone or renamed


def _bad_values(option: Option) -> Iterator[Any]:
    yield from (math.nan, "3", True, False, b"3", [3])
    if option.whole:
        yield from (2.5, 3.0)
    if not option.infinite:
        yield math.inf
    yield -math.inf


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Context]:
    server = MockServer(
        capabilities={
            "tools": {},
            "resources": {"subscribe": True},
            "prompts": {},
            "logging": {},
            "completions": {},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
        }
    )
    task = {"taskId": "t1", "status": "completed"}
    for method, answer in {
        "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
        "tools/call": {"content": []},
        "resources/list": {"resources": []},
        "resources/templates/list": {"resourceTemplates": []},
        "resources/read": {"contents": []},
        "prompts/list": {"prompts": []},
        "prompts/get": {"messages": []},
        "completion/complete": {"completion": {"values": []}},
        "tasks/get": task,
        "tasks/list": {"tasks": []},
        "tasks/cancel": task,
        "tasks/result": {"content": []},
    }.items():
        server.handle(method)(lambda params, ctx, answer=answer: answer)
    for method in ("logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        server.handle(method)(lambda params, ctx: {})
    client = server.connect(mcp_sync.Client(request_timeout=5))
    handle = mcp_sync.ToolTask(client.tasks, Task.model_validate(task))
    callbacks = oauth.CallbackServer.listen()
    ctx = Context(server, client, handle, callbacks, tmp_path_factory.mktemp("options"))
    yield ctx
    for close in ctx.closers:
        close()
    callbacks.close()
    client.close()


@pytest.mark.parametrize("where", sorted(SURFACES))
def test_every_option_refuses_what_is_no_number_of_its_kind_by_name(
    where: str, context: Context
) -> None:
    option = SURFACES[where]
    name = option.name or where.rpartition(":")[2]
    named = re.compile(rf"\b{name}\b.* must be ")
    for value in _bad_values(option):
        with pytest.raises((TypeError, ValueError)) as refused:
            option.reach(context, value)
        assert named.search(str(refused.value)), (where, value, refused.value)
        assert not isinstance(refused.value, mcp_sync.McpError), (where, value, refused.value)


def test_infinity_is_a_timeout_that_never_ends_and_zero_is_taken_where_it_means_something():
    assert mcp_sync.Client(request_timeout=math.inf).request_timeout == math.inf
    assert mcp_sync.Client(max_total_timeout=math.inf).max_total_timeout == math.inf
    assert mcp_sync.Backoff(initial_delay=0, jitter=0).delay(1) == 0
    assert mcp_sync.CircuitBreaker(threshold=1, cool_down=0).cool_down == 0


def test_a_client_option_set_later_is_checked_too() -> None:
    client = mcp_sync.Client()
    for name in ("request_timeout", "max_total_timeout", "probe_timeout"):
        with pytest.raises(ValueError, match=rf"{name} must be a number, not NaN"):
            setattr(client, name, math.nan)
    with pytest.raises(TypeError, match="max_input_rounds must be a whole number, not 2.5"):
        client.max_input_rounds = 2.5  # type: ignore[assignment]
    assert client.request_timeout == 30.0 and client.max_input_rounds == 8  # left as it was


def test_numpy_and_fractions_numbers_are_numbers():
    """A number of another library's kind (a ``Fraction``; numpy's, where installed) is a
    number: what is refused is what is not one."""
    from fractions import Fraction

    assert mcp_sync.CircuitBreaker(threshold=3, cool_down=Fraction(1, 2)).cool_down == 0.5
    numpy = sys.modules.get("numpy") or pytest.importorskip("numpy")
    assert mcp_sync.CircuitBreaker(threshold=numpy.int64(3)).threshold == 3
