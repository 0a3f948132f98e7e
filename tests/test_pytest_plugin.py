"""The pytest plugin, as a server author uses it: a test file in a fresh pytest run.

The run is a subprocess: an in-process run takes out of ``sys.modules`` what it imported, and
``cryptography`` (its Rust bindings load once per process) then failed a later test that built
an SDK server in-process ("Expected instance of hashes.HashAlgorithm")."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(60)

SDK = Path(__file__).parent / "servers" / "sdk_server.py"


def test_fixture_connects_closes_and_reports_the_server_stderr(pytester):
    server = pytester.makepyfile(
        noisy_server=f"""
        import runpy, sys
        sys.stderr.write("noisy server: starting with a warning\\n")
        sys.stderr.flush()
        sys.argv = [{str(SDK)!r}, "stdio"]
        runpy.run_path({str(SDK)!r}, run_name="__main__")
    """
    )
    pytester.makepyfile(
        test_server=f"""
        import sys
        clients = []

        def test_add(mcp_client):
            client = mcp_client([sys.executable, {str(server)!r}])
            clients.append(client)
            assert client.call_tool("add", {{"a": 1, "b": 2}}).structured_content == {{"result": 3}}
            assert client.state == "connected"

        def test_closed_after_the_test():
            assert clients[0].state == "closed"

        def test_fails(mcp_client):
            client = mcp_client({str(sys.executable)!r} + " " + {str(server)!r})  # a string works too
            clients.append(client)
            assert client.call_tool("add", {{"a": 1, "b": 1}}).structured_content == {{"result": 3}}

        def test_closed_after_a_failing_test():
            assert clients[1].state == "closed"
    """
    )
    # The plugin comes from the installed pytest11 entry point (no conftest, no -p).
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*assert {'result': 2} == {'result': 3}*",
            "*- mcp server stderr: *noisy_server.py -*",
            "noisy server: starting with a warning",
        ]
    )
    assert sum("- mcp server stderr:" in line for line in result.outlines) == 1


def test_the_projects_own_fixture_works_against_a_real_server(mcp_client):
    client = mcp_client([sys.executable, str(SDK)], request_timeout=20)
    assert {t.name for t in client.list_tools()} >= {"add", "weather", "slow"}
    assert client.call_tool("weather", {"city": "Lyon"}).structured_content["city"] == "Lyon"


def test_session_and_module_scoped_clients(pytester):
    """A client shared by a session's (or a module's) tests, closed after the last of them;
    stderr of a shared stdio server is attached to a failing test's report; the
    function-scoped factory in a session fixture is pytest's ScopeMismatch."""
    noisy = pytester.makepyfile(
        noisy_server=f"""
        import runpy, sys
        sys.stderr.write("shared server says hello\\n")
        sys.stderr.flush()
        sys.argv = [{str(SDK)!r}, "stdio"]
        runpy.run_path({str(SDK)!r}, run_name="__main__")
    """
    )
    pytester.makeconftest(f"""
        import importlib.util, sys, pytest
        spec = importlib.util.spec_from_file_location("sdk_server", {str(SDK)!r})
        sdk_server = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sdk_server)
        opened = []

        @pytest.fixture(scope="session")
        def shared(mcp_client_session):
            client = mcp_client_session(sdk_server.server)        # in-process
            opened.append(client)
            return client

        @pytest.fixture(scope="module")
        def per_module(mcp_client_module):
            client = mcp_client_module([sys.executable, {str(noisy)!r}])   # a subprocess
            opened.append(client)
            return client

        @pytest.fixture(scope="session")
        def wrong(mcp_client):
            return mcp_client([sys.executable, {str(noisy)!r}])

        def pytest_sessionfinish(session):
            states = sorted(c.state for c in opened)
            sys.stdout.write(f"\\nclient states at the end: {{states}}\\n")
    """)
    pytester.makepyfile(
        test_one="""
        seen = []

        def test_a(shared, per_module):
            seen.append((shared, per_module))
            assert shared.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}

        def test_b(shared, per_module):
            assert (shared, per_module) == seen[0]
            assert per_module.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 3}

        def test_wrong(wrong):
            pass
    """
    )
    pytester.makepyfile(
        test_two="""
        import test_one

        def test_c(shared, per_module):
            assert shared is test_one.seen[0][0]        # the session's client, still connected
            assert shared.state == "connected"
            assert per_module is not test_one.seen[0][1]
            assert test_one.seen[0][1].state == "closed"   # the first module's, closed after it
    """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ScopeMismatch*mcp_client*",
            "*- mcp server stderr: *noisy_server.py -*",
            "shared server says hello",
        ]
    )
    assert "client states at the end: ['closed', 'closed', 'closed']" in result.stdout.str()


