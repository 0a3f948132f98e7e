"""One home for the exceptions: every error a library call can raise is defined in
``mcp_sync.errors`` (the OAuth client's in their own subtree, ``mcp_sync.oauth.errors``), is
listed in that module's tree and in docs/errors.md, and is still importable from where it used
to live."""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import io
import multiprocessing
import pickle
import pkgutil
import re
import sys
import threading
import typing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cloudpickle
import pytest

import mcp_sync
import mcp_sync.errors
import mcp_sync.oauth.errors

ROOT = Path(__file__).resolve().parents[1]
HOMES = {"mcp_sync.errors", "mcp_sync.oauth.errors"}
# Control flow that never leaves the library: caught where raised and turned into something
# else (a typed McpError, a retry, an exit status of the command line).
INTERNAL = {
    "ArgumentError",  # the CLI's: becomes a UsageError
    "UsageError",  # the CLI's: becomes exit status 2 in its main()
    "OutputClosed",  # the CLI's: its output's reader left; becomes exit status 0 in its main()
    "Cancelled",  # the HTTP transport's worker pool: a request given up, never raised out
    "TooLarge",  # the HTTP transport's body limit: becomes a TransportError
    "PipeClosed",  # the stdio transports' pipe writer: becomes a ConnectionClosed
    "Reopen",  # the HTTP stream loop's: one more attempt under the Backoff policy
    "StreamGaveUp",  # the HTTP stream loop's: becomes a TransportError (raised or reported)
}
OPTIONAL = ("mcp_sync.integrations", "mcp_sync.oauth.redis_store", "mcp_sync.pytest_plugin")


def _modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(mcp_sync.__path__, "mcp_sync."):
        if info.name.startswith(OPTIONAL) or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return names


def test_every_exception_class_lives_in_the_errors_modules():
    strays = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, BaseException)):
                continue
            if value.__module__ != name or attr.startswith("_"):
                continue  # imported from elsewhere, or private to its module
            if attr not in INTERNAL and name not in HOMES:
                strays.append(f"{name}.{attr}")
    assert strays == []


@pytest.mark.parametrize("module", [mcp_sync.errors, mcp_sync.oauth.errors])
def test_the_tree_in_the_docstring_lists_every_error(module):
    tree = set(re.findall(r"^ {4}(?:[│ ]*[├└]── )?([A-Z]\w+)", module.__doc__ or "", re.MULTILINE))
    defined = {
        name
        for name in module.__all__
        if inspect.isclass(getattr(module, name))
        and issubclass(getattr(module, name), BaseException)
    }
    assert defined - tree == set()
    assert tree - defined <= {"OAuthError"}  # errors.py points at the OAuth subtree


def test_every_error_is_subclass_of_mcp_error_and_in_the_errors_page():
    page = (ROOT / "docs" / "errors.md").read_text()
    for module in (mcp_sync.errors, mcp_sync.oauth.errors):
        for name in module.__all__:
            error = getattr(module, name)
            assert issubclass(error, mcp_sync.McpError), name
            if module is mcp_sync.errors:
                assert re.search(rf"`{name}\b", page), f"docs/errors.md does not mention {name}"
    assert "`OAuthError`" in page


def test_moved_errors_are_still_importable_from_their_old_modules():
    from mcp_sync.cli import StdioServerError
    from mcp_sync.config import ConfigError, ServerConnectError
    from mcp_sync.protocol.jsonrpc import InvalidMessage
    from mcp_sync.protocol.validation import OutputValidationError

    assert ConfigError is mcp_sync.errors.ConfigError is mcp_sync.ConfigError
    assert ServerConnectError is mcp_sync.errors.ServerConnectError is mcp_sync.ServerConnectError
    assert OutputValidationError is mcp_sync.errors.OutputValidationError
    assert InvalidMessage is mcp_sync.errors.InvalidMessage
    assert StdioServerError is mcp_sync.errors.StdioServerError
    assert issubclass(ConfigError, ValueError)
    assert issubclass(InvalidMessage, mcp_sync.ProtocolError)


