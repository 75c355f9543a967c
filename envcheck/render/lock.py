"""verify's drift as text and JSON: which locked packages of the target differ from the lock, and what it has besides."""

from __future__ import annotations

from typing import Sequence

from .. import __version__
from ..jsonanswer import answer
from ..lock.verify import Drift

__all__ = ["SCHEMA_VERSION", "drift_json", "render_drift"]

SCHEMA_VERSION = 1  # of verify --json's object


def drift_json(drift: Sequence[Drift], lock_path: str, target: str, locked_count: int, exit_code: int) -> str:
    """verify --json: the lock, the target, how many locked packages apply to it, each that differs (`drift`: name,
    kind, locked, installed) and what it has that the lock does not know (`unlocked`: name, installed)."""
    return answer({
        "schema_version": SCHEMA_VERSION, "envcheck_version": __version__, "lock": lock_path, "target": target,
        "locked": locked_count,
        "drift": [{"name": d.name, "kind": d.kind, "locked": d.locked, "installed": d.installed} for d in drift if d.fails],
        "unlocked": [{"name": d.name, "installed": d.installed} for d in drift if not d.fails],
    }, exit_code)


def render_drift(drift: Sequence[Drift], lock_path: str, target: str, locked_count: int) -> str:
    failing = [d for d in drift if d.fails]
    extra = [d for d in drift if not d.fails]
    lines = []
    if failing:
        lines.append(f"{target} drifted from {lock_path}: {len(failing)} of {locked_count} locked packages differ")
        width = max(len(d.name) for d in failing)
        for d in failing:
            lines.append(f"  {d.name:<{width}}  {d.kind:<7}  locked {d.locked}, installed {d.installed}")
    else:
        lines.append(f"{target} matches {lock_path}: all {locked_count} locked packages at their locked versions")
    if extra:
        lines.append("not in the lock (not counted as drift): " + ", ".join(f"{d.name} {d.installed}" for d in extra))
    return "\n".join(lines) + "\n"
