"""client.functions: a server's tools as typed Python functions, built from real servers'
schemas (tests/servers/sdk_typed_server.py, on the official SDK: pydantic models as $defs and
$ref, a model that contains itself, enums, tool names that are not identifiers), and the
stubs module that mypy checks."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import os
import pydoc
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pydantic
import pytest
import typing_extensions
from mcp.server.lowlevel import Server

import mcp_sync
from mcp_sync import AbortController, Aborted, Client, StdioTransport
from mcp_sync._presentation.schema_types import STUB_NAMES
from mcp_sync.errors import ToolArgumentError, ToolError
from mcp_sync.functions import stubs
from mcp_sync.types import CallToolResult
from tests.helpers.support import PYTHON, ROOT, SERVERS, wait_until


@pytest.fixture
def client():
    c = Client("functions-test", "1.0", request_timeout=30)
    c.connect(StdioTransport(PYTHON, [str(SERVERS / "sdk_typed_server.py"), "stdio"]))
    yield c
    c.close()


def test_each_tool_is_a_function_whose_signature_comes_from_its_input_schema(client):
    f = client.functions
    forecast = inspect.signature(f.forecast)
    kw = inspect.Parameter.KEYWORD_ONLY
    assert [(p.name, p.kind) for p in forecast.parameters.values()] == [
        ("city", kw),
        ("unit", kw),
        ("days", kw),
        ("timeout", kw),
        ("signal", kw),
    ]
    city, unit, days = (forecast.parameters[n] for n in ("city", "unit", "days"))
    assert city.annotation is str and city.default is inspect.Parameter.empty
    assert unit.annotation == Literal["celsius", "fahrenheit"] and unit.default == "celsius"
    assert days.annotation is int and days.default == 3
    # the result: a pydantic model of the outputSchema
    assert issubclass(forecast.return_annotation, pydantic.BaseModel)
    assert set(forecast.return_annotation.model_fields) == {"city", "unit", "highs"}

    person = inspect.signature(f.register).parameters["person"].annotation  # a $ref to $defs
    assert typing_extensions.is_typeddict(person) and person.__name__ == "Person"
    assert person.__required_keys__ == {"name", "age", "address"}
    hints = typing_extensions.get_type_hints(person)
    assert hints["tags"] == list[str] and typing_extensions.is_typeddict(hints["address"])
    assert hints["address"].__required_keys__ == {"street", "city"}

    node = inspect.signature(f.count_nodes).parameters["tree"].annotation
    children = typing_extensions.get_type_hints(node)["children"]
    assert children == list[dict[str, Any]]  # the $ref cycle


def test_help_shows_the_signature_and_the_descriptions(client):
    forecast = client.functions.forecast
    shown = pydoc.render_doc(forecast, renderer=pydoc.plaintext)
    # pydoc writes a long signature on one line up to 3.12, one parameter a line from 3.13
    assert (
        "forecast(*,city:str,unit:Literal['celsius','fahrenheit']='celsius',"
        "days:int=3,timeout:float|None=None" in "".join(shown.split())
    )
    assert "The forecast for a city." in shown
    assert "city : str\n        the city to forecast" in shown
    assert "days : int, default 3\n        how many days" in shown
    assert forecast.__name__ == forecast.__qualname__ == "forecast"
    assert not hasattr(forecast, "__wrapped__")
    assert "forecast" in dir(client.functions)  # what tab completion offers


def test_names_that_are_not_identifiers_are_mapped_deterministically(client):
    f = client.functions
    assert f.tools == {
        "class_": "class",
        "count_nodes": "count_nodes",
        "fail": "fail",
        "forecast": "forecast",
        "get_time": "get-time",
        "get_time_2": "get_time",  # after "get-time", in the order of the tools' names
        "grow": "grow",
        "register": "register",
    }
    assert f["get-time"] is f.get_time and f["class"] is f.class_
    assert f["get_time"] is f.get_time_2  # an item is the tool's own name first
    assert f.get_time(zone="CET").result == "12:00 in CET"
    assert f.get_time_2().result == "noon"
    # a parameter named like an extra is renamed; the extra keeps its meaning
    assert list(inspect.signature(f.class_).parameters)[:2] == ["to", "timeout_"]
    assert f.class_(to=["a", "b"], timeout_=2.5, timeout=30).result == "a, b within 2.5"
    with pytest.raises(mcp_sync.errors.UnknownName, match="no tool 'nope'"):
        f["nope"]
    with pytest.raises(AttributeError, match="did you mean 'forecast'"):
        f.forcast  # noqa: B018


def test_calls_send_what_was_given_and_return_the_declared_result(client):
    f = client.functions
    forecast = f.forecast(city="Paris", unit="fahrenheit", days=2)
    assert isinstance(forecast, pydantic.BaseModel)
    assert (forecast.city, forecast.unit, forecast.highs) == ("Paris", "fahrenheit", [68.0, 69.8])
    person = {"name": "Ada", "age": 36, "address": {"street": "1 rue", "city": "Paris"}}
    assert f.register(person=person, mode="commit").result == "commit: Ada (36) of Paris"
    tree = {"label": "a", "children": [{"label": "b", "children": [{"label": "c"}]}]}
    assert f.count_nodes(tree=tree).result == 3


@pytest.mark.parametrize(
    ("call", "parameter", "message"),
    [
        (lambda f: f.forecast(citi="Paris"), "citi", "no parameter 'citi' (did you mean 'city'?)"),
        (lambda f: f.forecast(), "city", "missing the required argument 'city'"),
        (lambda f: f.forecast("Paris"), None, "keyword arguments only"),
        (lambda f: f.forecast(city="Paris", days=9), "days", "argument 'days': 9 is greater"),
        (lambda f: f.forecast(city="Paris", unit="kelvin"), "unit", '"kelvin" is not one of'),
        (
            lambda f: f.register(
                person={"name": "Ada", "age": -1, "address": {"street": "s", "city": "c"}}
            ),
            "person",
            "argument 'person' at /age: -1 is less than the minimum of 0",
        ),
        (lambda f: f.class_(to=[""]), "to", "argument 'to' at /0"),
    ],
)
def test_bad_arguments_raise_naming_the_parameter_before_anything_is_sent(
    client, call, parameter, message
):
    sent = []
    real = client.call_tool
    client.call_tool = lambda *a, **k: sent.append(a) or real(*a, **k)
    with pytest.raises(ToolArgumentError) as caught:
        call(client.functions)
    assert message in str(caught.value) and caught.value.parameter == parameter
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    assert sent == []


def test_a_failing_tool_raises_tool_error_with_the_result(client):
    with pytest.raises(ToolError, match="tool 'fail' failed") as caught:
        client.functions.fail(reason="boom")
    assert isinstance(caught.value.result, CallToolResult) and caught.value.result.is_error


def test_timeout_and_signal_are_the_calls_keyword_only_extras(client):
    controller = AbortController()
    controller.abort()
    started = time.monotonic()
    with pytest.raises(Aborted):
        client.functions.forecast(city="Paris", signal=controller.signal, timeout=30)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_list_changed_notification_refreshes_the_functions(era):
    protocol = "handshake" if era == "handshake" else "auto"
    with Client("functions-test", "1.0", request_timeout=30, protocol=protocol) as client:
        client.connect(StdioTransport(PYTHON, [str(SERVERS / "sdk_typed_server.py"), "stdio"]))
        assert client.era == era
        f = client.functions
        if era == "stateless":  # the change comes only to a subscription
            client.listen(tools_list_changed=True, callback=f.invalidate)
        assert "late_echo" not in f
        assert f.grow(name="late-echo").result == "late-echo"
        wait_until(lambda: "late_echo" in f, timeout=20, message="functions never refreshed")
        assert f["late-echo"](text="hi").result == "hi"


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GOOD = """\
from mcp_sync import Client
from tools import Person, bind


