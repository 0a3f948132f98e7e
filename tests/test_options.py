"""One client option, one declaration: ``ClientOptions`` (``mcp_sync/_connection/options.py``) names and
types it; ``Client()``'s keyword gives its default and its docstring bullet says what it does;
the frozen ``ConnectionOptions`` value the connection runs by holds it (built by keyword), or
another part of the client does; the ``Option`` descriptors read and set it; and every function
that passes options on takes ``**Unpack[ClientOptions]`` instead of listing them again. Each
check names the option that is out of step, and where."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import typing

import pytest
from typing_extensions import Unpack

import mcp_sync
from mcp_sync._client.facade import Option
from mcp_sync._client.targets import ConnectOptions, TransportOptions
from mcp_sync._connection.options import ClientOptions, ConnectionOptions
from mcp_sync.auth import AuthProvider
from mcp_sync.transports._http.options import HttpOptions

#: Keywords that become something other than the field of their own name, and what.
BECOME = {
    "name": "client_info",
    "version": "client_info",
    "title": "client_info",
    "protocol_version": "handshake_version",
    "auto_reinitialize": "recovery",
}
#: Keywords kept by another part of the client, not by its connection.
ELSEWHERE = {"roots": "handlers", "capabilities": "handlers", "pin": "tools"}

DECLARED = list(ClientOptions.__annotations__)
#: The options whose names mean nothing but a client option (``name``, ``protocol``, ``roots``
#: or ``cache`` are also other functions' own parameters).
OWN_WORDS = {k for k in DECLARED if "_" in k} - {"on_close"}
KEYWORDS = [p for p in inspect.signature(mcp_sync.Client.__init__).parameters if p != "self"]
FIELDS = [f.name for f in dataclasses.fields(ConnectionOptions)]


def _hints(function: typing.Callable[..., object]) -> dict[str, object]:
    return typing.get_type_hints(
        function, localns={"AuthProvider": AuthProvider, "Client": mcp_sync.Client}
    )


def test_every_keyword_of_client_is_declared_once_in_client_options_with_its_type():
    missing = [k for k in KEYWORDS if k not in DECLARED]
    assert missing == [], (
        f"Client() takes {missing}: declare them in ClientOptions (_connection/options.py)"
    )
    stray = [k for k in DECLARED if k not in KEYWORDS]
    assert stray == [], f"ClientOptions declares {stray}, which Client() does not take"
    assert DECLARED == KEYWORDS, "ClientOptions lists the options in Client()'s order"
    declared, client = typing.get_type_hints(ClientOptions), _hints(mcp_sync.Client.__init__)
    wrong = [k for k in KEYWORDS if declared[k] != client[k]]
    assert wrong == [], f"ClientOptions types {wrong} otherwise than Client() does"


def test_every_option_is_documented_in_the_client_docstring():
    doc = mcp_sync.Client.__doc__ or ""
    undocumented = [k for k in DECLARED if f"``{k}``" not in doc and f"``{k}=" not in doc]
    assert undocumented == [], f"Client's docstring has no bullet for {undocumented}"


def test_every_option_is_a_field_or_names_where_it_goes_and_every_field_an_option():
    lost = [k for k in DECLARED if k not in FIELDS and k not in BECOME and k not in ELSEWHERE]
    assert lost == [], f"{lost}: no ConnectionOptions field, and BECOME/ELSEWHERE say nothing"
    orphans = [f for f in FIELDS if f not in DECLARED and f not in BECOME.values()]
    assert orphans == [], f"ConnectionOptions fields {orphans} come from no option"


def test_every_option_descriptor_reads_and_sets_a_field():
    descriptors = [n for n, v in vars(mcp_sync.Client).items() if isinstance(v, Option)]
    assert descriptors
    stray = [n for n in descriptors if n not in FIELDS]
    assert stray == [], f"Option descriptors {stray} name no ConnectionOptions field"


def _functions():
    """Every function and method of the package (the optional integrations included where
    their framework is installed)."""
    for info in pkgutil.walk_packages(mcp_sync.__path__, "mcp_sync."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for value in vars(module).values():
            if getattr(value, "__module__", None) != info.name:
                continue
            if inspect.isfunction(value):
                yield f"{info.name}.{value.__qualname__}", value
            elif inspect.isclass(value):
                for attr in vars(value).values():
                    if inspect.isfunction(attr):
                        yield f"{info.name}.{attr.__qualname__}", attr


def test_no_function_but_client_lists_the_options_again():
    """Before, ``connect()`` spelt out all 17 (a sixth place for each option to be added
    to); the functions that pass options on take ``**Unpack[ClientOptions]`` (or
    ``ConnectOptions``, which is it and the HTTP settings)."""
    passing_on = []
    for where, function in _functions():
        parameters = inspect.signature(function).parameters
        listed = [name for name in parameters if name in OWN_WORDS]
        if where.endswith(("client.Client.__init__", "ConnectionOptions.__init__")):
            continue  # the keywords and the value they become
        assert len(listed) < 2, f"{where} lists the client options {listed}: take them as one"
        for parameter in parameters.values():
            if parameter.kind is parameter.VAR_KEYWORD and "Options]" in str(parameter.annotation):
                passing_on.append(where)
                assert str(parameter.annotation) in (
                    "Unpack[ClientOptions]",
                    "Unpack[ConnectOptions]",
                    "Unpack[TransportOptions]",
                    "Unpack[HttpOptions]",
                ), where
    assert {"mcp_sync._client.connect.connect", "mcp_sync.group.ClientGroup.add"} <= set(passing_on)
    assert ConnectOptions.__annotations__.keys() == (
        ClientOptions.__annotations__.keys() | TransportOptions.__annotations__.keys()
    )
    assert HttpOptions.__annotations__.keys() < TransportOptions.__annotations__.keys()


#: How a target is reached, besides the wire-level settings: ``TransportOptions``' own keys.
REACH = TransportOptions.__annotations__.keys() - HttpOptions.__annotations__.keys()


def test_no_function_but_a_transport_lists_how_a_target_is_reached_again():
    """Before, ``headers``, ``auth``, ``env``, ``cwd``, ``on_stderr`` and ``sandbox`` were
    spelt out by ``connect()``, ``transport_for``, ``open_client``, the pytest factory twice
    and the CLI's recorder, and the factory's cassette lost the HTTP settings on the way; now
    ``TransportOptions`` declares them once. A transport's own constructor takes the ones it
    uses (that is where they end)."""
    assert {"headers", "auth", "env", "cwd", "on_stderr", "sandbox"} == REACH
    for where, function in _functions():
        if where.startswith(("mcp_sync.transports.", "mcp_sync.integrations.")):
            continue
        if function.__code__.co_filename == "<string>":
            continue  # (a dataclass's __init__: ServerConfig's fields are an entry's own)
        listed = [n for n in inspect.signature(function).parameters if n in REACH]
        assert len(listed) < 2, f"{where} lists {listed}: take **Unpack[TransportOptions]"


def test_connect_and_the_pytest_factory_take_the_options_as_one_declaration():
    from mcp_sync.config import Config
    from mcp_sync.pytest_plugin import McpClientFactory
    from mcp_sync.transports.base import Transport

    localns = {
        "AuthProvider": AuthProvider,
        "Client": mcp_sync.Client,
        "Config": Config,
        "ConnectOptions": ConnectOptions,
        "Unpack": Unpack,
        "Target": object,
        "Sandbox": mcp_sync.Sandbox,
        "Transport": Transport,
    }
    connect = typing.get_type_hints(mcp_sync.connect, localns=localns)
    factory = typing.get_type_hints(McpClientFactory.__call__, localns=localns)
    assert connect["options"] == factory["options"] == Unpack[ConnectOptions]
    del connect["target"], factory["target"]
    assert connect == factory  # the factory's own keywords are connect()'s


def test_the_connection_is_handed_one_options_value_built_by_keyword():
    """Before, ``ConnectionOptions`` was built from 11 positional arguments (two strs and two
    floats side by side: a swap would go unnoticed); its fields are keyword-only now."""
    from mcp_sync._connection.connection import Connection

    assert list(inspect.signature(Connection.__init__).parameters) == ["self", "options"]
    kinds = {p.kind for p in inspect.signature(ConnectionOptions).parameters.values()}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}


def test_each_keyword_reaches_its_own_field():
    """Distinct values for every option: a keyword passed into the wrong field shows here."""
    on_close = lambda cause: None  # noqa: E731
    backoff = mcp_sync.Backoff(initial_delay=0.5)
    client = mcp_sync.Client(
        "n",
        "v",
        title="t",
        protocol="handshake",
        protocol_version="2025-06-18",
        request_timeout=11.0,
        max_total_timeout=12.0,
        strict_capabilities=False,
        probe_timeout=13.0,
        max_input_rounds=14,
        cache=True,
        recovery=backoff,
        on_close=on_close,
    )
    options = client._connection.options
    assert (options.client_info.name, options.client_info.version) == ("n", "v")
    assert options.client_info.title == "t"
    assert (options.protocol, options.handshake_version) == ("handshake", "2025-06-18")
    assert (options.request_timeout, options.max_total_timeout) == (11.0, 12.0)
    assert (options.probe_timeout, options.max_input_rounds) == (13.0, 14)
    assert options.strict_capabilities is False and options.cache is True
    assert options.recovery is backoff and options.on_close is on_close
    assert client.max_input_rounds == 14


def test_setting_an_option_swaps_in_a_new_frozen_value():
    client = mcp_sync.Client(request_timeout=5.0)
    before = client._connection.options
    client.request_timeout = 7.5
    assert client.request_timeout == 7.5 and client._connection.request_timeout == 7.5
    assert before.request_timeout == 5.0  # the old value, unchanged, for a reader holding it
    with pytest.raises(dataclasses.FrozenInstanceError):
        client._connection.options.request_timeout = 1.0  # type: ignore[misc]


def test_a_title_left_out_is_not_sent_as_null():
    assert "title" not in mcp_sync.Client("n", "v").client_info.to_wire()
    assert mcp_sync.Client("n", "v", title="t").client_info.title == "t"
