"""Which pyproject.toml is the user's project configuration: only one of the repository they are in, and only from
folders nobody else can write.

A `[tool.envcheck]` table can name the index torch comes from and the URL CUTLASS is fetched from: whoever can plant
that file decides what `envcheck fix --yes` installs. So the file is looked for the way git looks for a repository,
with ownership checked the way ssh checks its files:

- the walk starts in the working folder and goes up to the first folder holding `.git` (a folder or a file: a
  worktree or a submodule), the repository's root; the nearest pyproject.toml on that way is the project's;
- outside a repository only the working folder's own pyproject.toml counts: a parent folder is not the project;
- the walk never goes above the user's home (when the working folder is inside it), and stops at a folder that is
  not the user's (or root's) or that others can write (`/tmp`, a shared `0777` folder, sticky or not): nothing in
  or above it is read;
- the file itself must be a regular file (not a link) owned by the user (or root) that others cannot write.

"Others can write" is the bit for all users, and the group's bit unless the group is the user's own private group
(a group of the same name holding nobody else, as many systems give each user).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional

__all__ = ["PYPROJECT", "project_file", "trusted"]

PYPROJECT = "pyproject.toml"


def project_file(cwd: Optional[Path] = None, home: Optional[Path] = None, uid: Optional[int] = None) -> Optional[Path]:
    """The pyproject.toml that holds the project's configuration for a user working in `cwd`, or None.

    cwd: default the working folder; home: the user's home folder (default: $HOME); uid: the user (default: the
    effective uid, the one whose rights envcheck runs with)."""
    uid = os.geteuid() if uid is None else uid
    try:
        cwd = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
        home = Path(os.path.realpath(home if home is not None else os.path.expanduser("~")))
    except (OSError, ValueError):  # a working folder that is gone
        return None
    walked: list[Path] = []
    root = None
    for folder in (cwd, *cwd.parents):
        if not trusted(folder, uid, folder=True):
            break
        walked.append(folder)
        if os.path.lexists(folder / ".git"):
            root = folder
            break
        if folder == home:
            break
    for folder in walked if root is not None else walked[:1]:
        candidate = folder / PYPROJECT
        if os.path.lexists(candidate):
            return candidate if trusted(candidate, uid, folder=False) else None
    return None


def trusted(path: Path, uid: int, folder: bool) -> bool:
    """A folder (or a regular file, not a link) owned by `uid` or root that nobody else can write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    kind = stat.S_ISDIR if folder else stat.S_ISREG
    if not kind(info.st_mode) or info.st_uid not in (uid, 0):
        return False
    if info.st_mode & stat.S_IWOTH:
        return False
    return not (info.st_mode & stat.S_IWGRP) or _private_group(info.st_gid, info.st_uid)


def _private_group(gid: int, owner: int) -> bool:
    """The owner's own group: its primary group, of the same name, with no other member."""
    import grp
    import pwd

    try:
        user, group = pwd.getpwuid(owner), grp.getgrgid(gid)
    except KeyError:
        return False
    return user.pw_gid == gid and group.gr_name == user.pw_name and set(group.gr_mem) <= {user.pw_name}