def test_a_bad_config_raises_the_documented_error(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"time": {"command": 7}}}')
    with pytest.raises(mcp_sync.ConfigError, match=r'server .time.: "command" must be a string'):
        mcp_sync.connect("time", config=path)


# -- errors are values: every public exception copies and pickles ----------------------------


def _public_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in the two errors modules, found by walking them (the
    device grant's, outside ``__all__``, and the two warnings included)."""
    return [
        value
        for module in (mcp_sync.errors, mcp_sync.oauth.errors)
        for name, value in sorted(vars(module).items())
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
        and not name.startswith("_")
    ]


def _sample(name: str, hint: object) -> object:
    """A value for the parameter ``name`` of type ``hint``: not the default, so that every
    attribute it sets is seen to survive."""
    from mcp_sync.pins import ToolChange
    from mcp_sync.types import CallToolResult

    by_name: dict[str, object] = {
        "cause": OSError(5, "Input/output error"),
        "last_error": mcp_sync.errors.RequestTimeout("tools/call", 2.0),
        "result": CallToolResult.model_validate(
            {"content": [{"type": "text", "text": "no such city"}], "isError": True}
        ),
        "changes": [ToolChange("search", "changed", "--- pinned\n+++ listed\n", {"name": "s"})],
        "data": {"elicitations": [{"url": "https://example.com/consent", "message": "m"}]},
        "raw": {"jsonrpc": "2.0", "id": 3},
        "headers": {"Retry-After": "3"},
        "supported": ("2025-06-18", "2025-11-25"),
        "server_versions": ("2024-11-05",),
        "reason": "it went wrong",
    }
    if name in by_name:
        return by_name[name]
    kinds = typing.get_args(hint) or (hint,)  # a union's members, or the one type
    for kind, value in ((bool, True), (float, 2.5), (int, 7)):
        if kind in kinds:
            return value
    return f"the {name}"


def _made(cls: type[BaseException]) -> BaseException:
    """An instance of ``cls`` with every parameter of its constructor given, raised from
    another error (the cause chain) and with a note."""
    init = cls.__init__
    try:
        hints = typing.get_type_hints(init, vars(sys.modules[cls.__module__]))
    except TypeError:  # a builtin's __init__ (the warnings)
        hints = {}
    args: list[object] = []
    kwargs: dict[str, object] = {}
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except ValueError:  # a builtin's signature (the warnings): a message
        parameters = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL:
            args.append(f"{cls.__name__} happened")
        elif parameter.kind is parameter.VAR_KEYWORD:
            kwargs.update(request={"method": "tools/call"}, nearest={"method": "x"}, diff="-a")
        elif parameter.kind is parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = _sample(parameter.name, hints.get(parameter.name))
        else:
            args.append(_sample(parameter.name, hints.get(parameter.name)))
    error = cls(*args, **kwargs)
    if isinstance(error, mcp_sync.McpError):  # (a warning is never raised from another error)
        error.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    if sys.version_info >= (3, 11):
        error.add_note("a note")
    return error


def _observable(error: BaseException) -> dict[str, object]:
    """What a reader of ``error`` can see: its type, ``str``, ``repr``, every public
    attribute (its own, its class's properties, a builtin base's: ``ImportError.msg``,
    ``OSError.errno``) and its cause, exceptions compared by type and text."""

    def shown(value: object) -> object:
        if isinstance(value, BaseException):
            return (type(value), str(value), value.args)
        if isinstance(value, (list, tuple)):
            return type(value)(shown(item) for item in value)
        return value

    seen: dict[str, object] = {"type": type(error), "str": str(error), "repr": repr(error)}
    for name in dir(error):
        if name.startswith("_"):
            continue
        value = getattr(error, name, "<unset>")
        if not callable(value) or isinstance(value, BaseException):
            seen[name] = shown(value)
    seen["vars"] = {name: shown(value) for name, value in vars(error).items()}
    seen["cause"] = shown(error.__cause__)
    seen["suppress_context"] = error.__suppress_context__
    return seen


def test_the_walk_finds_every_exception_including_those_outside_all():
    found = {cls.__name__ for cls in _public_exceptions()}
    listed = set(mcp_sync.errors.__all__) | set(mcp_sync.oauth.errors.__all__)
    assert listed <= found
    assert {"DeviceSignInTimeout", "ToolChangedWarning", "McpError", "OAuthError"} <= found


@pytest.mark.parametrize("cls", _public_exceptions(), ids=lambda cls: cls.__name__)
def test_every_public_exception_survives_copy_and_a_pickle_round_trip(cls):
    """Errors are values: a thread that waited on another's failed reconnection raises a copy
    of its error, and Dask, Ray and ``multiprocessing`` pickle an error back to the caller.
    Before, ``copy.copy`` of an error whose ``__init__`` takes other arguments than its
    message (``CrashLoop``, ``RpcError``, ``RequestTimeout``...) raised ``TypeError``, and
    so did unpickling it; what did come back had lost its cause."""
    error = _made(cls)
    before = _observable(error)
    for again in (
        copy.copy(error),
        copy.deepcopy(error),
        pickle.loads(pickle.dumps(error)),
        cloudpickle.loads(cloudpickle.dumps(error)),
    ):
        assert again is not error
        assert _observable(again) == before
        assert again.__traceback__ is None  # a copy raised elsewhere starts its own


def test_a_copy_is_its_own_error():
    """Changing a copy (as the session does, adding a hint to its message) leaves the original
    as it was."""
    error = mcp_sync.errors.CrashLoop(
        "the server keeps failing", attempts=2, retry_at=1.0, retry_in=1.0, exit_status=3
    )
    again = copy.copy(error)
    again.args = ("changed",)
    again.sent = None
    assert str(error).startswith("the server keeps failing") and error.sent is False


def test_a_cause_that_cannot_be_pickled_arrives_as_its_type_and_text():
    """Another library's exception holding a lock or a socket cannot be pickled: it comes back
    as a plain ``Exception`` naming its type, with its text, rather than making the whole error
    unpicklable (Ray would deliver an ``UnserializableException`` instead)."""

    class Unpicklable(Exception):
        def __init__(self) -> None:
            super().__init__("the socket broke")
            self.lock = threading.Lock()

    cause = Unpicklable()
    error = mcp_sync.ConnectionClosed("connection closed", cause=cause)
    # pickled by the error's own reduction: a library imported after mcp_sync (distributed,
    # through tblib) may register its own for every exception class in copyreg's table
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer)
    pickler.dispatch_table = {}
    pickler.dump(error)
    again = pickle.loads(buffer.getvalue())
    assert str(again) == str(error)
    assert type(again.__cause__) is Exception and type(again.cause) is Exception
    assert str(again.__cause__) == f"{Unpicklable.__qualname__}: the socket broke"
    assert copy.copy(error).__cause__ is cause  # a copy in this process keeps the very cause


