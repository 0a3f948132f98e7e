"""Running an untrusted stdio server in a sandbox: bubblewrap over user namespaces, on Linux.

:class:`Sandbox` says what the server may reach; :func:`sandboxed_argv` turns a server's argv
into the ``bwrap`` command line that runs it so. The mounts, in order (a later mount covers an
earlier one):

- ``/`` read-only, a fresh ``/dev`` and ``/proc`` (of the sandbox's own PID namespace);
- empty tmpfs over ``/tmp`` and ``/var/tmp`` (private temporary directories), ``/run`` (where
  the sockets of D-Bus, Docker, ssh-agent and the session live: a read-only mount does not
  stop ``connect()`` on a Unix socket) and every home directory the server could find
  (``$HOME`` of its environment, the client's home, the user's home in the password
  database);
- the client's roots (read-write unless ``roots_writable=False``) and the paths the user lists,
  parents first, so a path listed inside the hidden home or ``/tmp`` is visible again.

Every mount is made at a path with its links resolved: bwrap cannot mount at a path that
goes through a link (``/home`` -> ``/var/home``), and the link leads there anyway, as long
as it is not itself in a hidden directory. A listed path that is a link in a hidden
directory (a venv in the home that links to another) is also mounted where the link was.

Namespaces: ``--unshare-all`` (user, PID, network, IPC, UTS, cgroup), with the network shared
again only for ``network="host"``; ``--die-with-parent``; all capabilities dropped. Not
``--new-session``: the server must stay in the process group the transport signals (see
:mod:`mcp_sync.transports._process`); the terminal-injection attack ``--new-session`` guards
against needs a terminal on the server's stdio, and the transport gives it only pipes (its
session, started by the transport, has no controlling terminal).

The limits are set with ``setrlimit`` by a few lines of Python (the client's interpreter) run
inside the sandbox just before the server is exec'd: inside, because ``RLIMIT_NPROC`` counts
processes per user *per user namespace*, so set there it counts the sandbox's processes only
(bwrap's own init among them) instead of every process the user runs. The same lines then
report on a pipe that the sandbox is set up: a bwrap that refuses (a mount it cannot make, a
working directory it cannot enter) exits without that report, and ``start()`` raises
:class:`SandboxUnavailable` with bwrap's reason instead of starting a server that never
answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import select
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .._rules.numbers import whole
from ..errors import SandboxUnavailable, ServerStartError

__all__ = ["DEFAULT_MAX_PROCESSES", "Sandbox", "SandboxUnavailable", "sandboxed_argv"]

Network = Literal["none", "host"]

_INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install"
    " bubblewrap; Arch: pacman -S bubblewrap)"
)
_ALLOW = (
    "allow unprivileged user namespaces (sysctl user.max_user_namespaces=15000;"
    " Debian: kernel.unprivileged_userns_clone=1; Ubuntu 24.04+:"
    " kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; in a"
    " container, a seccomp profile that permits clone/unshare of namespaces)"
)


def _paths(value: Sequence[str | os.PathLike[str]] | str | os.PathLike[str]) -> tuple[str, ...]:
    if isinstance(value, (str, os.PathLike)):
        value = (value,)
    return tuple(os.path.abspath(os.path.expanduser(os.fspath(p))) for p in value)


class _Default(int):
    """The default ``max_processes``: :data:`DEFAULT_MAX_PROCESSES` for a client that is not
    root, none for root (told apart from the same number asked for)."""


#: The processes a sandboxed server may have at once (``max_processes``) unless told
#: otherwise, where the client is not root: a fork bomb stops there.
DEFAULT_MAX_PROCESSES = 256


@dataclass(frozen=True)
class Sandbox:
    """How a sandboxed stdio server is confined (``sandbox=True`` means ``Sandbox()``).

    - ``network``: ``"none"`` (default: a network namespace of its own, with only its own
      loopback; it cannot reach the host's ``127.0.0.1`` nor the internet) or ``"host"`` (no
      network isolation, for a server that must fetch; the filesystem rules still hold).
    - ``read_write``, ``read_only``: paths the server may use, beyond the read-only system
      (stored as tuples of absolute paths). Everything else under ``/`` is read-only;
      ``/tmp`` is a private empty directory; the home directory is private and empty unless
      a path inside it is listed here.
    - ``roots``: the client's roots, bound read-write (read-only with
      ``roots_writable=False``). ``connect(..., roots=..., sandbox=...)`` fills it in from the
      client's roots when it is empty; roots set later with ``set_roots`` are not visible until
      the server is started again (a recovery, a new connection).
    - ``max_memory`` (bytes of address space, ``RLIMIT_AS``), ``max_cpu_seconds``
      (``RLIMIT_CPU``: SIGXCPU when spent, SIGKILL a second later), ``max_processes``
      (``RLIMIT_NPROC``, counting every process in the sandbox, bwrap's init included),
      ``max_open_files`` (``RLIMIT_NOFILE``).
      None: no limit. ``max_processes`` is :data:`DEFAULT_MAX_PROCESSES` (256) unless given,
      for a client that is not root; Linux counts threads in it too, so a server that runs a
      browser or a JVM needs more. The kernel does not apply ``RLIMIT_NPROC`` to root, so
      for a client running as root the default is None, and a ``max_processes`` given raises
      :class:`SandboxUnavailable`.
    - ``bwrap``: the bubblewrap program (searched on the client's ``PATH``).
    """

    network: Network = "none"
    read_write: Sequence[str] = ()
    read_only: Sequence[str] = ()
    roots: Sequence[str] = ()
    roots_writable: bool = True
    max_memory: int | None = None
    max_cpu_seconds: int | None = None
    max_processes: int | None = _Default(DEFAULT_MAX_PROCESSES)
    max_open_files: int | None = None
    bwrap: str = "bwrap"

    def __post_init__(self) -> None:
        if self.network not in ("none", "host"):
            raise ValueError(f"Sandbox network must be 'none' or 'host', not {self.network!r}")
        for name in ("read_write", "read_only", "roots"):
            object.__setattr__(self, name, _paths(getattr(self, name)))
        if isinstance(self.max_processes, _Default):
            default = None if os.geteuid() == 0 else DEFAULT_MAX_PROCESSES
            object.__setattr__(self, "max_processes", default)
        for name in ("max_memory", "max_cpu_seconds", "max_processes", "max_open_files"):
            value = getattr(self, name)
            if value is not None:
                whole(value, f"Sandbox: {name}", minimum=1)

    def with_roots(self, roots: Sequence[str | os.PathLike[str]]) -> Sandbox:
        """This sandbox with ``roots`` as the client's roots, unless it names its own."""
        return self if self.roots else dataclasses.replace(self, roots=_paths(roots))

    @staticmethod
    def from_config(value: object) -> Sandbox | None:
        """The ``sandbox`` key of an ``mcp.json`` entry: true, false, or an object of this
        class's fields (paths as lists of strings); ``ValueError`` says what is wrong."""
        if value is None or value is False:
            return None
        if value is True:
            return Sandbox()
        if not isinstance(value, dict):
            raise ValueError('"sandbox" must be true, false or an object')
        fields = {f.name for f in dataclasses.fields(Sandbox)}
        unknown = sorted(set(value) - fields)
        if unknown:
            raise ValueError(f'"sandbox" has unknown keys {unknown} (known: {sorted(fields)})')
        for key in ("read_write", "read_only", "roots"):
            paths = value.get(key, [])
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise ValueError(f'"sandbox.{key}" must be a list of strings')
        if not isinstance(value.get("roots_writable", True), bool):
            raise ValueError('"sandbox.roots_writable" must be true or false')
        return Sandbox(**value)

    @staticmethod
    def of(value: Sandbox | bool | None) -> Sandbox | None:
        """The sandbox ``sandbox=`` asks for: True is the defaults, False or None is none."""
        if value is None or value is False:
            return None
        if value is True:
            return Sandbox()
        if isinstance(value, Sandbox):
            return value
        raise TypeError(f"sandbox must be True, False, None or a Sandbox, not {value!r}")


# -- the command line ---------------------------------------------------------------------

_LIMITS = (
    ("max_memory", "AS"),
    ("max_cpu_seconds", "CPU"),
    ("max_processes", "NPROC"),
    ("max_open_files", "NOFILE"),
)

# Run inside the sandbox: set the limits, say on the report pipe that the sandbox is set up,
# give back the signals Python ignores (an exec'd program keeps them ignored), exec the server.
_SHIM = r"""
import os, resource, signal, sys
report, limits, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
for item in filter(None, limits.split(",")):
    name, value = item.split("=")
    # CPU: SIGXCPU at the limit (a server may catch it and log), SIGKILL a second later
    hard = int(value) + 1 if name == "CPU" else int(value)
    resource.setrlimit(getattr(resource, "RLIMIT_" + name), (int(value), hard))
try:
    os.write(report, b"1")
except OSError:
    pass  # the client stopped waiting
os.close(report)
for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ"):
    if hasattr(signal, name):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
try:
    os.execvp(argv[0], argv)
except OSError as exc:
    sys.stderr.write(f"mcp_sync sandbox: cannot run {argv[0]!r}: {exc.strerror}\n")
    os._exit(127)
"""


#: Hidden behind an empty tmpfs, besides the homes: the temporary directories and /run.
_HIDDEN = ("/tmp", "/var/tmp", "/run")


def _homes(env: Mapping[str, str]) -> list[str]:
    """Every home directory the server could find, as given (a link is not resolved)."""
    found = [env.get("HOME", ""), os.path.expanduser("~")]
    with contextlib.suppress(KeyError):
        found.append(pwd.getpwuid(os.getuid()).pw_dir)
    return [h for h in found if h and os.path.isdir(h) and os.path.realpath(h) != "/"]


def _forms(paths: Sequence[str]) -> list[str]:
    """Each path as given and with its links resolved (a link and its target both lead in)."""
    return list(dict.fromkeys(f for p in paths for f in (os.path.abspath(p), os.path.realpath(p))))


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def sandboxed_argv(
    sandbox: Sandbox,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    report: int,
) -> list[str]:
    """The ``bwrap`` command that runs ``argv`` (its program already resolved) confined by
    ``sandbox``; raises :class:`SandboxUnavailable` if that cannot be done here. Inside, once
    the sandbox is set up, a byte is written to the inherited descriptor ``report`` (see
    :func:`await_setup`)."""
    bwrap = _bwrap(sandbox)
    limits = [(rl, getattr(sandbox, field)) for field, rl in _LIMITS]
    limits = [(rl, value) for rl, value in limits if value is not None]
    if sandbox.max_processes is not None and os.geteuid() == 0:
        raise SandboxUnavailable(
            "cannot limit the processes of a sandboxed server started by root: the kernel does"
            " not apply RLIMIT_NPROC to uid 0; run the client as a normal user, or leave"
            " max_processes unset",
            command=argv[0],
        )
    hidden = [p for p in (*_HIDDEN, *_homes(env)) if os.path.isdir(p)]
    roots_how = "--bind-try" if sandbox.roots_writable else "--ro-bind-try"
    listed = [(p, "--bind-try") for p in sandbox.read_write]
    listed += [(p, "--ro-bind-try") for p in sandbox.read_only]
    listed += [(p, roots_how) for p in sandbox.roots]
    # the interpreter that sets the limits and reports may live in the hidden home (pyenv)
    listed += [(p, "--ro-bind-try") for p in dict.fromkeys((sys.prefix, sys.base_prefix))]
    shown = _forms([p for p, _how in listed])
    for program in _forms([argv[0]]):
        cover = _inside(program, _forms(hidden))
        if cover is not None and _inside(program, shown) is None:
            raise ServerStartError(
                f"cannot start MCP server {argv[0]!r} in its sandbox: the program ({program})"
                f" is under {cover}, which the sandbox hides; list its directory in"
                f" Sandbox(read_only=[...])",
                command=argv[0],
            )
    line = [bwrap, "--unshare-all"]
    if sandbox.network == "host":
        line.append("--share-net")
    line += ["--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    line += ["--dev", "/dev", "--proc", "/proc"]
    # bwrap cannot mount at a path through a link: every mount is made at a resolved path
    tmpfs = sorted(dict.fromkeys(os.path.realpath(p) for p in hidden), key=_depth)
    for path in tmpfs:
        line += ["--tmpfs", path]
    binds = [(how, os.path.realpath(p), os.path.realpath(p)) for p, how in listed]
    for path, how in listed:
        where = _where(path, tmpfs)
        bound = _deepest(where, [dest for _how, _src, dest in binds])
        if where != os.path.realpath(path) and _depth(_deepest(where, tmpfs)) > _depth(bound):
            # a link in a hidden directory: gone inside, so its path is mounted too
            binds.append((how, os.path.realpath(path), where))
    # parents first: a child's mount must land on top of its parent's, not under it
    for how, source, dest in sorted(dict.fromkeys(binds), key=lambda bind: _depth(bind[2])):
        line += [how, source, dest]
    if cwd is not None:
        line += ["--chdir", os.path.abspath(cwd)]
    spec = ",".join(f"{rl}={value}" for rl, value in limits)
    return [*line, "--", sys.executable, "-I", "-S", "-c", _SHIM, str(report), spec, *argv]


def _inside(path: str, dirs: Sequence[str]) -> str | None:
    """The first of ``dirs`` that holds ``path``, or None."""
    for top in dirs:
        if path == top or path.startswith(top.rstrip("/") + "/"):
            return top
    return None


def _deepest(path: str, dirs: Sequence[str]) -> str:
    """The deepest of ``dirs`` that holds ``path`` strictly (below it), or ``""``."""
    holding = [top for top in dirs if path.startswith(top.rstrip("/") + "/")]
    return max(holding, key=_depth, default="")


def _where(path: str, tmpfs: Sequence[str]) -> str:
    """Where ``path`` leads inside the sandbox: its links resolved, except from where it
    enters a hidden directory on, since the links in there are gone."""
    parts = path.split("/")[1:]
    resolved = "/"
    for i, part in enumerate(parts):
        step = os.path.join(resolved, part)
        if _deepest(step, tmpfs):
            return os.path.join(step, *parts[i + 1 :])
        resolved = os.path.realpath(step)
    return resolved


def await_setup(report: int, timeout: float) -> bool:
    """Wait for the sandbox's report on the pipe ``report`` (read end): True once it is set
    up, or after ``timeout`` seconds without a word (the server's own start then says how it
    went); False if every writer closed without a word, bwrap having refused."""
    poller = select.poll()  # not select(): the descriptor may be above FD_SETSIZE
    poller.register(report, select.POLLIN)
    return not poller.poll(timeout * 1000) or os.read(report, 1) == b"1"


def refusal(stderr: bytes, status: int | None) -> str:
    """bwrap's reason for refusing, from its stderr (its last line), else its exit status."""
    said = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    if said:
        return said[-1].removeprefix("bwrap: ").strip()
    return f"bwrap exited with status {status}"


_probe_lock = threading.Lock()
_probed: dict[tuple[str, str], str | None] = {}


def _bwrap(sandbox: Sandbox) -> str:
    """The path of a ``bwrap`` that works here, checked once per process and network mode."""
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the stdio sandbox needs Linux (bubblewrap); this is {sys.platform}: see"
            " docs/sandbox.md for what macOS (sandbox-exec) and Windows (AppContainer) offer,"
            " or run the server without sandbox=",
            command=sandbox.bwrap,
        )
    path = shutil.which(sandbox.bwrap)
    if path is None:
        raise SandboxUnavailable(
            f"the stdio sandbox needs bubblewrap, and {sandbox.bwrap!r} is not on PATH: "
            + _INSTALL,
            command=sandbox.bwrap,
        )
    key = (path, sandbox.network)
    with _probe_lock:
        if key not in _probed:
            _probed[key] = _probe(path, sandbox.network)
        failure = _probed[key]
    if failure is not None:
        raise SandboxUnavailable(
            f"bubblewrap cannot set up the sandbox here ({failure}): {_ALLOW}", command=path
        )
    return path


def _probe(bwrap: str, network: Network) -> str | None:
    """Run ``true`` in the namespaces a server will get; None if that works, else why not."""
    argv = [bwrap, "--unshare-all", *(["--share-net"] if network == "host" else [])]
    argv += ["--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    try:
        done = subprocess.run(
            [*argv, "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return said[-1] if said else f"bwrap exited with status {done.returncode}"
