"""The method table (``protocol/methods.py``) and what the session tells a transport from it."""

from __future__ import annotations

import re

from mcp_sync._session.outgoing import message_options
from mcp_sync.protocol import headers, methods
from mcp_sync.transports.base import MessageOptions


def test_a_method_that_only_reads_may_be_sent_twice_and_a_call_may_not():
    row = methods.method
    assert message_options(None, row("tools/list")).safe_to_resend  # type: ignore[union-attr]
    at = MessageOptions(version="2026-07-28")
    assert message_options(at, row("resources/read")) == MessageOptions(
        version="2026-07-28", safe_to_resend=True
    )
    # a tool call may charge a card: the session's options pass through untouched
    assert message_options(at, row("tools/call")) is at
    assert message_options(None, row("tools/call")) is None
    assert message_options(None, row("vendor/unknown")) is None
    own = message_options(at, row("tools/call"), {"Mcp-Param-Region": "eu"})
    assert own == MessageOptions(version="2026-07-28", headers={"Mcp-Param-Region": "eu"})


def test_initialize_begins_a_session_whatever_options_it_had():
    initialize = methods.method("initialize")
    assert message_options(MessageOptions(), initialize) == MessageOptions(begins_session=True)
    assert not message_options(None, initialize).safe_to_resend  # type: ignore[union-attr]


def test_the_header_rules_read_the_table():
    message = {"method": "tasks/cancel", "params": {"taskId": "t-1"}}
    assert headers.standard_headers(message, "2026-07-28")[headers.NAME_HEADER] == "t-1"
    for name, field in methods.NAME_FIELDS.items():
        found = headers.standard_headers({"method": name, "params": {field: "x"}}, "2026-07-28")
        assert found[headers.NAME_HEADER] == "x", name


def test_every_row_is_consistent():
    for row in methods.METHODS.values():
        # a cached result is one that may be served again: the method only reads
        assert not row.cacheable or row.reads_only, row.name
        # a paginated list names its items' field and its model has it
        if row.items:
            assert row.result is not None and row.items in row.result.model_fields, row.name
        assert not (row.capability and row.extension), row.name


def test_every_named_row_is_in_the_table_and_the_sets_drawn_from_it_hold_it():
    """A row added after the end of the table (where ``CACHEABLE`` and the others are drawn
    from it) would be in ``METHODS`` and missing from them; a typed row defined without
    ``_row()`` would be missing from both."""
    named = {
        name: row
        for name, row in vars(methods).items()
        if isinstance(row, methods.Method)
        and name.isupper()
        and not name.startswith("_")
        and name != "TOOLS_CALL_AS_TASK"
    }
    assert named and all(methods.METHODS.get(row.name) is row for row in named.values())
    rows = methods.METHODS.values()
    assert {row.name for row in rows if row.cacheable} == methods.CACHEABLE
    assert {row.name for row in rows if row.input_required} == methods.MRTR_METHODS
    assert {row.name: row.name_field for row in rows if row.name_field} == methods.NAME_FIELDS
    # each typed row is named after its method: ``tools/list`` is TOOLS_LIST
    for name, row in named.items():
        expected = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", row.name).replace("/", "_").upper()
        assert name == expected, (name, row.name)
