"""The layering docs/contributing.md describes, checked on the source.

- No import cycle anywhere in ``mcp_sync/`` (imports inside functions and type-only ones count).
- ``protocol/`` is data and rules: it imports nothing of mcp_sync outside itself but the
  errors. Presentation (Jupyter display, LLM formats) reaches the wire types through
  ``protocol.types._presentation``, filled in by ``mcp_sync._presentation.repr`` and ``mcp_sync.llm``.
- Transports know bytes, not eras: what a message needs comes down with it as options.
- Transports know bytes, not methods: no module under ``transports/`` names an MCP method
  (every fact about one is a row of ``protocol/methods.py``; the session passes what the
  transport needs in ``MessageOptions``), in the manner of h11's "everything that affects the
  state machine lives in this file".
- The transport contract has one ``send`` (with a ``deadline=``) and one channel for the
  protocol version (each message's ``MessageOptions``): no ``send_before``, no
  ``set_protocol_version``.
- One way down, by folder: ``_client/`` over ``_connection/`` over ``_session/`` over
  ``transports/`` over ``protocol/``; no module imports a layer above its own, and the shared
  rooms (``_rules/``, ``_presentation/``) import none of the layers.
- The top of ``mcp_sync/`` holds public import paths and rooms: every private module is in a
  folder whose ``__init__`` names it.
- A module is short enough to read in one sitting, or says why not.
- The suite finds its own code as the package ``tests``: no module of it (nor a docs page's
  hidden setup, which runs in the suite) puts a folder on ``sys.path``; what a test imports
  is a helper (``tests/helpers/``), a server it also starts (``tests/servers/``) or a piece
  of another test module.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_sync"
#: A module holds one concept, whatever its length: this bound only catches a module that has
#: clearly grown a second one (the longest, client.py and errors.py, are 700 to 800 lines: the
#: facade and the exception catalogue). Split by concept, never to fit a count.
MAX_LINES = 1000


def _module_names() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _module_names()


def _imports(name: str) -> set[str]:
    """The mcp_sync modules ``name`` imports, anywhere in it."""
    path = MODULES[name]
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in MODULES)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            submodules = {f"{target}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules)
            # ``from pkg import name`` of something that is not a submodule imports ``pkg``
            if len(submodules) < len(node.names) and target in MODULES:
                found.add(target)
    found.discard(name)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _cycles() -> list[list[str]]:
    """Groups of modules that import each other, directly or not (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in GRAPH[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = [stack.pop()]
            while group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                cycles.append(sorted(group))

    for node in GRAPH:
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycles():
    assert _cycles() == []


def test_the_cycle_check_sees_a_cycle():
    GRAPH["mcp_sync.errors"].add("mcp_sync.client")  # client imports errors, so: a cycle
    try:
        assert any("mcp_sync.errors" in group for group in _cycles())
    finally:
        GRAPH["mcp_sync.errors"].discard("mcp_sync.client")


def test_protocol_imports_only_itself_and_the_errors():
    strays = {
        name: sorted(outside)
        for name in MODULES
        if name.startswith("mcp_sync.protocol")
        and (
            outside := {
                m for m in GRAPH[name] if not m.startswith(("mcp_sync.protocol", "mcp_sync.errors"))
            }
        )
    }
    assert strays == {}


def test_transports_know_bytes_not_eras():
    """No transport module imports the era rules (versions, stateless-era protocol)."""
    eras = {"mcp_sync.protocol.versions", "mcp_sync.protocol.stateless"}
    strays = {
        name: sorted(GRAPH[name] & eras)
        for name in MODULES
        if name.startswith("mcp_sync.transports") and GRAPH[name] & eras
    }
    assert strays == {}


def _mcp_method_names() -> frozenset[str]:
    from mcp_sync.protocol import methods, stateless

    return frozenset(methods.METHODS) | frozenset(stateless.INPUT_METHODS)


def _method_literals(source: str, names: frozenset[str]) -> list[tuple[int, str]]:
    """``(line, literal)`` for every string constant of ``source`` that is an MCP method name
    (a request the client sends, a request a server sends, or any notification)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, str) and (value in names or value.startswith("notifications/")):
            found.append((node.lineno, value))
    return sorted(found)


def test_no_transport_names_an_mcp_method():
    """Whitelist: none. A transport that needs to act on a kind of message gets a field of
    ``MessageOptions`` the session fills from the method's row."""
    names = _mcp_method_names()
    strays = {
        name: literals
        for name, path in MODULES.items()
        if name.startswith("mcp_sync.transports")
        and (literals := _method_literals(path.read_text(encoding="utf-8"), names))
    }
    assert strays == {}


def test_the_method_literal_check_sees_one():
    names = _mcp_method_names()
    source = 'if message.get("method") != "initialize":\n    safe = m in {"tools/list"}\n'
    assert _method_literals(source, names) == [(1, "initialize"), (2, "tools/list")]
    assert _method_literals('x = "notifications/initialized"', names) != []
    # prose naming a method (a docstring, a message) is no decision on one
    assert _method_literals('"""Like ``tools/list``."""\ny = "tools"', names) == []


def test_no_transport_imports_the_method_table():
    """The table is the session's to read; a transport gets its answers as options."""
    strays = {
        name
        for name in MODULES
        if name.startswith("mcp_sync.transports") and "mcp_sync.protocol.methods" in GRAPH[name]
    }
    assert strays == set()


#: What the transport contract had twice, and has once now: ``send(deadline=)`` and the
#: version in each message's ``MessageOptions``.
_REMOVED_FROM_THE_CONTRACT = frozenset({"send_before", "set_protocol_version"})


def _removed_names(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` for every definition or attribute use of a removed contract method."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = node.name
        elif isinstance(node, ast.Attribute):
            name = node.attr
        else:
            continue
        if name in _REMOVED_FROM_THE_CONTRACT:
            found.append((node.lineno, name))
    return sorted(found)


def test_the_transport_contract_has_one_send_and_one_version_channel():
    strays = {
        name: found
        for name, path in MODULES.items()
        if (found := _removed_names(path.read_text(encoding="utf-8")))
    }
    assert strays == {}


def test_the_removed_contract_check_sees_one():
    source = "def send_before(self):\n    pass\nt.set_protocol_version(v)\nt.send(m)\n"
    assert _removed_names(source) == [(1, "send_before"), (3, "set_protocol_version")]


#: The layers a call travels through, top first (docs/contributing.md draws them).
LAYERS = (
    "mcp_sync._client",
    "mcp_sync._connection",
    "mcp_sync._session",
    "mcp_sync.transports",
    "mcp_sync.protocol",
)
#: Rooms every layer may use, which use no layer above ``protocol/`` themselves.
SHARED_ROOMS = ("mcp_sync._rules", "mcp_sync._presentation")


def _room(name: str) -> str | None:
    return next((r for r in LAYERS + SHARED_ROOMS if name == r or name.startswith(r + ".")), None)


def _upward_imports(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    found = {}
    for name, imported in graph.items():
        room = _room(name)
        if room is None:
            continue
        # a shared room sits just above protocol/: it may use that and nothing of the layers
        level = LAYERS.index(room) if room in LAYERS else LAYERS.index("mcp_sync.protocol")
        above = [
            other
            for other in imported
            if (r := _room(other)) in LAYERS and LAYERS.index(r) < level and r != room
        ]
        if above:
            found[name] = sorted(above)
    return found


def test_each_layer_imports_only_the_layers_below_it():
    assert _upward_imports(GRAPH) == {}


def test_the_layer_check_sees_an_upward_import():
    graph = {
        "mcp_sync._session.session": {"mcp_sync._connection.connection"},
        "mcp_sync._rules.deadline": {"mcp_sync._session.session"},
        "mcp_sync._client.calls": {"mcp_sync._connection.connection", "mcp_sync._rules.warn"},
    }
    assert _upward_imports(graph) == {
        "mcp_sync._session.session": ["mcp_sync._connection.connection"],
        "mcp_sync._rules.deadline": ["mcp_sync._session.session"],
    }


#: Private files the top of mcp_sync/ keeps: the build reads the version from _version.py.
TOP_PRIVATE_FILES = {"__init__.py", "__main__.py", "_version.py"}


def test_the_top_of_the_package_holds_public_paths_and_rooms():
    strays = sorted(
        p.name
        for p in PACKAGE.iterdir()
        if p.suffix == ".py" and p.name.startswith("_") and p.name not in TOP_PRIVATE_FILES
    )
    assert strays == []


def test_each_private_room_names_every_module_it_holds():
    unnamed = {}
    for room in PACKAGE.iterdir():
        if not (room.is_dir() and room.name.startswith("_") and (room / "__init__.py").exists()):
            continue
        listed = ast.get_docstring(ast.parse((room / "__init__.py").read_text("utf-8"))) or ""
        missing = [
            p.stem
            for p in sorted(room.glob("*.py"))
            if p.name != "__init__.py" and f"``{p.stem}``" not in listed
        ]
        if missing:
            unnamed[room.name] = missing
    assert unnamed == {}


def test_no_module_has_clearly_grown_a_second_concept():
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_types_present_themselves_when_only_the_types_are_imported():
    script = textwrap.dedent("""
        from mcp_sync.protocol.types import CallToolResult, TextContent, Tool

        tool = Tool(name="add", input_schema={"type": "object", "properties": {"a": {"type": "number"}}})
        result = CallToolResult(content=[TextContent(text="5")])
        assert "<table" in tool._repr_html_() and "add" in tool._repr_markdown_()
        assert tool.to_openai()["function"]["name"] == "add"
        assert tool.to_anthropic()["name"] == "add"
        assert result.to_llm_content() == [{"type": "text", "text": "5"}]
        print("ok")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PACKAGE.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


#: The most names ``import mcp_sync`` may export: 72 today (every everyday name: connecting,
#: the transports, the errors, what the client hands back), against httpx's ~70. The ~140 wire
#: types live in ``mcp_sync.types``; docs/api.md argues the list. A bigger surface changes this
#: number in the same commit, with its reason.
MAX_TOP_LEVEL = 80


def test_the_top_level_surface_stays_small_and_holds_no_wire_type():
    import mcp_sync
    import mcp_sync.types
    from mcp_sync.protocol.types import McpModel

    assert len(mcp_sync.__all__) <= MAX_TOP_LEVEL, len(mcp_sync.__all__)
    assert len(set(mcp_sync.__all__)) == len(mcp_sync.__all__)
    wire = [
        name
        for name in mcp_sync.__all__
        if name in mcp_sync.types.__all__
        or (isinstance(obj := getattr(mcp_sync, name), type) and issubclass(obj, McpModel))
    ]
    assert wire == []


# -- the suite itself: its helpers are a package ----------------------------------------------

ROOT = PACKAGE.parent
#: What puts a folder on the import path: ``sys.path`` changed in place or replaced (in code,
#: in a ``python -c`` string, in a docs page's hidden setup) or ``site.addsitedir``.
_SYS_PATH_EDIT = re.compile(
    r"sys\.path\s*(\.\s*(insert|append|extend)\s*\(|(\[[^\]]*\])?\s*\+?=(?!=))|addsitedir\s*\("
)
#: The edits a test may make, each putting its own scratch folder first to import a module it
#: wrote there, as a user would: the stubs ``mcp-sync stubs`` writes (a test, and the notebooks
#: page in its scratch directory), docs/scale.md's recipe (which Dask's spawned workers import).
_TMP_PATH_IMPORTS = {
    ("tests/test_functions.py", "sys.path.insert(0, str(tmp_path))"),
    ("tests/services/test_dask.py", "sys.path.insert(0, str(where))"),
    (
        "docs/notebooks.md",
        "sys.path.insert(0, os.getcwd())  # a script next to tools.py has it on its path",
    ),
}
#: ``from tests.x import y, z`` (names in parentheses too) or ``import tests.x``, at any
#: indentation (inside a function too)
_SUITE_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(tests(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[\w, \t]+)"
    r"|import[ \t]+(tests(?:\.\w+)*))",
    re.M,
)
_MAIN = re.compile(r"^if __name__ == .__main__.:", re.M)


def _suite_files() -> Iterator[Path]:
    """Every Python module of the suite (not the peers' venvs and packages) and every docs
    page (their code runs in the suite)."""
    for folder, subfolders, files in os.walk(ROOT / "tests"):
        if Path(folder) == ROOT / "tests":
            subfolders.remove("peers")
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        yield from (Path(folder) / f for f in sorted(files) if f.endswith(".py"))
    yield from sorted((ROOT / "docs").rglob("*.md"))


def _sys_path_edits(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if _SYS_PATH_EDIT.search(line)]


def test_no_module_of_the_suite_puts_a_folder_on_sys_path():
    """The suite is the package ``tests`` (pytest puts the checkout first on the path, from
    any working directory): a helper is imported as ``tests.helpers.x``, never found through
    a folder put on ``sys.path``."""
    strays = [
        f"{name}: {line}"
        for path in _suite_files()
        for line in _sys_path_edits(path.read_text(encoding="utf-8"))
        if path != Path(__file__)  # (its examples, below)
        and (name := path.relative_to(ROOT).as_posix(), line) not in _TMP_PATH_IMPORTS
    ]
    assert strays == []


def test_the_sys_path_check_sees_one():
    source = (
        'sys.path.insert(0, str(HERE.parent / "servers"))\n'
        "code = 'import sys; sys.path[:0] = sys.argv[1:3]'\n"
        "sys.path.append(x)\nsys.path += [x]\nsite.addsitedir(x)\n"
        # reading the path, or taking a test's own entry back out, puts nothing on it
        "site = [p for p in sys.path if p.endswith('site-packages')]\n"
        "sys.path.remove(str(tmp_path))\nif sys.path == before: pass\n"
    )
    assert len(_sys_path_edits(source)) == 5


def _suite_imports(text: str) -> set[str]:
    """The modules of the suite ``text`` imports (``from tests.x import y`` is ``tests.x.y``
    when that is a module)."""
    found = set()
    for package, names, module in _SUITE_IMPORT.findall(text):
        if module:
            found.add(module)
            continue
        folder = ROOT.joinpath(*package.split("."))
        submodules = {n for n in re.findall(r"\w+", names) if (folder / f"{n}.py").is_file()}
        found.update(f"{package}.{n}" for n in submodules)
        if not submodules:
            found.add(package)
    return found


def _is_script(module: str) -> bool:
    path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
    return path.is_file() and _MAIN.search(path.read_text(encoding="utf-8")) is not None


def test_every_folder_of_the_suite_is_a_package():
    """Else pytest would put that folder on ``sys.path`` itself, and its modules would import
    one another by bare name (and share names with other folders')."""
    folders = {path.parent for path in _suite_files() if path.suffix == ".py"}
    assert sorted(f for f in folders if not (f / "__init__.py").is_file()) == []


def test_what_tests_import_is_a_helper_a_test_module_or_a_script_they_start():
    """``tests/helpers/`` holds the libraries tests import, and none of them is a script; what
    tests start as processes is elsewhere (the servers in ``tests/servers/``), and a test may
    import one of those for what it shares (the hostile text a server sends). A module that is
    neither, imported from outside ``tests/helpers/``, is a helper out of place."""
    strays = {
        f"{path.relative_to(ROOT).as_posix()}: {module}"
        for path in _suite_files()
        for module in _suite_imports(path.read_text(encoding="utf-8"))
        if not module.startswith("tests.helpers.")
        and not module.rsplit(".", 1)[-1].startswith("test_")
        and not _is_script(module)
    }
    assert strays == set()
    helpers = {f"tests.helpers.{path.stem}" for path in (ROOT / "tests" / "helpers").glob("*.py")}
    assert sorted(h for h in helpers if _is_script(h)) == []


def test_the_suite_import_check_sees_one():
    source = (
        "from tests.helpers.support import free_port, wait_until\n"
        "    from tests.helpers import docs_oauth\n"
        "from tests.oauth.oauth_stub import Stub\n"
        "from tests.conformance import (\n    test_conformance_auth,\n)\n"
        "import tests.reliability.test_recovery\n"
        "from support import wait_until\n"
    )
    assert _suite_imports(source) == {
        "tests.helpers.support",
        "tests.helpers.docs_oauth",
        "tests.oauth.oauth_stub",
        "tests.conformance.test_conformance_auth",
        "tests.reliability.test_recovery",
    }
    assert _is_script("tests.servers.hostile_server")
    assert not _is_script("tests.helpers.support") and not _is_script("tests.oauth.oauth_stub")
