"""`envcheck verify --lock FILE`: the target's installed packages against a lock, the drift per package."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, TextIO

from ..lock.lockfile import applies, read_lock
from ..lock.verify import verify
from ..render.lock import drift_json, render_drift
from ..userfile import emit

__all__ = ["run_verify"]


def run_verify(lock_path: Path, python: Optional[str] = None, *, as_json: bool = False, output: Optional[Path] = None,
               out: Optional[TextIO] = None) -> int:
    """`envcheck verify --lock FILE`: 0 when the target matches the lock, 1 with the drift per package otherwise;
    as text or JSON (--json), on `out` (standard output) or in `output` (-o FILE, replaced whole)."""
    from ..gather.target import read_target

    lock = read_lock(lock_path)
    interpreter = read_target(python)
    drift = verify(lock, interpreter)
    locked = sum(1 for p in lock.packages if applies(p, dict(interpreter.markers)))
    code = 1 if any(d.fails for d in drift) else 0
    shown = (drift, str(lock_path), interpreter.executable, locked)
    from ..redact import Redactor

    emit(Redactor()(drift_json(*shown, code) if as_json else render_drift(*shown)), output, out)
    return code
