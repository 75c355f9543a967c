"""Where envcheck keeps its own files: one per-user cache directory, overridable for tests and CI."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Mapping, Optional

from .errors import UsageError

__all__ = ["cache_dir", "default_cutlass_dir", "usable_folder", "folder_origin"]


def cache_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    env = os.environ if env is None else env
    if env.get("ENVCHECK_CACHE_DIR"):
        return Path(env["ENVCHECK_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "envcheck"


def default_cutlass_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    """Where `envcheck fix` fetches CUTLASS unless --cutlass-dir says otherwise."""
    return cache_dir(env) / "cutlass"


def usable_folder(folder: Path, what: str, *, create: bool = False) -> Path:
    """`folder`, checked: nothing on its way is a file (and, with create, it exists and takes a new file).

    Anything else is a UsageError naming `what` (say, the variable that chose the folder); the folder is made
    readable by its owner only, as it may hold credentials (an index URL's password in a snapshot or a log)."""
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
        else:
            existing = next((p for p in (folder, *folder.parents) if os.path.lexists(p)), None)
            if existing is not None and not existing.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "a file is in the way", str(existing))
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
        raise UsageError(f"{what}: cannot {'write to' if create else 'use'} {folder}: {exc.strerror or exc}{where}") from None
    return folder


def folder_origin(env: Mapping[str, str], *names: str) -> str:
    """Which variable chose envcheck's folder, for messages: `NAME=value`, or '' when none did."""
    name = next((n for n in (*names, "ENVCHECK_CACHE_DIR", "XDG_CACHE_HOME") if env.get(n)), None)
    return f"{name}={env[name]}" if name else ""