def run(client: Client) -> float:
    tools = bind(client)
    person: Person = {"name": "Ada", "age": 36, "address": {"street": "s", "city": "Paris"}}
    tools.register(person=person, mode="commit")
    tools.class_(to=["a"], timeout_=1.0, timeout=5)
    return tools.forecast(city="Paris", unit="celsius").highs[0]
"""

BAD = """\
from mcp_sync import Client
from tools import bind


def run(client: Client) -> None:
    tools = bind(client)
    tools.forecast(city="Paris", unit="kelvin")
    tools.forecast(citi="Paris")
    tools.register(person={"name": "Ada", "age": "36", "address": {"street": "s", "city": "c"}})
    tools.forecast(city="Paris").temperature
"""


@pytest.mark.timeout(400)
def test_mcp_sync_stubs_writes_a_module_that_passes_mypy_strict_and_misuse_fails_it(
    client, tmp_path
):
    # the CLI's verb writes what stubs() returns
    command = [
        PYTHON,
        "-m",
        "mcp_sync",
        "stubs",
        "--",
        PYTHON,
        str(SERVERS / "sdk_typed_server.py"),
    ]
    cli = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert cli.stdout == stubs(client, server="sdk-typed-fixture")
    (tmp_path / "tools.py").write_text(cli.stdout, encoding="utf-8")
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    # one mypy run for both files (mypy is slow to start): errors only in bad.py, each misuse
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",  # only the stub and the user files are judged here
            "--cache-dir",
            str(tmp_path / "cache"),
            "tools.py",
            "good.py",
            "bad.py",
        ],
        cwd=tmp_path,
        env={"MYPYPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=360,
    )
    assert run.returncode == 1 and "Found 4 errors" in run.stdout, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert all(line.startswith("bad.py:") for line in errors), run.stdout
    assert [int(line.split(":")[1]) for line in errors] == [7, 8, 9, 10], run.stdout
    assert '"kelvin"' in errors[0] or "'kelvin'" in errors[0]
    assert '"citi"' in errors[1] and '"age"' in errors[2] and '"temperature"' in errors[3]
    # the module also runs: bind() gives client.functions
    sys.path.insert(0, str(tmp_path))
    try:
        tools = _load(tmp_path / "tools.py")
    finally:
        sys.path.remove(str(tmp_path))
    assert tools.bind(client).forecast(city="Oslo").city == "Oslo"


def _server_with_input_schemas(schemas: dict[str, Any]) -> Server[Any]:
    """A real SDK low-level server whose tools declare the given (hostile) inputSchemas."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=name, input_schema=s) for name, s in schemas.items()]
        )

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text="called")])

    return Server("hostile-inputs", on_list_tools=list_tools, on_call_tool=call_tool)


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_hostile_schemas_give_bounded_types_and_a_stub_that_compiles():
    # each of 30 $defs is 32 times anyOf the next: 32**30 paths if each were followed
    doubling = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 32} for i in range(30)}
    doubling["d30"] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schemas = {
        "deep": {"type": "object", "properties": {"value": _nested(60)}},
        "cycle": {"type": "object", "properties": {"me": {"$ref": "#"}}},
        "remote": {
            "type": "object",
            "properties": {"value": {"$ref": "http://127.0.0.1:9/schema.json"}},
        },
        "doubling": {
            "type": "object",
            "$defs": doubling,
            "properties": {"v": {"$ref": "#/$defs/d0"}},
        },
        'x"""\nimport os\n': {
            "type": "object",
            "description": 'ends in a quote """\\',
            "properties": {'a"b': {"type": "string", "description": '"""; import os'}},
        },
    }
    started = time.monotonic()
    with mcp_sync.connect(_server_with_input_schemas(schemas), request_timeout=30) as client:
        f = client.functions
        assert sorted(f) == ["cycle", "deep", "doubling", "remote", "x____import_os_"]
        remote = inspect.signature(f.remote).parameters["value"]
        assert remote.annotation is Any  # never fetched
        optional = inspect.signature(f.cycle).parameters["me"].annotation
        me = typing_extensions.get_type_hints(typing_extensions.get_args(optional)[0])
        assert me["me"] == dict[str, Any]
        source = stubs(client)
        with pytest.raises(ToolArgumentError, match="never fetches"):
            f.remote(value={"a": 1})
        assert source.count("class DeepValue") < 20  # typed down to MAX_DEPTH, then Any
        assert f.deep() == "called"  # optional, and left out
    assert time.monotonic() - started < 20
    compile(source, "tools.py", "exec")
    assert "\nimport os" not in source
    assert "x____import_os_" in source


