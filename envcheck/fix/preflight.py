"""preflight: every step's preconditions, checked before the first change, so that a plan that cannot finish never
starts (a `--cutlass-dir` that names a file must not let pip change the environment first).

Pure reads of the file system; each problem names the flag or file and what was expected. A path or an argument
with a control character in it is refused outright: git prints paths one per line, and a newline in a folder's name
would split a path in two half-way through the plan.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..shell import describe, unsafe_character
from .steps import Plan, PlannedStep

__all__ = ["preflight"]


def _blocker(path: Path) -> str:
    """Why a folder cannot be made at path (empty when it can): its nearest existing ancestor must be a writable folder."""
    ancestor = path
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{ancestor} is not writable"
    return ""


def _control(text: str, what: str) -> list[str]:
    found = unsafe_character(text)
    return [f"{what} {text!r} holds {describe(found)}, a line break or control character: choose one without"
            ] if found else []


def _folder(path: str, what: str) -> list[str]:
    if unsafe_character(path):
        return _control(path, what)
    folder = Path(path)
    if folder.exists():
        if not folder.is_dir():
            return [f"{what} {folder} is a file, not a folder"]
        if not os.access(folder, os.W_OK | os.X_OK):
            return [f"{what} {folder} is not writable"]
        return []
    reason = _blocker(folder)
    return [f"{what} {folder} cannot be created: {reason}"] if reason else []


def _file(path: str) -> list[str]:
    if unsafe_character(path):
        return _control(path, "the file")
    target = Path(path)
    if target.is_dir():
        return [f"{target} is a folder, where envcheck writes a file"]
    reason = _blocker(target.parent)
    return [f"{target} cannot be written: {reason}"] if reason else []


# A step's own folder, and what it is in the user's words: the flag that chose it.
_WHAT = {"cutlass-fetch": "the CUTLASS folder (--cutlass-dir)", "cutlass-install": "the CUTLASS folder (--cutlass-dir)",
         "toolkit-install": "the toolkit prefix (--toolkit-prefix)"}
_FOLDER = {"cutlass-fetch": "dest", "toolkit-install": "prefix"}


def _step(step: PlannedStep) -> list[str]:
    found: list[str] = []
    what = _WHAT.get(step.kind, "a command's argument")
    if step.kind in _FOLDER:
        found += _folder(step.param(_FOLDER[step.kind]), what)
    for path, _ in step.writes + step.writes_after:
        found += _file(path)
    if not found:  # a folder's path reaches the commands too (`pip install -e <checkout>/python/...`)
        found += [problem for argv in step.commands for arg in argv for problem in _control(arg, what)]
    return found


def preflight(plan: Plan) -> tuple[str, ...]:
    """What stops some step of the plan from running, found before any step runs; empty when nothing does."""
    return tuple(dict.fromkeys(problem for step in plan.steps for problem in _step(step)))
