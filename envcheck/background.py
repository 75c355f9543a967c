"""A call run on a thread of its own, its result read later: what gathering needs of concurrent.futures, without
importing it (it, and the logging it imports, were a measured part of doctor's start-up)."""

from __future__ import annotations

import threading
from typing import Any, Callable, Generic, Iterable, Optional, TypeVar

__all__ = ["Background", "results", "together"]

T = TypeVar("T")


class Background(Generic[T]):
    """`function(*args)`, started at once on a thread of its own. result() waits for it and returns its value or
    raises what it raised; TimeoutError when `timeout` seconds pass first (the call runs on). The thread is not a
    daemon: as with concurrent.futures, the interpreter waits for it at exit."""

    def __init__(self, function: Callable[..., T], *args: Any):
        self._done = threading.Event()
        self._value: Optional[T] = None
        self._error: Optional[BaseException] = None
        threading.Thread(target=self._run, args=(function, args)).start()

    def _run(self, function: Callable[..., T], args: tuple) -> None:
        try:
            self._value = function(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the reader, as a Future hands it
            self._error = exc
        finally:
            self._done.set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Whether the call has ended, waiting up to `timeout` seconds (None: as long as it takes)."""
        return self._done.wait(timeout)

    def result(self, timeout: Optional[float] = None) -> T:
        if not self.wait(timeout):
            raise TimeoutError(f"no result within {timeout} s")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


def results(started: Iterable[Background[T]]) -> list[T]:
    """Once every one of them has ended: their values in order, or the first error in that order raised."""
    started = list(started)
    for each in started:
        each.wait()
    return [each.result() for each in started]


def together(*calls: Callable[[], T]) -> list[T]:
    """Every call at once, each on a thread of its own: their results()."""
    return results([Background(call) for call in calls])
