"""What fix's editable install of cutlass_api wrote into the checkout (build/, *.egg-info/), recorded right after it,
so that undo removes a checkout fix fetched with those files and never with a file someone else put in the same
places, or one changed since (cutlass_fetch.install_byproduct says where the install writes, not whose a file is)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Union

from ..atomic import replace_text
from ..cutlass_fetch import install_byproduct
from ..errors import UsageError
from ..gather.checkout import status_entries
from ..gitsafe import open_repo
from ..paths import read_own_file

__all__ = ["bytecode", "record_byproducts", "unrecorded_byproducts"]


def bytecode(path: str) -> bool:
    """A file Python writes on its own (__pycache__/*.pyc), and writes again: never anyone's work."""
    return "/__pycache__/" in f"/{path}" and path.endswith(".pyc")


_RECORD = "envcheck-byproducts.json"  # in the checkout's .git: the files fix's editable install wrote
MAX_RECORD_BYTES = 16 << 20


def _byproduct_files(folder: Path) -> dict[str, list[int]]:
    """Each install byproduct in the work tree now (git status, ignored files one by one): path -> [size, mtime]."""
    repo = open_repo(folder)
    try:
        status = repo.git.status("--porcelain", "-z", "--untracked-files=all", "--ignored=traditional",
                                 "--ignore-submodules=dirty")
    finally:
        repo.close()
    found = {}
    for code, path in status_entries(status):
        if install_byproduct(code, path) and not bytecode(path):
            try:
                info = os.lstat(folder / path)
            except OSError:
                continue
            found[path] = [info.st_size, info.st_mtime_ns]
    return found


def record_byproducts(folder: Union[str, Path]) -> None:
    """Right after fix's editable install from the checkout: which files it wrote there (build/, *.egg-info/), each
    with its size and time, in the checkout's .git, so that undo removes those and never a file someone else put
    in the same places."""
    folder = Path(folder)
    replace_text(folder / ".git" / _RECORD, json.dumps(_byproduct_files(folder), sort_keys=True), mode=0o600)


def unrecorded_byproducts(folder: Path, entries: list[tuple[str, str]]) -> list[str]:
    """Of a checkout's status entries that are install byproducts, those fix's install did not write as they are
    now (record_byproducts): new since, changed since, or with no record to tell (then every one)."""
    try:
        text = read_own_file(folder / ".git" / _RECORD, "fix's record of its install", MAX_RECORD_BYTES)
        recorded = json.loads(text or "{}")
    except (ValueError, UsageError):
        recorded = {}
    if not isinstance(recorded, dict):
        recorded = {}
    found = []
    for code, path in entries:
        if not install_byproduct(code, path) or bytecode(path):
            continue
        try:
            info = os.lstat(folder / path)
            now = [info.st_size, info.st_mtime_ns]
        except OSError:
            now = None
        if recorded.get(path) != now:
            found.append(path)
    return found
