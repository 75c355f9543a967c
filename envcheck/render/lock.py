"""verify's drift as text: which locked packages of the target differ from the lock, and what it has besides."""

from __future__ import annotations

from typing import Sequence

from ..lock.verify import Drift

__all__ = ["render_drift"]


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
