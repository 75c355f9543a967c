"""Replacing a file whole: written beside itself, flushed to disk, renamed over. A reader sees the old text or the
new, never half; a crash leaves the old file and, at worst, a stray temporary beside it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional, Union

__all__ = ["replace_text"]


def replace_text(path: Union[str, Path], text: str, mode: Optional[int] = None) -> None:
    """Write text to path atomically, making its folder. mode: the file's permission bits (default: those of the
    file it replaces, else what the umask allows). Raises OSError, with nothing changed."""
    path = Path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # 0600 from the start
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
