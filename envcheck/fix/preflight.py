"""preflight: every step's preconditions, checked before the first change, so that a plan that cannot finish never
starts (a `--cutlass-dir` that names a file must not let pip change the environment first).

Pure reads of the file system; each problem names the flag or file and what was expected.
"""

from __future__ import annotations

import os
from pathlib import Path

from .plan import Plan, PlannedStep

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


def _folder(path: str, what: str) -> list[str]:
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
    target = Path(path)
    if target.is_dir():
        return [f"{target} is a folder, where envcheck writes a file"]
    reason = _blocker(target.parent)
    return [f"{target} cannot be written: {reason}"] if reason else []


def _step(step: PlannedStep) -> list[str]:
    found: list[str] = []
    if step.kind == "cutlass-fetch":
        found += _folder(step.param("dest"), "the CUTLASS folder (--cutlass-dir)")
    if step.kind == "toolkit-install":
        found += _folder(step.param("prefix"), "the toolkit prefix (--toolkit-prefix)")
    for path, _ in step.writes + step.writes_after:
        found += _file(path)
    return found


def preflight(plan: Plan) -> tuple[str, ...]:
    """What stops some step of the plan from running, found before any step runs; empty when nothing does."""
    return tuple(dict.fromkeys(problem for step in plan.steps for problem in _step(step)))
