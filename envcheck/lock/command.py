"""The commands: `envcheck lock` (lock the target's stack, or export a lock) and `envcheck verify`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..errors import UsageError
from ..gitsafe import checked_index_url
from .build import build_lock
from .export import requirements
from .lockfile import read_lock, write_lock
from .sources import PYPI, Index, Wheelhouse
from .verify import _applies, render_drift, verify


FORMATS = ("pylock", "requirements")


def run_lock(
    output: Path,
    *,
    python: Optional[str] = None,
    policy_file: Optional[Path] = None,
    profile: Optional[str] = None,
    find_links: Sequence[Path] = (),
    index_url: str = PYPI,
    no_index: bool = False,
    from_lock: Optional[Path] = None,
    output_format: str = "pylock",
    err: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
) -> int:
    """`envcheck lock`: lock the target's stack (or re-read --from LOCK) and write it as pylock.toml or requirements."""
    if output_format not in FORMATS:
        raise UsageError(f"--format {output_format!r}: expected one of {', '.join(FORMATS)}")
    if from_lock is not None:
        lock = read_lock(from_lock, "--from")
        if output_format == "pylock":
            raise UsageError("--from LOCK re-reads a lock: pass --format requirements to export it")
        return _write_text(output, requirements(lock, Path(from_lock).parent), "requirements")
    checked_index_url(index_url, "--index-url")
    from ..policy import resolve
    from ..target import read_target

    interpreter = read_target(python)
    policy = resolve(policy_file, profile=profile, torch=interpreter.torch.version if interpreter.torch else None)
    wheelhouse = Wheelhouse([Path(p) for p in find_links]) if find_links else None
    indexes = [] if no_index else [Index(index_url)]
    torch_index = Index(policy.torch_index_url, optional=True) if policy.torch_index_url and not no_index else None
    if no_index and wheelhouse is None:
        raise UsageError("--no-index leaves nowhere to find files and hashes: add --find-links DIR")
    result = build_lock(
        interpreter, policy, wheelhouse=wheelhouse, indexes=indexes, torch_index=torch_index, lock_dir=Path(output).parent
    )
    from ..redact import Redactor

    redact = Redactor()
    for note in result.notes:
        err(redact(f"envcheck lock: note: {note}"))
    if output_format == "requirements":
        return _write_text(output, requirements(result.pylock, Path(output).parent), "requirements")
    write_lock(result, Path(output))
    err(f"envcheck lock: wrote {output}: {len(result.pylock.packages)} packages for profile {policy.id}")
    return 0


def _write_text(path: Path, text: str, what: str) -> int:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write the {what}: {exc.strerror or exc}") from None
    return 0


def run_verify(lock_path: Path, python: Optional[str] = None, out: Optional[Callable[[str], object]] = None) -> int:
    """`envcheck verify --lock FILE`: 0 when the target matches the lock, 1 with the drift per package otherwise."""
    from ..target import read_target

    lock = read_lock(lock_path)
    interpreter = read_target(python)
    drift = verify(lock, interpreter)
    locked = sum(1 for p in lock.packages if _applies(p, dict(interpreter.markers)))
    from ..redact import Redactor

    (out or sys.stdout.write)(Redactor()(render_drift(drift, str(lock_path), interpreter.executable, locked)))
    return 1 if any(d.fails for d in drift) else 0
