"""``connect([...])`` on a command that is really an HTTP server (it prints its local URL on
stdout and never reads stdin) fails at once, naming the URL, instead of waiting out the
probe and the whole ``request_timeout``. ``python -m http.server`` is a real such server."""

from __future__ import annotations

import re
import sys
import time

import pytest

import mcp_sync
from mcp_sync.errors import StdioServerError


def test_connect_to_an_http_server_given_as_a_command_fails_fast_naming_its_url():
    server = [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"]
    started = time.monotonic()
    with pytest.raises(StdioServerError) as caught:
        mcp_sync.connect(server, request_timeout=60)  # it waited 2 s + 60 s before
    assert time.monotonic() - started < 30
    error = caught.value
    assert error.looks_like_http
    assert error.url is not None and re.fullmatch(r"http://127\.0\.0\.1:\d+/", error.url)
    assert f"connect to {error.url} instead" in str(error)
    assert "Serving HTTP on 127.0.0.1 port" in str(error)  # what it printed


def test_noise_on_stdout_is_quoted_when_a_command_never_answers():
    silent = [sys.executable, "-u", "-c", "import sys; print('hello, not JSON'); sys.stdin.read()"]
    with pytest.raises(StdioServerError) as caught:
        mcp_sync.connect(silent, request_timeout=1, probe_timeout=0.5)
    assert not caught.value.looks_like_http
    assert "the server printed on stdout: 'hello, not JSON'" in str(caught.value)
    assert isinstance(caught.value.__cause__, mcp_sync.RequestTimeout)
