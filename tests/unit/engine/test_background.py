"""The engine's owned background calls: waited for, tracked while they run, joined at stop."""

from __future__ import annotations

import threading

from herd.engine.background import AbandonableCalls


def test_a_call_that_returns_in_time_is_not_left_running() -> None:
    calls = AbandonableCalls("test-calls")
    done: list[int] = []
    assert calls.run(lambda: done.append(1), timeout=60)
    assert done == [1]
    assert calls.running() == 0
    assert calls.close(timeout=60) == 0


def test_an_abandoned_call_is_tracked_until_it_returns_and_close_joins_it() -> None:
    calls = AbandonableCalls("test-calls")
    release = threading.Event()
    assert not calls.run(lambda: release.wait(60), timeout=0.01)
    assert calls.running() == 1
    assert [t.name for t in threading.enumerate()].count("test-calls") == 1
    release.set()
    assert calls.close(timeout=60) == 0
    assert calls.running() == 0
    assert "test-calls" not in [t.name for t in threading.enumerate()]


def test_close_gives_up_after_its_timeout_and_says_how_many_were_left() -> None:
    calls = AbandonableCalls("test-calls")
    release = threading.Event()
    try:
        assert not calls.run(lambda: release.wait(60), timeout=0.01)
        assert calls.close(timeout=0.01) == 1
        assert calls.running() == 1
    finally:
        release.set()
    assert calls.close(timeout=60) == 0
