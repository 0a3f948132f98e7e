"""Running an untrusted stdio server in a sandbox: bubblewrap over user namespaces, on Linux.

:class:`Sandbox` says what the server may reach; :func:`sandboxed_argv` turns a server's argv
into the ``bwrap`` command line that runs it so. The mounts, in order (a later mount covers an
earlier one):

- ``/`` read-only, a fresh ``/dev`` and ``/proc`` (of the sandbox's own PID namespace);
- empty tmpfs over ``/tmp`` (the private temporary directory), ``/run`` (where the sockets of
  D-Bus, Docker, ssh-agent and the session live: a read-only mount does not stop
  ``connect()`` on a Unix socket) and every home directory the server could find (``$HOME``
  of its environment, the client's home, the user's home in the password database);
- the client's roots (read-write unless ``roots_writable=False``) and the paths the user lists,
  parents first, so a path listed inside the hidden home or ``/tmp`` is visible again.

Namespaces: ``--unshare-all`` (user, PID, network, IPC, UTS, cgroup), with the network shared
again only for ``network="host"``; ``--die-with-parent``; all capabilities dropped. Not
``--new-session``: the server must stay in the process group the transport signals (see
:mod:`mcp_sync.transports._process`); the terminal-injection attack ``--new-session`` guards
against needs a terminal on the server's stdio, and the transport gives it only pipes (its
session, started by the transport, has no controlling terminal).

The limits are set with ``setrlimit`` by a few lines of Python run inside the sandbox just
before the server is exec'd: inside, because ``RLIMIT_NPROC`` counts processes per user *per
user namespace*, so set there it counts the sandbox's processes only (bwrap's own init among
them) instead of every process the user runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .._numbers import whole
from ..errors import SandboxUnavailable, ServerStartError

__all__ = ["Sandbox", "SandboxUnavailable", "sandboxed_argv"]

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
      None: no limit. The kernel does not apply ``RLIMIT_NPROC`` to root, so with a client
      running as root ``max_processes`` raises :class:`SandboxUnavailable`.
    - ``bwrap``: the bubblewrap program (searched on the client's ``PATH``).
    """

    network: Network = "none"
    read_write: Sequence[str] = ()
    read_only: Sequence[str] = ()
    roots: Sequence[str] = ()
    roots_writable: bool = True
    max_memory: int | None = None
    max_cpu_seconds: int | None = None
    max_processes: int | None = None
    max_open_files: int | None = None
    bwrap: str = "bwrap"

    def __post_init__(self) -> None:
        if self.network not in ("none", "host"):
            raise ValueError(f"Sandbox network must be 'none' or 'host', not {self.network!r}")
        for name in ("read_write", "read_only", "roots"):
            object.__setattr__(self, name, _paths(getattr(self, name)))
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

_SHIM = r"""
import os, resource, sys
for item in sys.argv[1].split(","):
    name, value = item.split("=")
    # CPU: SIGXCPU at the limit (a server may catch it and log), SIGKILL a second later
    hard = int(value) + 1 if name == "CPU" else int(value)
    resource.setrlimit(getattr(resource, "RLIMIT_" + name), (int(value), hard))
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as exc:
    sys.stderr.write(f"mcp_sync sandbox: cannot run {sys.argv[2]!r}: {exc.strerror}\n")
    os._exit(127)
"""


def _homes(env: Mapping[str, str]) -> list[str]:
    found = [env.get("HOME", ""), os.path.expanduser("~")]
    with contextlib.suppress(KeyError):
        found.append(pwd.getpwuid(os.getuid()).pw_dir)
    homes = []
    for home in found:
        if home and os.path.isdir(home) and os.path.realpath(home) != "/":
            for path in {os.path.abspath(home), os.path.realpath(home)}:
                if path not in homes:
                    homes.append(path)
    return homes


def sandboxed_argv(
    sandbox: Sandbox, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | None
) -> list[str]:
    """The ``bwrap`` command that runs ``argv`` (its program already resolved) confined by
    ``sandbox``; raises :class:`SandboxUnavailable` if that cannot be done here."""
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
    homes = _homes(env)
    hidden = ["/tmp", "/run", *homes]
    shown = [*sandbox.read_write, *sandbox.read_only, *sandbox.roots]
    program = os.path.realpath(argv[0])
    cover = _inside(program, hidden)
    if cover is not None and _inside(program, shown) is None:
        raise ServerStartError(
            f"cannot start MCP server {argv[0]!r} in its sandbox: the program ({program}) is"
            f" under {cover}, which the sandbox hides; list its directory in"
            f" Sandbox(read_only=[...])",
            command=argv[0],
        )
    line = [bwrap, "--unshare-all"]
    if sandbox.network == "host":
        line.append("--share-net")
    line += ["--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    line += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if os.path.isdir("/run"):
        line += ["--tmpfs", "/run"]
    for home in homes:
        line += ["--tmpfs", home]
    binds = [(p, "--bind-try") for p in sandbox.read_write]
    binds += [(p, "--ro-bind-try") for p in sandbox.read_only]
    roots_how = "--bind-try" if sandbox.roots_writable else "--ro-bind-try"
    binds += [(p, roots_how) for p in sandbox.roots]
    if limits:  # the shim's interpreter may live in the hidden home (pyenv, a venv there)
        binds += [(p, "--ro-bind-try") for p in {sys.prefix, sys.base_prefix}]
    # parents first: a child's mount must land on top of its parent's, not under it
    for path, how in sorted(binds, key=lambda bind: bind[0].rstrip("/").count("/")):
        line += [how, path, path]
    if cwd is not None:
        line += ["--chdir", os.path.abspath(cwd)]
    line.append("--")
    if limits:
        spec = ",".join(f"{rl}={value}" for rl, value in limits)
        line += [sys.executable, "-I", "-S", "-c", _SHIM, spec]
    return [*line, *argv]


def _inside(path: str, dirs: Sequence[str]) -> str | None:
    """The first of ``dirs`` that holds ``path``, or None."""
    for top in dirs:
        if path == top or path.startswith(top.rstrip("/") + "/"):
            return top
    return None


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
