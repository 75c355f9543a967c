"""What fix needs to know of the host beyond the gathered facts: how to run pip for the target, whether its
distribution manages it (PEP 668), and which other Python interpreters are on this machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Mapping

from .. import proc, shell
from ..errors import UsageError
from ..model import Interpreter
from .pip import pip_prefix

__all__ = ["pip_for", "externally_managed", "find_interpreters"]


def pip_for(interpreter: Interpreter) -> tuple[str, ...]:
    """The target's own pip, or envcheck's driving it with --python (a venv made without pip)."""
    if interpreter.dist("pip") is not None:
        return pip_prefix(interpreter.executable, True)
    try:
        from importlib.metadata import version

        own = tuple(int(x) for x in version("pip").split(".")[:2])
    except Exception:  # noqa: BLE001 - no pip next to envcheck, or an odd version
        own = (0, 0)
    if own < (22, 3):
        raise UsageError(
            f"--python {interpreter.executable}: this interpreter has no pip, and envcheck's own pip is too old to "
            f"drive it (pip --python needs 22.3). Run `{shell.line((interpreter.executable, '-m', 'ensurepip'))}` first."
        )
    return pip_prefix(interpreter.executable, False)


def externally_managed(interpreter: Interpreter) -> bool:
    major, minor = interpreter.version[:2]
    marker = Path(interpreter.base_prefix) / "lib" / f"python{major}.{minor}" / "EXTERNALLY-MANAGED"
    return not interpreter.in_venv and marker.is_file()


def find_interpreters(env: Mapping[str, str], timeout: float = 5.0) -> tuple[tuple[str, str], ...]:
    """(path, version) of the Python interpreters on this machine, newest first: for the manual python advice."""
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
    seen, out = set(), []
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        try:
            # -I -S: isolated and without site, so that none of its .pth import lines or sitecustomize runs (as the probe)
            done = proc.run([candidate, "-I", "-S", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], timeout)
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip():
            out.append((candidate, done.stdout.strip()))

    def key(item: tuple[str, str]) -> tuple[int, ...]:
        return tuple(int(x) for x in item[1].split(".") if x.isdigit())

    return tuple(sorted(out, key=key, reverse=True))
