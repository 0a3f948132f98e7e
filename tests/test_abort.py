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


def test_a_listener_or_waiter_racing_the_abort_sees_it_exactly_once():
    # A request's signal fires on one thread (the reader settling it) while the caller's
    # thread starts listening or waiting: neither may miss the abort or see it twice.
    for _ in range(300):
        calls, woke = _race_listen_wait_abort()
        assert calls == ["stop"] and woke == [True]


def _race_listen_wait_abort() -> tuple[list[object], list[bool]]:
    controller = AbortController()
    calls: list[object] = []
    woke: list[bool] = []
    start = threading.Barrier(3)

    def listen() -> None:
        start.wait()
        controller.signal.on_abort(calls.append)

    def wait() -> None:
        start.wait()
        woke.append(controller.signal.wait(10))

    def abort() -> None:
        start.wait()
        controller.abort("stop")

    threads = [threading.Thread(target=f) for f in (listen, wait, abort)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return calls, woke
