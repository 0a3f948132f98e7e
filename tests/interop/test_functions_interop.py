"""client.functions against servers others wrote: @modelcontextprotocol/server-everything
(TypeScript SDK: zod schemas, enums, tool names with hyphens) and fastmcp."""

from __future__ import annotations

import inspect
import sys
from typing import Literal

import pydantic
import pytest

import mcp_sync
from mcp_sync import Client, StdioTransport
from mcp_sync.errors import ToolArgumentError
from mcp_sync.functions import stubs
from tests.helpers.support import SERVERS, needs_fastmcp


@pytest.fixture
def everything(everything_cmd):
    with Client("functions-interop", "1.0", request_timeout=30) as client:
        client.connect(StdioTransport(everything_cmd[0], everything_cmd[1:], stderr="devnull"))
        yield client


def test_server_everything_tools_as_typed_functions(everything):
    f = everything.functions
    assert f.tools["get_sum"] == "get-sum" and f["get-sum"] is f.get_sum
    total = inspect.signature(f.get_sum)
    assert [p.annotation for p in total.parameters.values()][:2] == [float, float]
    assert f.get_sum(a=2, b=3) == "The sum of 2 and 3 is 5."  # no outputSchema: the text
    assert "a : float\n    First number" in f.get_sum.__doc__

    message = inspect.signature(f.get_annotated_message).parameters
    assert message["messageType"].annotation == Literal["error", "success", "debug"]
    assert message["includeImage"].default is False

    structured = f.get_structured_content(location="Chicago")  # an outputSchema: a model
    assert isinstance(structured, pydantic.BaseModel)
    assert isinstance(structured.temperature, float)
    with pytest.raises(ToolArgumentError, match="argument 'location'"):
        f.get_structured_content(location="Paris")
    with pytest.raises(ToolArgumentError, match="argument 'count'"):
        f.get_resource_links(count=11)  # its maximum is 10
    compile(stubs(everything), "tools.py", "exec")


@needs_fastmcp
def test_fastmcp_tools_as_typed_functions():
    argv = [sys.executable, str(SERVERS / "fastmcp_server.py"), "stdio"]
    with mcp_sync.connect(argv, request_timeout=30) as client:
        f = client.functions
        add = inspect.signature(f.add)
        assert str(add).startswith("(*, a: int, b: int, timeout: float | None = None")
        assert f.add(a=20, b=22).result == 42  # the wrapped result of a function returning int
        with pytest.raises(ToolArgumentError, match="no parameter 'c'"):
            f.add(a=1, b=2, c=3)
        with pytest.raises(ToolArgumentError, match="argument 'a'"):
            f.add(a="1", b=2)
        with pytest.raises(mcp_sync.errors.ToolError):
            f.fail()