HOSTILE_TOOLS = SERVERS / "hostile_tools_server.py"

# Correct calls on the hostile tool list's stubs: mypy --strict must pass them all.
HOSTILE_USE = """\
from mcp_sync import Client
from hostile_tools import bind


def run(client: Client) -> str:
    tools = bind(client)
    found = tools.geocode(address={"street": "1 rue", "city": "Paris"})
    tools.geocode(address={"street": found.street, "city": found.city})
    tools.every_name(self_="me", class_="c", timeout_="t", signal_="s", timeout=5)
    tools.every_name(self_="me", class_="c", Literal="l", str="s", field__init__="i")
    tools.shapes(count=None, ratio=None, flag=None, node={"label": "n", "next": {}})
    tools.shapes(count=3, tools={"a": 1}, literal={"b": "x"}, shadow={"str": 1, "int": "i"})
    tools.shapes(mode="it's \\"quoted\\"\\n", fixed="only", keys={"class": "c", "a b": "d"})
    tools.tool__init__()
    tools.tool_2d()
    tools.tool__()
    tools.tool_private()
    tools.str_()
    tools.list_()
    tools.tools_()
    read = tools.fields()
    return read.schema_ + (read.field_id or "") + (read.str_ or "") + (read.Literal_ or "")
"""

# What a stub module may hold: imports, classes, TypedDict(...) assignments, __all__, bind().
_STUB_STATEMENTS = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Assign, ast.FunctionDef)


