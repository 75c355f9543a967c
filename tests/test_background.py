"""envcheck.background: a call on a thread of its own, and calls all at once (what gather used concurrent.futures for)."""

from __future__ import annotations

import threading
import time

import pytest

from envcheck.background import Background, results, together


def test_a_result_is_the_calls_value_and_an_error_is_raised_to_the_reader():
    assert Background(lambda a, b: a + b, 2, 3).result(timeout=5) == 5
    failed = Background(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failed.result(timeout=5)
    assert failed.wait(0)  # ended, with its error


def test_a_timeout_raises_and_the_call_runs_on_to_its_value():
    release = threading.Event()
    slow = Background(lambda: release.wait(5) and "done")
    with pytest.raises(TimeoutError):
        slow.result(timeout=0.05)
    assert not slow.wait(0)
    release.set()
    assert slow.result(timeout=5) == "done"


def test_together_runs_the_calls_at_once_and_keeps_their_order():
    started = threading.Barrier(3, timeout=5)  # each call waits for the other two: only all at once gets past

    def call(value):
        return lambda: (started.wait(), value)[1]

    assert together(call("a"), call("b"), call("c")) == ["a", "b", "c"]
    assert together() == []


def test_the_first_error_in_order_is_raised_once_every_call_has_ended():
    ended = []

    def late_error():
        time.sleep(0.1)
        ended.append("late")
        raise KeyError("second")

    def early_error():
        raise ValueError("first")

    with pytest.raises(ValueError, match="first"):
        together(early_error, late_error)
    assert ended == ["late"]  # the later call was waited for before the first error was raised
    with pytest.raises(KeyError):
        results([Background(lambda: 1), Background(late_error)])
