"""Writing a file so that a reader never sees half of it: a temporary file beside it, renamed into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import UsageError

__all__ = ["write_text_atomic"]


def write_text_atomic(path: Path, text: str, flag: str = "-o") -> None:
    """Write text to path atomically (a node-exporter textfile collector or a fleet job may read it at any time)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None