def test_an_error_raised_in_a_worker_process_reaches_the_caller_whole(tmp_path):
    """A process pool (as Dask's and ``multiprocessing``'s) sends a worker's error back
    pickled: connecting a command that does not exist raises ``ServerStartError`` there, and
    the caller gets it with its ``command`` (the pool makes the worker's traceback its
    cause). Before, unpickling it
    failed (its ``command`` is keyword-only) and the pool raised something else. (Ray showed
    the same as ``UnserializableException``.)"""
    missing = str(tmp_path / "no such server")
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        future = pool.submit(functools.partial(mcp_sync.connect, [missing], protocol="handshake"))
        with pytest.raises(mcp_sync.errors.ServerStartError) as raised:
            future.result(timeout=60)
    assert raised.value.command == missing and missing in str(raised.value)
    assert "FileNotFoundError" in str(raised.value.__cause__)  # the pool's remote traceback


# -- the tree's shape: what a user catches by ------------------------------------------------


def _groups() -> dict[str, type[BaseException]]:
    errors = mcp_sync.errors
    return {
        "ServerError": errors.ServerError,
        "ConnectionFailure": errors.ConnectionFailure,
        "InvalidUsage": errors.InvalidUsage,
        "OAuthError": mcp_sync.oauth.errors.OAuthError,
    }


