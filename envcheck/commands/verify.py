"""`envcheck verify --lock FILE`: the target's installed packages against a lock, the drift per package."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional

from ..lock.lockfile import applies, read_lock
from ..lock.verify import verify
from ..render.lock import render_drift

__all__ = ["run_verify"]


def run_verify(lock_path: Path, python: Optional[str] = None, out: Optional[Callable[[str], object]] = None) -> int:
    """`envcheck verify --lock FILE`: 0 when the target matches the lock, 1 with the drift per package otherwise."""
    from ..gather.target import read_target

    lock = read_lock(lock_path)
    interpreter = read_target(python)
    drift = verify(lock, interpreter)
    locked = sum(1 for p in lock.packages if applies(p, dict(interpreter.markers)))
    from ..redact import Redactor

    (out or sys.stdout.write)(Redactor()(render_drift(drift, str(lock_path), interpreter.executable, locked)))
    return 1 if any(d.fails for d in drift) else 0
