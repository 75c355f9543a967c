"""The other Python interpreters on this machine: where a target's Python is too old for the stack, the advice (doctor's
and fix's alike) names one of them to make a virtual environment from.

Gathered only when that advice is needed (python.version fails): each candidate is asked its version.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping

from .. import proc

__all__ = ["find_pythons"]


def find_pythons(env: Mapping[str, str], timeout: float = 5.0) -> tuple[tuple[str, str], ...]:
    """(path, version) of the Python interpreters on this machine, newest first: for the advice to a target too old."""
    candidates: list[str] = []
    path = env.get("PATH", "")
    for minor in range(20, 7, -1):
        found = shutil.which(f"python3.{minor}", path=path)
        if found:
            candidates.append(found)
    home = Path(env.get("HOME", os.path.expanduser("~")))
    # Where pyenv and uv keep the interpreters they install: their own variables first, as they read them.
    for root in (Path(env.get("PYENV_ROOT") or home / ".pyenv") / "versions",
                 Path(env.get("UV_PYTHON_INSTALL_DIR") or home / ".local/share/uv/python")):
        candidates += sorted(str(p) for p in root.glob("*/bin/python3"))
    candidates += [p for p in ("/usr/bin/python3", "/usr/local/bin/python3") if os.path.isfile(p)]
    seen, unique = set(), []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        # A pyenv shim runs pyenv's shell scripts to pick an interpreter (a second or more each): the interpreters it
        # can pick are under PYENV_ROOT/versions, read above.
        if real not in seen and "shims" not in Path(candidate).parts:
            seen.add(real)
            unique.append(candidate)
    # Each asked at once, under one time limit: the slowest answer, not the sum of them.
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="pythons") as pool:
        answers = list(pool.map(lambda candidate: _version(candidate, timeout), unique))
    out = [(candidate, version) for candidate, version in zip(unique, answers) if version]

    def key(item: tuple[str, str]) -> tuple[int, ...]:
        return tuple(int(x) for x in item[1].split(".") if x.isdigit())

    return tuple(sorted(out, key=key, reverse=True))


def _version(python: str, timeout: float) -> str:
    """The interpreter's MAJOR.MINOR.MICRO, "" where it does not answer. -I -S: isolated and without site, so that
    none of its .pth import lines or sitecustomize runs (as the probe)."""
    try:
        done = proc.run([python, "-I", "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], timeout)
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
