"""`envcheck fix --bundle`: the plan's packages come from a bundle instead of an index, and CUTLASS from its git
bundle instead of a remote. Everything else (the plan, the snapshot, undo, running again) is the fixer's own.

The bundle is checked before anything is planned (every part, every file, every wheel against the lock), and the
target interpreter against the platform it was made for; either failing is exit 2 naming the part.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional

from packaging.utils import parse_wheel_filename

from ..model import Interpreter
from ..profile import Policy
from .gitbundle import source_from_git_bundle
from .manifest import BundleError
from .open import OpenedBundle, check_platform, open_bundle

__all__ = ["Offline", "open_for_fix"]


@dataclass(frozen=True)
class Offline:
    bundle: OpenedBundle
    cutlass_url: Optional[str]  # file:// of a local git source made from the bundle, or None without one
    locked: tuple[str, ...]  # name==version of every wheel the bundle carries from the lock

    @property
    def wheels(self) -> Path:
        """The folder of the bundle's wheels: the plan's only package source (fix gives it to pip as --find-links,
        with --no-index)."""
        return self.bundle.wheels

    @property
    def summary(self) -> str:
        """One line for the log: what was checked, and where the plan's packages and CUTLASS come from."""
        manifest = self.bundle.manifest
        return (f"Bundle {self.bundle.name}: {len(manifest.files)} files checked against manifest.json (sha256) and the "
                f"wheels against its lock, for {manifest.platform.text}; packages from {self.wheels} (no index)"
                + (f", CUTLASS from {self.cutlass_url} (no remote)" if self.cutlass_url else ""))

    def check_target(self, interpreter: Interpreter) -> None:
        check_platform(self.bundle, dict(interpreter.markers), interpreter.executable)


def open_for_fix(path: Path, policy: Policy, cache: Path) -> Offline:
    opened = open_bundle(path, cache)
    manifest = opened.manifest
    if manifest.profile != policy.id:
        raise BundleError(f"{opened.name}: made for profile {manifest.profile!r}, and the profile in force is "
                          f"{policy.id!r}: pass --profile {manifest.profile} or a bundle of {policy.id}")
    locked = []
    for entry in manifest.of("wheel"):
        name, version, _build, _tags = parse_wheel_filename(PurePosixPath(entry.path).name)
        locked.append(f"{name}=={version}")
    cutlass_url = None
    if manifest.cutlass is not None:
        entry = manifest.cutlass
        source = policy.cutlass
        if (entry.branch, entry.commit, entry.subdir) != (source.branch, source.commit, source.subdir):
            raise BundleError(f"{opened.name}: its CUTLASS is {entry.subdir} at {entry.commit[:12]} ({entry.branch}); "
                              f"the profile pins {source.subdir} at {source.commit[:12]} ({source.branch})")
        git_file = next(f for f in manifest.files if f.path == entry.file)
        repo = source_from_git_bundle(opened.folder / entry.file, cache / "bundles" / f"cutlass-{git_file.sha256[:16]}.git", entry)
        cutlass_url = repo.absolute().as_uri()
    return Offline(opened, cutlass_url, tuple(sorted(locked)))
