"""Verify: a live environment against a lock, package by package."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from packaging.pylock import Package, Pylock

from ..model import Distribution, Interpreter
from .build import installed_commit
from .lockfile import applies
from .sources import _same_version


@dataclass(frozen=True)
class Drift:
    """How one package of the target differs from the lock. kind: missing, version, source, unlocked."""

    name: str
    kind: str
    locked: str
    installed: str

    @property
    def fails(self) -> bool:
        """Everything but a package the lock does not know fails verify (pip and friends live in every venv)."""
        return self.kind != "unlocked"


def _locked_text(package: Package) -> str:
    if package.vcs is not None:
        return f"{package.version or '?'} from {package.vcs.type} commit {package.vcs.commit_id[:12]}"
    if package.directory is not None:
        return f"the directory {package.directory.path}"
    return str(package.version)


def verify(lock: Pylock, interpreter: Interpreter, commit_of: Callable[[Distribution], Optional[str]] = installed_commit) -> tuple[Drift, ...]:
    """Every difference between the target and the lock, locked packages first (in lock order)."""
    environment = dict(interpreter.markers)
    drift: list[Drift] = []
    locked_names = set()
    for package in lock.packages:
        if not applies(package, environment):
            continue
        locked_names.add(package.name)
        dist = interpreter.dist(package.name)
        if dist is None:
            drift.append(Drift(package.name, "missing", _locked_text(package), "not installed"))
            continue
        if package.version is not None and not _same_version(package.version, dist.version):
            drift.append(Drift(package.name, "version", str(package.version), dist.version))
            continue
        if package.vcs is not None:
            commit = commit_of(dist)
            if commit != package.vcs.commit_id:
                drift.append(
                    Drift(package.name, "source", _locked_text(package), f"{dist.version} from commit {commit[:12] if commit else 'unknown'}")
                )
    for dist in interpreter.distributions:
        if dist.name not in locked_names:
            locked_names.add(dist.name)
            drift.append(Drift(dist.name, "unlocked", "not in the lock", dist.version))
    return tuple(drift)
