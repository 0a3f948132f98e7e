"""The pytest plugin, as a server author uses it: a test file in a fresh pytest run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(60)

SDK = Path(__file__).parent / "servers" / "sdk_server.py"


def test_fixture_connects_closes_and_reports_the_server_stderr(pytester):
    server = pytester.makepyfile(noisy_server=f"""
        import runpy, sys
        sys.stderr.write("noisy server: starting with a warning\\n")
        sys.stderr.flush()
        sys.argv = [{str(SDK)!r}, "stdio"]
        runpy.run_path({str(SDK)!r}, run_name="__main__")
    """)
    pytester.makepyfile(test_server=f"""
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
    """)
    # The plugin comes from the installed pytest11 entry point (no conftest, no -p).
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*assert {'result': 2} == {'result': 3}*",
        "*- mcp server stderr: *noisy_server.py -*",
        "noisy server: starting with a warning",
    ])
    assert sum("- mcp server stderr:" in line for line in result.outlines) == 1


def test_the_projects_own_fixture_works_against_a_real_server(mcp_client):
    client = mcp_client([sys.executable, str(SDK)], request_timeout=20)
    assert {t.name for t in client.list_tools()} >= {"add", "weather", "slow"}
    assert client.call_tool("weather", {"city": "Lyon"}).structured_content["city"] == "Lyon"
