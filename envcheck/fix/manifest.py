"""A folder envcheck fix created (the toolkit prefix): what fix put in it, and whether it still holds only that.

After the step that fills the folder, every file in it is listed with its size and modification time in
MANIFEST, inside the folder (replaced whole, never written through a link; read back only if it is a regular file of
the user's). Undo removes the folder only when nothing in it is new or changed since (Python's
bytecode caches aside); otherwise the folder stays and undo says why. Nobody's work is deleted by undo."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Union

from ..atomic import replace_text
from ..errors import UsageError
from ..paths import read_own_file

__all__ = ["MANIFEST", "write", "changed_since", "remove_if_untouched"]

MANIFEST = ".envcheck-manifest.json"
MAX_BYTES = 64 * 1024 * 1024  # a toolkit's few thousand files take a few hundred KiB


def _files(folder: Path) -> dict[str, list[int]]:
    """Every file and symbolic link under folder (links not followed): relative path -> [size, mtime in ns]."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, name)
            info = os.lstat(path)
            found[os.path.relpath(path, folder)] = [info.st_size, info.st_mtime_ns]
    found.pop(MANIFEST, None)
    return found


def write(folder: Union[str, Path]) -> None:
    """Record what is in folder now: call it right after fix filled it."""
    folder = Path(folder)
    replace_text(folder / MANIFEST, json.dumps(_files(folder), sort_keys=True))


def _byproduct(relative: str) -> bool:
    return f"{os.sep}__pycache__{os.sep}" in f"{os.sep}{relative}" and relative.endswith(".pyc")


def changed_since(folder: Union[str, Path]) -> list[str]:
    """The files in folder that fix did not put there or that changed since it did (first the new ones); a folder
    without a readable manifest is all unknown: ["<the manifest> is missing"]."""
    folder = Path(folder)
    try:  # never through a link, and only a file of the user's: a list someone else wrote is no list of fix's
        recorded = json.loads(read_own_file(folder / MANIFEST, MANIFEST, MAX_BYTES) or "")
    except (OSError, ValueError, UsageError):
        recorded = None
    if not isinstance(recorded, dict):
        return [f"{MANIFEST} (envcheck's list of what it put there) is missing or unreadable"]
    now = _files(folder)
    added = sorted(p for p in now if p not in recorded and not _byproduct(p))
    changed = sorted(p for p in now if p in recorded and now[p] != recorded[p])
    return added + changed


def remove_if_untouched(folder: Union[str, Path]) -> str:
    """Remove folder if it holds only what fix put there; otherwise keep it. Returns what was done, and why."""
    folder = Path(folder)
    if not folder.exists():
        return f"{folder}: already absent"
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder}: kept: it is no longer the folder envcheck created"
    foreign = changed_since(folder)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        return f"{folder}: kept, because it holds files envcheck did not put there or that changed since: {shown}"
    shutil.rmtree(folder)
    return f"{folder}: removed (envcheck created it, and nothing in it changed since)"
