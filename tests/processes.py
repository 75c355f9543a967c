"""Is a process gone? For tests that kill a process group and check that nothing of it is left."""

from __future__ import annotations

import os
import time


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (killed, not yet reaped: a container's PID 1 may never reap it) is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def gone_soon(pid: int, seconds: float = 5) -> bool:
    """SIGKILL is delivered asynchronously: on a busy machine a killed process can outlive the kill by a moment."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
