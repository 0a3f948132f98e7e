import threading

import pytest

from mcp_sync import AbortController, Aborted, AbortSignal


def test_abort_fires_once_with_reason_and_callbacks():
    controller = AbortController()
    seen = []
    controller.signal.on_abort(seen.append)
    assert not controller.signal.aborted
    controller.abort("stop")
    controller.abort("again")
    assert controller.signal.aborted
    assert controller.signal.reason == "stop"
    assert seen == ["stop"]
    with pytest.raises(Aborted, match="stop"):
        controller.signal.throw_if_aborted()


def test_on_abort_after_abort_runs_at_once_and_remover_works():
    controller = AbortController()
    seen = []
    remove = controller.signal.on_abort(seen.append)
    remove()
    controller.abort("x")
    assert seen == []
    controller.signal.on_abort(seen.append)
    assert seen == ["x"]


def test_any_fires_with_the_first_reason():
    a, b = AbortController(), AbortController()
    combined = AbortSignal.any([a.signal, None, b.signal])
    b.abort("b first")
    a.abort("a later")
    assert combined.aborted and combined.reason == "b first"


def test_timeout_signal_fires_with_timeout_error():
    signal = AbortSignal.timeout(0.05)
    assert signal.wait(5)
    assert isinstance(signal.reason, TimeoutError)


def test_wait_wakes_on_abort_from_another_thread():
    controller = AbortController()
    threading.Timer(0.01, controller.abort).start()
    assert controller.signal.wait(5)