def _declared(source: str) -> dict[str, list[str]]:
    """Each method of the stub's Tools protocol and its keyword-only parameters; checks on the
    way that the module runs nothing but definitions."""
    tree = ast.parse(source)
    docstring, *body = tree.body
    assert isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant)
    for statement in body:
        assert isinstance(statement, _STUB_STATEMENTS), ast.dump(statement)
        if isinstance(statement, ast.Assign):  # only __all__ = [...] and X = TypedDict(...)
            value = statement.value
            assert isinstance(value, ast.List) or ast.unparse(value.func) == "TypedDict"
    # the names it binds are reserved: no tool, field or class may shadow them
    imported = [s for s in body if isinstance(s, (ast.Import, ast.ImportFrom))]
    assert {a.asname or a.name for s in imported for a in s.names} <= STUB_NAMES
    (tools,) = [s for s in body if isinstance(s, ast.ClassDef) and s.name == "Tools"]
    return {
        method.name: [arg.arg for arg in method.args.kwonlyargs]
        for method in tools.body
        if isinstance(method, ast.FunctionDef)
    }


@pytest.mark.timeout(400)
def test_the_stubs_of_a_hostile_tool_list_pass_mypy_strict_and_each_tool_is_reachable(tmp_path):
    transport = StdioTransport(PYTHON, [str(HOSTILE_TOOLS)])
    with Client("functions-test", "1.0", request_timeout=30).connect(transport) as client:
        source = stubs(client)
        declared = _declared(source)
        f = client.functions
        # every tool is declared once, and reached at run time by the declared name, with the
        # declared parameters
        assert sorted(declared) == sorted(f) and len(declared) == len(client.list_tools())
        for name, parameters in declared.items():
            function = getattr(f, name)
            assert f[function.tool.name] is function
            assert list(inspect.signature(function).parameters) == parameters
        assert f.tools["tool__init__"] == "__init__" and f.tools["tool_2d"] == "2d"
        assert f.tools["tool_private"] == "_private" and f.tools["tool___2"] == "天気"
        assert f.tool__init__().startswith("__init__ ") and f["天気"]().startswith("天気 ")
        assert f.__init__.__func__ is mcp_sync.Functions.__init__  # the class's, not a tool
        assert f.refresh.__func__ is mcp_sync.Functions.refresh and f.refresh_() == "refresh {}"
        assert f.every_name(self_="me", class_="c", timeout_="t") == (
            'every_name {"class": "c", "self": "me", "timeout": "t"}'
        )
        # a null default on an integer is an optional parameter; None leaves it out
        count = inspect.signature(f.shapes).parameters["count"]
        assert count.annotation == (int | None) and count.default is None
        assert f.shapes(count=None) == "shapes {}"
        # the same model in and out: a TypedDict in, a pydantic model out, each its own name
        found = f.geocode(address={"street": "1 rue", "city": "Paris"})
        assert (found.street, found.city) == ("1 rue de Rivoli", "Paris")
        read = f.fields()
        assert (read.schema_, read.field_id, read.f_id) == ("the schema", "the _id", "the f_id")
        assert read.model_dump(by_alias=True)["schema"] == "the schema"
    (tmp_path / "hostile_tools.py").write_text(source, encoding="utf-8")
    (tmp_path / "use.py").write_text(HOSTILE_USE, encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            "hostile_tools.py",
            "use.py",
        ],
        cwd=tmp_path,
        env={"MYPYPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=360,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # importing it warns of nothing (pydantic warns of a field that shadows BaseModel's)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = _load(tmp_path / "hostile_tools.py")
    assert module.Tools.__name__ == "Tools" and callable(module.bind)


@pytest.mark.timeout(180)
def test_the_functions_notebook_shows_the_signature_in_help(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    shutil.copy(SERVERS / "sdk_server.py", tmp_path / "server.py")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    notebook = nbformat.read(ROOT / "docs" / "notebooks" / "functions.ipynb", as_version=4)
    kernel = nbclient.NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    kernel.execute()
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    shown = [
        "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in c.outputs)
        for c in cells
    ]
    names, helped, temperature, misspelt, closed = shown
    assert "'weather'" in names and "'add'" in names
    assert "weather(*, city: str, timeout: float | None = None" in helped
    assert "The weather in a city (structured output)." in helped
    assert temperature == "21.5"
    assert misspelt == "tool 'add': no parameter 'bb' (did you mean 'b'?)\n"
    assert closed == "'closed'"


def test_completion_on_a_client_not_yet_connected_shows_the_methods_and_does_not_raise():
    functions = Client("functions-test", "1.0").functions
    assert {"refresh", "invalidate", "tools"} <= set(dir(functions))
    assert repr(functions) == "<mcp_sync.Functions (not listed yet)>"
    with pytest.raises(mcp_sync.McpError):
        functions.forecast  # noqa: B018 - listing needs a connection
