"""Every request may report progress: the list methods and completion take ``on_progress``.

Against a server built on the official Python SDK's low-level API whose list and completion
handlers report three steps each (tests/servers/progress_lists_server.py).
"""

from __future__ import annotations

import pytest

from mcp_sync import Client, StdioTransport
from mcp_sync.types import PromptReference
from tests.helpers.support import PYTHON, SERVERS


@pytest.fixture(scope="module", params=["handshake", "auto"])
def client(request):
    c = Client("progress", "1.0", request_timeout=20, protocol=request.param)
    c.connect(StdioTransport(PYTHON, [str(SERVERS / "progress_lists_server.py")]))
    yield c
    c.close()


CALLS = {
    "tools": lambda c, seen: c.list_tools(on_progress=seen.append),
    "tools_page": lambda c, seen: c.list_tools_page(on_progress=seen.append).tools,
    "prompts": lambda c, seen: c.list_prompts(on_progress=seen.append),
    "prompts_page": lambda c, seen: c.list_prompts_page(on_progress=seen.append).prompts,
    "resources": lambda c, seen: c.list_resources(on_progress=seen.append),
    "resources_page": lambda c, seen: c.list_resources_page(on_progress=seen.append).resources,
    "templates": lambda c, seen: c.list_resource_templates(on_progress=seen.append),
    "templates_page": lambda c, seen: (
        c.list_resource_templates_page(on_progress=seen.append).resource_templates
    ),
    "completion": lambda c, seen: (
        c.complete(
            PromptReference(name="greet"), "who", "A", on_progress=seen.append
        ).completion.values
    ),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_list_and_complete_report_progress(client, call):
    seen = []
    items = CALLS[call](client, seen)
    assert len(items) >= 1
    # Progress for a request is delivered before the request's answer returns.
    assert [(p.progress, p.total) for p in seen] == [(1, 3), (2, 3), (3, 3)]
    kind = call.removesuffix("_page")
    assert seen[0].message == f"{kind} 1"
