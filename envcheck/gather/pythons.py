"""The other Python interpreters on this machine: where a target's Python is too old for the stack, the advice names
one of them to make a virtual environment from.

Found without running a version manager. A `python3.X` on PATH that is a script is a shim (pyenv's, asdf's): it runs
the manager to choose an interpreter, 0.2 to 0.6 s a shim, and fails for a version not selected. The interpreters
pyenv and uv install are found in their own folders instead. An interpreter's version is read from its own files
where they state it (a CPython install's include/pythonX.Y/patchlevel.h, beside the bin/pythonX.Y it belongs to);
the rest are asked, all at once, each under the time limit (-I -S: none of its .pth lines or sitecustomize runs).
"""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .. import proc
from ..errors import UsageError
from ..userfile import read_text

__all__ = ["find_pythons", "candidates", "stated_version", "is_script"]

ASK = "import sys; print('%d.%d.%d' % sys.version_info[:3])"
HEADER_BYTES = 1 << 16  # patchlevel.h is 1 KiB; anything larger is not one
_PY_VERSION = re.compile(r'^#define\s+PY_VERSION\s+"(\d+)\.(\d+)\.(\d+)', re.MULTILINE)
_NAMED = re.compile(r"python(\d+)\.(\d+)t?")  # bin/python3.12, bin/python3.13t (free-threaded)


def is_script(path: str) -> bool:
    """Whether the file starts with `#!`: a launcher (a version manager's shim), not an interpreter."""
    try:
        with open(path, "rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False


def candidates(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where an interpreter may be, in the order of preference: python3.X on PATH (newest first, shims left out),
    then pyenv's and uv's installs (their own variables first, as they read them), then the system's python3."""
    path = env.get("PATH", "")
    found = [which for minor in range(20, 7, -1) if (which := shutil.which(f"python3.{minor}", path=path))]
    found = [candidate for candidate in found if not is_script(candidate)]
    home = Path(env.get("HOME", os.path.expanduser("~")))
    for root in (Path(env.get("PYENV_ROOT") or home / ".pyenv") / "versions",
                 Path(env.get("UV_PYTHON_INSTALL_DIR") or home / ".local/share/uv/python")):
        found += sorted(str(p) for p in root.glob("*/bin/python3"))
    found += [p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.isfile(p)]
    return tuple(found)


def stated_version(executable: str) -> Optional[str]:
    """X.Y.Z as the interpreter's own install states it, without running it: PY_VERSION in the patchlevel.h of the
    prefix it belongs to (PREFIX/bin/pythonX.Y -> PREFIX/include/pythonX.Y/patchlevel.h, of the same X.Y). None
    where the install states none (no headers: a distribution's python without its -dev package)."""
    real = Path(os.path.realpath(executable))
    named = _NAMED.fullmatch(real.name)
    if named is None or real.parent.name != "bin":
        return None
    text = None
    for folder in (real.name, real.name + "m"):  # include/python3.7m: the ABI flag of Python 3.7 and before
        header = real.parent.parent / "include" / folder / "patchlevel.h"
        try:
            text = read_text(header, str(header), HEADER_BYTES)
            break
        except UsageError:  # none there, or not a small regular file
            continue
    stated = _PY_VERSION.search(text or "")
    if stated is None or stated.groups()[:2] != named.groups():
        return None
    return ".".join(stated.groups())


def _asked(executable: str, timeout: float) -> Optional[str]:
    try:
        done = proc.run([executable, "-I", "-S", "-c", ASK], timeout)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _ask_all(executables: Sequence[str], timeout: float) -> dict[str, Optional[str]]:
    """Each executable's version from running it, all at once: at most `timeout` in all."""
    if not executables:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(executables)), thread_name_prefix="python") as pool:
        return dict(zip(executables, pool.map(lambda executable: _asked(executable, timeout), executables)))


def find_pythons(env: Mapping[str, str], timeout: float = 5.0) -> tuple[tuple[str, str], ...]:
    """(path, version) of the Python interpreters on this machine, newest first: for the advice to a target too old.
    One interpreter reached by two paths (a link) is named by the first."""
    seen, chosen = set(), []
    for candidate in candidates(env):
        real = os.path.realpath(candidate)
        if real not in seen:
            seen.add(real)
            chosen.append(candidate)
    stated = {candidate: stated_version(candidate) for candidate in chosen}
    asked = _ask_all([candidate for candidate in chosen if stated[candidate] is None], timeout)
    found = [(candidate, stated[candidate] or asked[candidate]) for candidate in chosen]

    def key(item: tuple[str, str]) -> tuple[int, ...]:
        return tuple(int(x) for x in item[1].split(".") if x.isdigit())

    return tuple(sorted(((path, version) for path, version in found if version), key=key, reverse=True))
