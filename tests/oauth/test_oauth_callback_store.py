"""The loopback callback server and the state stores."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time

import pytest
import requests

from mcp_sync.oauth import (
    AuthorizationDenied,
    CallbackError,
    CallbackServer,
    FileStateStore,
    StateMismatchError,
)


@pytest.fixture
def callbacks():
    server = CallbackServer.listen(timeout=5)
    yield server
    server.close()


def test_redirect_delivers_code_state_and_iss(callbacks):
    assert callbacks.redirect_url.startswith("http://127.0.0.1:")
    pending = callbacks.wait_for_callback("st-1")
    page = requests.get(
        callbacks.redirect_url, params={"code": "c", "state": "st-1", "iss": "i"}, timeout=5
    )
    assert page.status_code == 200 and "Signed in" in page.text
    result = pending.wait()
    assert (result.code, result.state, result.iss) == ("c", "st-1", "i")


def test_error_redirect_raises(callbacks):
    pending = callbacks.wait_for_callback("st-2")
    page = requests.get(
        callbacks.redirect_url, params={"error": "access_denied", "state": "st-2"}, timeout=5
    )
    assert page.status_code == 400
    with pytest.raises(AuthorizationDenied, match="access_denied"):
        pending.wait()


def test_redirect_with_another_state_fails_the_waiter(callbacks):
    pending = callbacks.wait_for_callback("expected")
    page = requests.get(callbacks.redirect_url, params={"code": "c", "state": "forged"}, timeout=5)
    assert page.status_code == 400
    with pytest.raises(StateMismatchError):
        pending.wait()


def test_wait_times_out(callbacks):
    with pytest.raises(CallbackError, match="within"):
        callbacks.wait_for_callback("never").wait(timeout=0.1)


def test_close_wakes_the_waiter():
    server = CallbackServer.listen()
    pending = server.wait_for_callback("st")
    errors: list[BaseException] = []
    waiter = threading.Thread(
        target=lambda: errors.append(pytest.raises(CallbackError, pending.wait).value)
    )
    waiter.start()
    server.close()
    waiter.join(5)
    assert not waiter.is_alive() and "closed" in str(errors[0])
    with pytest.raises(CallbackError):
        server.wait_for_callback("late")


def test_custom_page_and_other_paths():
    server = CallbackServer.listen(path="/done", page=lambda result, error: "<p>custom</p>")
    try:
        pending = server.wait_for_callback("s")
        assert (
            requests.get(server.redirect_url.replace("/done", "/other"), timeout=5).status_code
            == 404
        )
        assert (
            requests.get(server.redirect_url, params={"code": "c", "state": "s"}, timeout=5).text
            == "<p>custom</p>"
        )
        assert pending.wait().code == "c"
    finally:
        server.close()


def test_redirect_handler_registers_before_opening_the_browser(callbacks):
    opened: list[str] = []

    def browser(url: str) -> bool:
        opened.append(url)
        # the "browser" redirects immediately, before the handler could have registered late
        requests.get(callbacks.redirect_url, params={"code": "c", "state": "abc"}, timeout=5)
        return True

    handler = callbacks.redirect_handler(open_browser=browser)
    result = handler("https://as.example/authorize?state=abc&client_id=x")
    assert opened and result.code == "c"


# -- FileStateStore ------------------------------------------------------------------------------


def test_file_store_is_private_atomic_and_camel_case(tmp_path):
    path = tmp_path / "sub" / "oauth.json"
    store = FileStateStore(path)
    store.save("https://a/mcp", {"tokens": {"accessToken": "x", "expiresAt": 1.0}})
    store.save("https://b/mcp", {"clients": {}})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(f"{path}.lock").st_mode) == 0o600
    document = json.loads(path.read_text())
    assert document["servers"]["https://a/mcp"]["tokens"]["accessToken"] == "x"
    assert sorted(os.listdir(path.parent)) == ["oauth.json", "oauth.json.lock"]  # no temp files
    assert FileStateStore(path).load("https://b/mcp") == {"clients": {}}
    store.save("https://a/mcp", None)
    assert store.load("https://a/mcp") is None


HOLDER = """
import sys
from mcp_sync.oauth import FileStateStore
store = FileStateStore(sys.argv[1])
with store.lock("k"):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_file_store_lock_excludes_other_processes(tmp_path):
    path = tmp_path / "oauth.json"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        acquired = threading.Event()

        def take() -> None:
            with FileStateStore(path).lock("k"):
                acquired.set()

        taker = threading.Thread(target=take)
        taker.start()
        assert not acquired.wait(0.3)  # the other process holds it
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert acquired.wait(10)
        taker.join(5)
    finally:
        holder.kill()
        holder.wait(5)


def test_file_store_lock_is_reentrant(tmp_path):
    store = FileStateStore(tmp_path / "s.json")
    started = time.monotonic()
    with store.lock("k"), store.lock("k"):
        store.save("k", {"a": 1})
    assert store.load("k") == {"a": 1} and time.monotonic() - started < 5
