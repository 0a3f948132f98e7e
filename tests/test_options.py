"""One client option, one set of places that agree: ``Client()``'s keyword (the API), the
``ClientOptions`` TypedDict (tests/test_connect_options.py checks its names and types), the
frozen ``ConnectionOptions`` value the connection runs by, the ``Option`` descriptors that read
and set it through the client, and the class docstring that documents it."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import mcp_sync
from mcp_sync._facade import Option
from mcp_sync._options import ConnectionOptions

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

KEYWORDS = [p for p in inspect.signature(mcp_sync.Client.__init__).parameters if p != "self"]
FIELDS = [f.name for f in dataclasses.fields(ConnectionOptions)]


def test_every_keyword_is_a_field_or_names_where_it_goes_and_every_field_a_keyword():
    stray = [k for k in KEYWORDS if k not in FIELDS and k not in BECOME and k not in ELSEWHERE]
    assert stray == []
    assert set(FIELDS) == ({k for k in KEYWORDS if k in FIELDS} | set(BECOME.values()))


def test_every_keyword_is_documented_in_the_client_docstring():
    doc = mcp_sync.Client.__doc__ or ""
    assert [k for k in KEYWORDS if f"``{k}``" not in doc and f"``{k}=" not in doc] == []


def test_every_option_descriptor_reads_and_sets_a_field():
    descriptors = [n for n, v in vars(mcp_sync.Client).items() if isinstance(v, Option)]
    assert descriptors and [n for n in descriptors if n not in FIELDS] == []


def test_the_connection_is_handed_one_options_value():
    """Before, ``Connection.__init__`` took the options as 11 keywords of its own, a sixth
    place for each option to be listed (and to fall out of step)."""
    from mcp_sync._connection import Connection

    parameters = list(inspect.signature(Connection.__init__).parameters)
    assert parameters == ["self", "options"]


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
