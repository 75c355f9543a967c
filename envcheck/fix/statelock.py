"""One `envcheck fix` or `fix --undo` at a time per target environment: an exclusive lock in its state folder.

Two runs that change one environment at once lose work: an undo retires the snapshot of a fix that is still running
(the fix then finishes, and nothing is left to undo), two fetches build the same half-made checkout. So every run
that changes a target holds an exclusive `flock` on the file `lock` in the target's state folder, from before its
snapshot to its end; a dry run takes none, and only says who is running (`running`).

The kernel drops a flock when the last process holding its open file ends, however it ends (kill -9 included), so a
dead run never blocks the next one. The pip processes a run starts inherit it (`inherited`): pip runs in a process
group of its own and outlives a killed envcheck, and the next run must wait until it is done. The file also says who
holds the lock (pid, host, command, start), for messages only: the lock is the flock, never the text.
"""

from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import socket
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

from ..errors import UsageError

__all__ = ["LOCK", "DEFAULT_TIMEOUT", "Holder", "hold", "running", "inherited"]

LOCK = "lock"
DEFAULT_TIMEOUT = 600.0  # seconds a run waits for another one on the same target before it exits 2 (--lock-timeout)
POLL_S = 0.1
REMIND_S = 60.0  # while waiting, a line this often, so that a CI log shows the run is alive
_held: list[int] = []  # the descriptors of the locks this process holds (their children keep them)


@dataclass(frozen=True)
class Holder:
    """Who holds the lock, as it wrote itself into the file (pid 0: it has not written yet)."""

    pid: int = 0
    host: str = ""
    command: str = "fix"
    started: str = ""

    def __str__(self) -> str:
        if not self.pid:
            return "another envcheck fix or undo"
        where = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        return f"envcheck {self.command} (pid {self.pid}{where}, started {self.started})"

    @property
    def ended(self) -> bool:
        """Its envcheck process is gone (so a pip it started holds the lock); False when that cannot be told."""
        if not self.pid or (self.host and self.host != socket.gethostname()):
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def inherited() -> tuple[int, ...]:
    """The locks this process holds, for the processes it starts that change the target (pip): they keep the lock
    until they end, even when envcheck is killed before them."""
    return tuple(_held)


@contextmanager
def hold(state: Path, command: str, *, target: str, timeout: float, say: Callable[[str], None]) -> Iterator[None]:
    """Hold the target's lock for the block. While another run holds it, say so and wait up to `timeout` seconds;
    then a UsageError (exit 2) that names who holds it and what to do."""
    path = state / LOCK
    fd = _open(path, os.O_RDWR | os.O_CREAT)
    try:
        _wait(fd, path, target, timeout, say)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
              "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        _held.append(fd)
        try:
            yield
        finally:
            _held.remove(fd)
            os.ftruncate(fd, 0)  # a later reader never names a run that is over
    finally:
        os.close(fd)  # the flock goes with the last descriptor of this open file


def running(state: Path) -> Optional[Holder]:
    """Who changes the target now, without waiting (for a dry run, which takes no lock); None when nobody does."""
    try:
        fd = _open(state / LOCK, os.O_RDONLY)
    except UsageError:
        return None  # no lock file (or none usable): no run holds it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        return None
    finally:
        os.close(fd)


def _open(path: Path, flags: int) -> int:
    """The lock file, never through a link (its folder is the user's alone: paths.usable_folder checked it)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as exc:
        reason = "a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or exc
        raise UsageError(f"{path}: cannot open envcheck's lock file: {reason}; move it away and run again") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{path}: envcheck's lock file is not a regular file; move it away and run again")
    return fd


def _wait(fd: int, path: Path, target: str, timeout: float, say: Callable[[str], None]) -> None:
    started = time.monotonic()
    reminded = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - started
        holder = _holder(fd)
        if waited >= timeout:
            raise UsageError(
                f"{holder} is changing {target} (it holds {path}){_orphan(holder, path)}; gave up after {timeout:g} s "
                f"(--lock-timeout). Let it finish and run again, or stop it first (kill {holder.pid or 'it'}); "
                "--lock-timeout SECONDS waits longer"
            )
        if reminded is None or waited - reminded >= REMIND_S:
            say(f"waiting for {holder} on {target}{_orphan(holder, path)}: up to {timeout:g} s (--lock-timeout), "
                f"{waited:.0f} s so far")
            reminded = waited
        time.sleep(POLL_S)


def _orphan(holder: Holder, path: Path) -> str:
    return (f"; pid {holder.pid} has ended, and a pip it started still holds the lock (`fuser -v {path}` names it)"
            if holder.ended else "")


def _holder(fd: int) -> Holder:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        return Holder(int(data["pid"]), str(data["host"]), str(data["command"]), str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return Holder()  # it took the lock and has not written yet, or the text is not ours: the lock still holds