ENV_SERVER = Path(__file__).parent / "servers" / "env_server.py"


def test_a_config_entry_gets_env_and_cwd_and_its_stderr_is_reported(pytester):
    """``config=`` takes ``env=`` (merged over the entry's), ``cwd=`` and ``on_stderr=`` as a
    command does, and a failing test shows the entry's server stderr under its name."""
    wrapper = pytester.makepyfile(
        chatty_env_server=f"""
        import runpy, sys
        sys.stderr.write("env server: reading its environment\\n")
        sys.stderr.flush()
        runpy.run_path({str(ENV_SERVER)!r}, run_name="__main__")
    """
    )
    workdir = pytester.mkdir("workdir")
    pytester.makefile(
        ".json",
        mcp=json.dumps(
            {
                "mcpServers": {
                    "envsrv": {
                        "command": sys.executable,
                        "args": [str(wrapper)],
                        "env": {"FROM_CONFIG": "entry", "OVERRIDDEN": "entry"},
                    }
                }
            }
        ),
    )
    pytester.makepyfile(
        test_config_entry_fixture=f"""
        import time

        def test_env_cwd_and_on_stderr(mcp_client):
            seen = []
            client = mcp_client("envsrv", config="mcp.json", env={{"OVERRIDDEN": "test"}},
                                cwd={str(workdir)!r}, on_stderr=seen.append)
            assert client.call_tool("getenv", {{"name": "FROM_CONFIG"}}).text == "entry"
            assert client.call_tool("getenv", {{"name": "OVERRIDDEN"}}).text == "test"
            assert client.call_tool("cwd").text == {str(workdir)!r}
            assert "env server: reading its environment" in wait_for(seen, "its environment")

        def wait_for(seen, text):
            deadline = time.monotonic() + 20     # the stderr reader thread passes it on
            while text not in "".join(seen) and time.monotonic() < deadline:
                time.sleep(0.01)
            return "".join(seen)

        def test_fails(mcp_client):
            seen = []
            client = mcp_client("envsrv", config="mcp.json", on_stderr=seen.append)
            wait_for(seen, "reading its environment")      # so that the report has it too
            assert client.call_tool("getenv", {{"name": "FROM_CONFIG"}}).text == "elsewhere"
    """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*- mcp server stderr: envsrv -*",
            "env server: reading its environment",
        ]
    )


def test_a_cassette_records_a_config_entry_reached_with_every_option(pytester):
    """Under ``mcp_cassette``, the factory gives the cassette everything ``connect()`` would
    use to reach the target (``TransportOptions``): before, it resolved no ``config=`` (the
    server's name was run as a command) and dropped the HTTP settings. Recorded, then replayed
    with the entry's server gone."""
    workdir = pytester.mkdir("workdir")
    entry = {"command": sys.executable, "args": [str(ENV_SERVER)], "env": {"FROM_CONFIG": "entry"}}
    config = pytester.makefile(".json", mcp=json.dumps({"mcpServers": {"envsrv": entry}}))
    pytester.makepyfile(
        test_recorded=f"""
        import pytest

        @pytest.mark.mcp_cassette("entry")
        def test_entry(mcp_client):
            client = mcp_client("envsrv", config="mcp.json", env={{"GIVEN": "test"}},
                                cwd={str(workdir)!r}, request_timeout=30)
            assert client.request_timeout == 30
            assert client.call_tool("getenv", {{"name": "FROM_CONFIG"}}).text == "entry"
            assert client.call_tool("getenv", {{"name": "GIVEN"}}).text == "test"
            assert client.call_tool("cwd").text == {str(workdir)!r}
    """
    )
    args = ("-p", "no:cacheprovider", "--strict-markers")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    assert '"method":"tools/call"' in (pytester.path / "cassettes" / "entry.jsonl").read_text()
    entry["command"] = str(pytester.path / "no-such-server")
    config.write_text(json.dumps({"mcpServers": {"envsrv": entry}}))
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)  # replayed
