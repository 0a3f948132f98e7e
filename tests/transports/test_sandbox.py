"""The stdio sandbox (bubblewrap): real servers work on their roots, a hostile one gets nothing.

Every test has a temporary ``$HOME`` (under ``/var/tmp``) holding a fake ``~/.ssh/id_rsa``.
Each hostile attempt is first shown to succeed without the sandbox, so that the sandboxed
failure is the sandbox's; that each home is what the sandbox hides, whatever links lead to
it, is read from the bwrap command line (the fake home is also under ``/var/tmp``, which is
hidden too).

The tests run from a clone anywhere (under ``$HOME``, ``/tmp``, a path with a space, behind a
link) and as any user: what their servers need and the sandbox would hide there (the
checkout, the peers and Node under ``tests/peers``, the interpreter), they list, as
``docs/sandbox.md`` tells users to.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcp_sync
from mcp_sync import Sandbox, SandboxUnavailable, ServerStartError
from mcp_sync.errors import ConnectionClosed
from mcp_sync.transports.sandbox import sandboxed_argv
from mcp_sync.transports.stdio import StdioTransport
from tests.helpers.support import NODE, PEERS, ROOT, SERVERS, wait_until

PROBE = str(SERVERS / "sandbox_probe_server.py")
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- fake key for the sandbox tests"
# What the test servers need that the sandbox may hide: the interpreter (pyenv's is in the
# home), the checkout (the servers, mcp_sync), the peers and Node (the peers may be a link to
# another checkout's)
NEEDED = (sys.base_prefix, sys.prefix, str(ROOT), str(PEERS))
TEST_TREE = Sandbox(read_only=NEEDED)


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="mcp-sync-home-", dir="/var/tmp"))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(KEY)
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def probe(sandbox: Sandbox | None, **options: object) -> mcp_sync.Client:
    return mcp_sync.connect([sys.executable, PROBE], sandbox=sandbox, request_timeout=30, **options)


def marked_processes(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def test_server_filesystem_works_on_its_root_in_the_sandbox(home, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("inside the root")
    script = PEERS / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    with mcp_sync.connect(
        [str(NODE), str(script)], roots=[root], sandbox=TEST_TREE, request_timeout=30
    ) as client:
        wait_until(
            lambda: str(root) in client.call_tool("list_allowed_directories").text, timeout=20
        )
        read = client.call_tool("read_text_file", {"path": str(root / "a.txt")})
        assert "inside the root" in read.text
        wrote = client.call_tool(
            "write_file", {"path": str(root / "b.txt"), "content": "written in the sandbox"}
        )
        assert not wrote.is_error, wrote.text
    assert (root / "b.txt").read_text() == "written in the sandbox"


def test_mcp_server_git_works_on_its_repository_in_the_sandbox(home, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    (repo / "readme.txt").write_text("hello\n")
    subprocess.run([*git, "-C", str(repo), "add", "readme.txt"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "first"], check=True)
    (repo / "new.txt").write_text("untracked\n")
    exe = Path(sys.executable).parent / "mcp-server-git"
    with mcp_sync.connect(
        [str(exe), "--repository", str(repo)],
        roots=[repo],
        sandbox=TEST_TREE,
        request_timeout=30,
    ) as client:
        status = client.call_tool("git_status", {"repo_path": str(repo)})
        assert "new.txt" in status.text, status.text
        log = client.call_tool("git_log", {"repo_path": str(repo)})
        assert "first" in log.text, log.text
        added = client.call_tool("git_add", {"repo_path": str(repo), "files": ["new.txt"]})
        assert not added.is_error, added.text
    staged = subprocess.run(
        ["git", "-C", str(repo), "diff", "--cached", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert staged.stdout.split() == ["new.txt"]


def test_a_hostile_tool_cannot_read_the_key_dial_out_or_write_outside_its_roots(home, tmp_path):
    key = home / ".ssh" / "id_rsa"
    outside = Path(tempfile.mkdtemp(prefix="mcp-sync-outside-", dir="/var/tmp"))
    root = tmp_path / "root"
    root.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0)
    port = listener.getsockname()[1]
    try:
        # without the sandbox, each attempt works: the same tool reaches all three
        with probe(None) as client:
            assert client.call_tool("read", {"path": str(key)}).text == KEY
            assert client.call_tool("dial", {"port": port}).text == "sent"
            listener.accept()[0].close()
            target = outside / "planted-unsandboxed"
            assert client.call_tool("write", {"path": str(target), "text": "x"}).text == "written"
            target.unlink()
        with probe(TEST_TREE, roots=[root]) as client:
            read = client.call_tool("read", {"path": str(key)}).text
            assert read.startswith("denied:") and KEY not in read
            assert client.call_tool("home", {}).text == str(home)  # same path, empty
            dial = client.call_tool("dial", {"port": port}).text
            assert dial.startswith("denied:"), dial
            for path in (outside / "planted", home / ".ssh" / "authorized_keys"):
                wrote = client.call_tool("write", {"path": str(path), "text": "x"}).text
                assert wrote.startswith("denied:"), wrote
            inside = client.call_tool("write", {"path": str(root / "ok"), "text": "y"}).text
            assert inside == "written"
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected
        assert list(outside.iterdir()) == []
        assert sorted(p.name for p in (home / ".ssh").iterdir()) == ["id_rsa"]
        assert (root / "ok").read_text() == "y"
    finally:
        listener.close()
        shutil.rmtree(outside, ignore_errors=True)


_BOMB_CLIENT = textwrap.dedent(
    """
    import json, os, queue, sys
    from mcp_sync import Sandbox
    from mcp_sync.transports.stdio import StdioTransport
    bomb, options, forks = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    needed = [os.path.dirname(bomb), sys.prefix, sys.base_prefix]
    sandbox = Sandbox(read_only=needed, **options)
    messages = queue.Queue()
    t = StdioTransport(sys.executable, ["-I", "-S", bomb, forks], sandbox=sandbox)
    t.on_message(messages.put)
    t.start()
    report = messages.get(timeout=60)["params"]
    print(json.dumps({"limit": sandbox.max_processes, **report}), flush=True)
    t.close()
    """
)

NOBODY = {"user": 65534, "group": 65534, "extra_groups": []}


def _as_nobody(scratch: Path) -> tuple[str, dict[str, str], str]:
    """A Python the user ``nobody`` can run, an environment in which it imports mcp_sync,
    and the fork bomb, all where ``nobody`` can read them (a copy of this checkout's mcp_sync
    and the bomb in ``scratch``: the checkout may be in root's home)."""
    shutil.copytree(ROOT / "mcp_sync", scratch / "mcp_sync")
    bomb = shutil.copy(SERVERS / "sandbox_fork_bomb.py", scratch)
    # the venv's packages, by their real path (the venv may be a link from root's home)
    site = [os.path.realpath(p) for p in sys.path if p.endswith("site-packages")]
    path = os.pathsep.join([str(scratch), *site])
    env = {"PATH": os.defpath, "HOME": "/", "PYTHONPATH": path}
    for python in (sys.executable, "/usr/bin/python3"):
        try:
            ok = subprocess.run(
                [python, "-c", "import mcp_sync"],
                env=env,
                capture_output=True,
                check=False,
                **NOBODY,
            )
        except OSError:  # not executable by nobody (an interpreter in root's home)
            continue
        if ok.returncode == 0:
            return python, env, bomb
    # nox's interpreters live in root's home (pyenv), which nobody cannot enter, and the system
    # Python is another version (the venv's packages do not fit): make test runs this case
    pytest.skip(
        f"this Python ({sys.executable}) cannot be run by the user nobody, and no other with"
        " its site-packages can: RLIMIT_NPROC binds only an unprivileged user"
    )


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A directory that every user may read (pytest's own temporary directories are not)."""
    path = Path(tempfile.mkdtemp(prefix="mcp-sync-scratch-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize(
    ("options", "limit"), [({"max_processes": 20}, 20), ({}, 256)], ids=["20", "default"]
)
def test_a_fork_bomb_stops_at_its_process_limit(options, limit, scratch):
    bomb, python, env, run_as = str(SERVERS / "sandbox_fork_bomb.py"), sys.executable, None, {}
    if os.geteuid() == 0:
        # the kernel exempts root from RLIMIT_NPROC: asked for, refused, never silently
        # unlimited; by default, none for root
        if options:
            transport = StdioTransport(sys.executable, [bomb], sandbox=Sandbox(**options))
            with pytest.raises(SandboxUnavailable, match="RLIMIT_NPROC"):
                transport.start()
        else:
            assert Sandbox().max_processes is None
        # what a user who is not root gets: the same run as nobody
        python, env, bomb = _as_nobody(scratch)
        run_as = NOBODY
    done = subprocess.run(
        [python, "-c", _BOMB_CLIENT, bomb, json.dumps(options), str(limit + 50)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **run_as,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # bwrap's init, the bomb itself and its children count towards the limit
    assert report["limit"] == limit and limit - 10 <= report["count"] < limit, report
    assert "Resource temporarily unavailable" in report["error"]


@pytest.mark.parametrize("link", ["the home", "its parent"])
def test_a_home_reached_through_a_link_is_hidden_and_the_server_starts(link, monkeypatch):
    # /home -> /var/home (Fedora Silverblue), or a home that is itself a link: bwrap cannot
    # mount on a path through a link ("Can't mkdir ...")
    base = Path(tempfile.mkdtemp(prefix="mcp-sync-linked-", dir="/var/tmp"))
    try:
        real = base / "real" / "me"
        (real / ".ssh").mkdir(parents=True)
        (real / ".ssh" / "id_rsa").write_text(KEY)
        (real / "notes").mkdir()
        (real / "notes" / "todo.txt").write_text("listed through the link")
        if link == "the home":
            (base / "me").symlink_to(real)
            home = base / "me"
        else:
            (base / "users").symlink_to(real.parent)
            home = base / "users" / "me"
        monkeypatch.setenv("HOME", str(home))
        # the home is hidden at its real path (through the link, as seen from inside, too)
        line = sandboxed_argv(Sandbox(), ["/bin/true"], env=os.environ, cwd=None, report=3)
        hidden = [line[i + 1] for i, arg in enumerate(line) if arg == "--tmpfs"]
        assert str(real) in hidden and all(os.path.realpath(p) == p for p in hidden)
        listed = Sandbox(read_only=(*NEEDED, home / "notes"))
        with probe(listed) as client:
            assert client.call_tool("home", {}).text == str(home)
            for key in (home / ".ssh" / "id_rsa", real / ".ssh" / "id_rsa"):
                read = client.call_tool("read", {"path": str(key)}).text
                assert read.startswith("denied:") and KEY not in read
            notes = client.call_tool("read", {"path": str(home / "notes" / "todo.txt")})
            assert notes.text == "listed through the link"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_listed_link_inside_the_hidden_home_leads_where_it_points(home, tmp_path):
    # a venv in the home that links to one elsewhere: the link is gone with the hidden home,
    # its path must still lead to what it points to
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "data.txt").write_text("reached through the link")
    (home / "project").symlink_to(target)
    with probe(Sandbox(read_only=(*NEEDED, home / "project"))) as client:
        read = client.call_tool("read", {"path": str(home / "project" / "data.txt")}).text
        assert read == "reached through the link"


def test_what_bwrap_refuses_is_sandbox_unavailable_with_its_reason(home, tmp_path):
    work = home / "work"  # a working directory in the hidden home
    work.mkdir()
    created = tmp_path / "ran"
    transport = StdioTransport(
        "/bin/sh", ["-c", f"touch {created}"], cwd=work, sandbox=Sandbox(roots=[tmp_path])
    )
    with pytest.raises(SandboxUnavailable, match=rf"Can't chdir to {work}") as caught:
        transport.start()
    assert "bubblewrap" in str(caught.value) and caught.value.command == "/bin/sh"
    assert not created.exists() and transport.pid is None
    transport.close()


def test_a_unix_socket_under_var_tmp_is_out_of_reach(home, scratch):
    # a read-only mount does not stop connect(): only a hidden directory does
    path = scratch / "agent.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(0)
    try:
        with probe(None) as client:
            assert client.call_tool("dial_unix", {"path": str(path)}).text == "sent"
            listener.accept()[0].close()
        with probe(TEST_TREE) as client:
            dial = client.call_tool("dial_unix", {"path": str(path)}).text
            assert dial.startswith("denied:"), dial
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected
    finally:
        listener.close()


def test_the_server_gets_the_default_signal_dispositions(home):
    # the Python run inside the sandbox to set the limits ignores SIGPIPE, which an exec'd
    # program keeps: node or a shell would not die writing to a closed pipe
    script = "grep SigIgn /proc/self/status >&2; exit 3"

    def ignored(sandbox: Sandbox | None) -> str:
        with pytest.raises(ConnectionClosed) as caught:
            mcp_sync.connect(["/bin/sh", "-c", script], sandbox=sandbox, timeout=30)
        return caught.value.stderr_tail or ""

    assert ignored(Sandbox(max_open_files=100)) == ignored(None)


def test_memory_open_files_and_cpu_limits_hold(home):
    with probe(None) as client:  # unsandboxed, both work
        assert client.call_tool("exhaust", {"resource": "files"}).text == "done"
    limited = Sandbox(read_only=TEST_TREE.read_only, max_memory=2 << 30, max_open_files=100)
    with probe(limited) as client:
        memory = client.call_tool("exhaust", {"resource": "memory"}).text
        assert memory.startswith("denied: MemoryError"), memory
        files = client.call_tool("exhaust", {"resource": "files"}).text
        assert files.startswith("denied: OSError: [Errno 24]"), files
        assert client.call_tool("home", {}).text == str(home)  # still serving
    spin = StdioTransport(
        sys.executable,
        ["-I", "-S", "-c", "while True: pass"],
        sandbox=Sandbox(read_only=TEST_TREE.read_only, max_cpu_seconds=1),
    )
    spin.on_message(lambda message: None)
    spin.start()
    try:
        wait_until(lambda: spin.pid is None, timeout=60)
    finally:
        spin.close()
    # bwrap reports a child killed by signal N as exit status 128 + N
    assert spin.exit_status == 128 + signal.SIGXCPU


def test_killing_the_client_leaves_nothing_behind(home):
    marker = f"mcp-sync-sandbox-{os.getpid()}-kill"
    code = textwrap.dedent(
        f"""
        import sys, time, mcp_sync
        client = mcp_sync.connect([sys.executable, {PROBE!r}, {marker!r}],
                                  sandbox=mcp_sync.Sandbox(read_only={list(TEST_TREE.read_only)!r}))
        client.call_tool("spawn_sleeper", {{}})
        print("ready", flush=True)
        time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert len(marked_processes(marker)) >= 2, "the server and its sleeper are not running"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # the sleeper left the process group (setsid): the PID namespace takes it down too
        wait_until(lambda: not marked_processes(marker), timeout=15)
    finally:
        proc.kill()
        proc.wait()


def test_the_shutdown_ladder_stops_a_server_that_ignores_eof_and_sigterm(home):
    stubborn = str(SERVERS / "stdio_stubborn.py")
    marker = f"mcp-sync-sandbox-{os.getpid()}-ladder"  # this test's, not another's stubborn
    transport = StdioTransport(
        sys.executable,
        ["-I", "-S", stubborn, "--ignore-eof", "--ignore-term", "--grandchild", marker],
        sandbox=TEST_TREE,
        close_timeout=0.5,
    )
    transport.on_message(lambda message: None)
    transport.start()
    wait_until(lambda: len(marked_processes(marker)) >= 2, timeout=20)
    transport.close()
    assert marked_processes(marker) == []
    assert transport.exit_status is not None and transport.exit_status < 0  # it was killed


def test_the_stderr_tail_and_exit_status_come_through_the_sandbox(home):
    code = "import sys; sys.stderr.write('missing API key\\n'); sys.exit(3)"
    with pytest.raises(ConnectionClosed) as caught:
        mcp_sync.connect(
            [sys.executable, "-c", code], sandbox=TEST_TREE, request_timeout=30, timeout=30
        )
    assert caught.value.exit_status == 3
    assert "missing API key" in (caught.value.stderr_tail or "")


def test_recovery_starts_a_new_sandboxed_server(home):
    marker = f"mcp-sync-sandbox-{os.getpid()}-recovery"
    with mcp_sync.connect(
        [sys.executable, PROBE, marker], sandbox=TEST_TREE, recovery=True, request_timeout=30
    ) as client:
        assert client.call_tool("home", {}).text == str(home)
        first = marked_processes(marker)
        for pid in first:
            with contextlib.suppress(ProcessLookupError):  # (one may have ended meanwhile)
                os.kill(pid, signal.SIGKILL)
        wait_until(lambda: client.state == "disconnected", timeout=15)
        # the next call reconnects, to a server in a sandbox again
        read = client.call_tool("read", {"path": str(home / ".ssh" / "id_rsa")}).text
        assert read.startswith("denied:")
        assert marked_processes(marker)


def test_credentials_in_the_clients_environment_stay_out(home, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-value")
    monkeypatch.setenv("TZ", "Europe/Paris")
    with probe(None) as client:  # unsandboxed, the server sees them
        assert client.call_tool("getenv", {"name": "GITHUB_TOKEN"}).text == "ghp-value"
    with probe(TEST_TREE, env={"GITHUB_TOKEN": "given-on-purpose"}) as client:
        assert client.call_tool("getenv", {"name": "AWS_SECRET_ACCESS_KEY"}).text == "unset"
        assert client.call_tool("getenv", {"name": "GITHUB_TOKEN"}).text == "given-on-purpose"
        assert client.call_tool("getenv", {"name": "TZ"}).text == "Europe/Paris"


def test_a_program_in_the_hidden_home_is_refused_with_a_hint(home):
    fake = home / "bin" / "server"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    with pytest.raises(ServerStartError, match=r"the sandbox hides.*read_only"):
        StdioTransport(str(fake), sandbox=True).start()
    # a program outside the home reached through a link in it: the link is hidden with it
    link = home / "bin" / "linked"
    link.symlink_to(shutil.which("true"))
    with pytest.raises(ServerStartError, match=rf"{link}.*the sandbox hides"):
        StdioTransport(str(link), sandbox=True).start()


def test_no_bwrap_is_a_clear_error_and_nothing_runs(tmp_path):
    created = tmp_path / "ran"
    transport = StdioTransport(
        "/bin/sh", ["-c", f"touch {created}"], sandbox=Sandbox(bwrap="no-such-bwrap")
    )
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        transport.start()
    assert not created.exists()


def test_the_sandbox_key_of_a_config_entry(home):
    config = {
        "mcpServers": {
            "probe": {
                "command": sys.executable,
                "args": [PROBE],
                "sandbox": {"read_only": list(TEST_TREE.read_only), "max_open_files": 256},
            },
            "bad": {"command": "x", "sandbox": {"network": "everywhere"}},
        }
    }
    bad = {"mcpServers": {"bad": config["mcpServers"].pop("bad")}}
    entry = mcp_sync.config.resolve(config)["probe"]
    assert entry.sandbox == Sandbox(read_only=TEST_TREE.read_only, max_open_files=256)
    with mcp_sync.connect("probe", config=config, request_timeout=30) as client:
        # the entry's sandbox applies: the key in the fake home is out of reach
        key = os.path.join(os.environ["HOME"], ".ssh", "id_rsa")
        assert client.call_tool("read", {"path": key}).text.startswith("denied:")
    with pytest.raises(mcp_sync.errors.ConfigError, match="'bad'.*network"):
        mcp_sync.config.resolve(bad)


def test_the_cli_flag_runs_the_command_sandboxed(home, tmp_path):
    import io

    from mcp_sync.cli import main

    def cli(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()

    # a command's server is sandboxed: one in the hidden home is refused before it runs
    hidden = home / "server"
    hidden.write_text("#!/bin/sh\n")
    hidden.chmod(0o755)
    code, _, err = cli("--sandbox", "tools", "--", str(hidden))
    assert code != 0 and "the sandbox hides" in err
    # and an entry's own sandbox, which lists what the server needs, is kept
    script = PEERS / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    entry = {"command": str(NODE), "args": [str(script), str(SERVERS)]}
    config = tmp_path / "mcp.json"
    sandbox = {"read_only": list(NEEDED)}
    config.write_text(json.dumps({"mcpServers": {"fs": {**entry, "sandbox": sandbox}}}))
    code, out, err = cli("--sandbox", "--config", str(config), "--server", "fs", "tools")
    assert code == 0, err
    assert "read_text_file" in out
    code, _, err = cli("--sandbox", "--url", "http://127.0.0.1:9/mcp", "ping")
    assert code == 2 and "--sandbox" in err
