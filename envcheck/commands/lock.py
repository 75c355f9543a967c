"""`envcheck lock`: lock a profile's stack resolved for a target platform, or the live target (--from-env), or
export a lock as a hash-pinned requirements file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from ..errors import EXIT_FAILED, UsageError, check_choice
from ..gitsafe import checked_index_url
from ..lock.build import StackMismatch, build_lock
from ..lock.export import requirements
from ..lock.lockfile import read_lock, write_lock
from ..lock.resolve import Target
from ..lock.sources import PYPI, Index, Wheelhouse
from ..userfile import write_text

if TYPE_CHECKING:
    from ..lock.build import LockResult
    from ..model import Interpreter
    from ..profile import Policy

__all__ = ["FORMATS", "run_lock"]

FORMATS = ("pylock", "requirements")


def run_lock(
    output: Path,
    *,
    python: Optional[str] = None,
    profile: Optional[str] = None,
    find_links: Sequence[Path] = (),
    index_url: str = PYPI,
    no_index: bool = False,
    from_lock: Optional[Path] = None,
    output_format: str = "pylock",
    from_env: bool = False,
    target: Optional[Target] = None,
    torch_index_url: Optional[str] = None,
    without: Sequence[str] = (),
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck lock`: resolve the profile's stack for a target (default), lock the live target (--from-env, implied
    by --python), or re-read --from LOCK; write it as pylock.toml or requirements."""
    check_choice("--format", output_format, FORMATS)
    if from_lock is not None:
        lock = read_lock(from_lock, "--from")
        if output_format == "pylock":
            raise UsageError("--from LOCK re-reads a lock: pass --format requirements to export it")
        return _write_text(output, requirements(lock, Path(from_lock).parent, what=f"--from {from_lock}"), "requirements")
    live = from_env or python is not None
    if live and (target is not None or torch_index_url is not None or without):
        raise UsageError("--from-env (or --python) locks the live environment: --python-version, --platform, "
                         "--torch-index-url and --without apply to a resolved lock only")
    checked_index_url(index_url, "--index-url")
    from ..profile import candidates, choose
    from ..redact import Redactor
    from ..render.text import profile_line

    redact = Redactor()
    if live:
        from ..gather.target import read_target

        named = candidates(profile)  # read first: a profile that cannot be used is refused before the target runs
        interpreter = read_target(python)  # without --profile, the profile that covers its torch
        policy, choice = named.select(interpreter.torch_version, python=interpreter.version_text)
        err(redact(f"envcheck lock: {profile_line(choice)}"))
        try:
            result = _lock_live(policy, interpreter, find_links, index_url, no_index, Path(output).parent)
        except StackMismatch as exc:
            err(redact(f"envcheck lock: {exc}"))
            return EXIT_FAILED
    else:
        # a platform, not an interpreter: no torch to read, and the Python it is resolved for
        policy, choice = choose(profile, target=False, python=(target or Target()).python_version)
        err(redact(f"envcheck lock: {profile_line(choice)}"))
        from ..lock.build import build_resolved_lock
        from ..lock.resolve import resolve as resolve_stack

        resolution = resolve_stack(
            policy, target or Target(), index_url=index_url, torch_index_url=torch_index_url,
            find_links=[Path(p) for p in find_links], no_index=no_index, without=without,
        )
        result = build_resolved_lock(policy, resolution, without)
    for note in result.notes:
        err(redact(f"envcheck lock: note: {note}"))
    if output_format == "requirements":
        return _write_text(output, requirements(result.pylock, Path(output).parent, what="the lock made"), "requirements")
    write_lock(result, Path(output))
    err(f"envcheck lock: wrote {output}: {len(result.pylock.packages)} packages for profile {policy.id}")
    return 0


def _lock_live(policy: "Policy", interpreter: "Interpreter", find_links: Sequence[Path], index_url: str, no_index: bool, lock_dir: Path) -> "LockResult":
    wheelhouse = Wheelhouse([Path(p) for p in find_links]) if find_links else None
    indexes = [] if no_index else [Index(index_url)]
    torch_index = Index(policy.torch_index_url, optional=True) if policy.torch_index_url and not no_index else None
    if no_index and wheelhouse is None:
        raise UsageError("--no-index leaves nowhere to find files and hashes: add --find-links DIR")
    return build_lock(interpreter, policy, wheelhouse=wheelhouse, indexes=indexes, torch_index=torch_index, lock_dir=lock_dir)


def _write_text(path: Path, text: str, what: str) -> int:
    write_text(path, text, f"-o {path} (the {what})")
    return 0