# A class under two groups, each through a base it has always had: a state file others could
# write is the OAuth store's error and a file the user gave (a ConfigError, exit status 2).
TWO_GROUPS = {"UnsafeStateFile": {"OAuthError", "InvalidUsage"}}


def _every_error() -> list[type[BaseException]]:
    """Every subclass of McpError in the package, private ones included, found by walking
    the subclasses once every module is imported."""
    for name in _modules():
        importlib.import_module(name)
    found: set[type[BaseException]] = set()
    todo: list[type[BaseException]] = [mcp_sync.McpError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found and sub.__module__.startswith("mcp_sync"):
                found.add(sub)
                todo.append(sub)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def test_every_error_sits_under_exactly_one_group_and_nothing_else_under_the_root():
    """A user catches by what went wrong: the server (``ServerError``), the connection
    (``ConnectionFailure``), the caller (``InvalidUsage``), or the sign-in (``OAuthError``).
    Before, 25 classes sat directly under McpError, usage mistakes beside I/O failures."""
    groups = _groups()
    errors = _every_error()
    assert len(errors) > 70  # the walk found the tree (71 classes when this was written)
    under = {
        cls.__name__: {name for name, group in groups.items() if issubclass(cls, group)}
        for cls in errors
    }
    wrong = {
        name: sorted(found)
        for name, found in under.items()
        if len(found) != 1 and found != TWO_GROUPS.get(name)
    }
    assert wrong == {}
    assert set(mcp_sync.McpError.__subclasses__()) == set(groups.values())
    assert all(group.__bases__ == (mcp_sync.McpError,) for group in groups.values())
    assert set(TWO_GROUPS) <= {cls.__name__ for cls in errors}


def test_the_groups_are_public_and_named_in_the_page():
    page = (ROOT / "docs" / "errors.md").read_text()
    for name in ("ServerError", "ConnectionFailure", "InvalidUsage"):
        assert getattr(mcp_sync, name) is getattr(mcp_sync.errors, name)
        assert f"`{name}`" in page, name


@pytest.mark.parametrize(
    "cls",
    [cls for cls in _every_error() if not cls.__name__.startswith("_")],
    ids=lambda cls: cls.__name__,
)
def test_the_command_lines_exit_status_follows_the_group(cls):
    """``mcp-sync`` exits by what went wrong, read from the group: 2 for a mistake of the
    caller's, 3 for the server's, 4 for the connection's, 6 for the sign-in's; a timeout is
    5 and an abort 130 (before, every class not in its hand-kept lists fell through to 3:
    ``MissingExtra``, ``UnknownName``, ``Aborted``...)."""
    from mcp_sync import cli

    groups = _groups()
    error = _made(cls)
    expected = {
        "InvalidUsage": cli.EXIT_USAGE,
        "ServerError": cli.EXIT_PROTOCOL,
        "ConnectionFailure": cli.EXIT_CONNECTION,
        "OAuthError": cli.EXIT_AUTH,
    }[next(name for name, group in groups.items() if isinstance(error, group))]
    if isinstance(error, mcp_sync.RequestTimeout):
        expected = cli.EXIT_TIMEOUT
    elif isinstance(error, mcp_sync.Aborted):
        expected = cli.EXIT_INTERRUPTED
    elif isinstance(error, mcp_sync.errors.HttpError) and error.status in (401, 403):
        expected = cli.EXIT_AUTH
    assert cli.exit_code_for(error) == expected
