"""Facts about the CUTLASS checkout, read with git itself: where it is, which commit, clean or dirty, what it holds.

Reading takes four short git calls, each with the repository's executing settings neutralised (envcheck.gitsafe);
GitPython, which the fixer uses to change a checkout, is not imported for it (it is most of doctor's start-up)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Optional, Sequence

from .. import gitsafe, proc
from ..model import Checkout, Interpreter
from ..paths import default_cutlass_dir

__all__ = ["locate_checkout", "read_checkout"]

# A file every CUTLASS commit has; looked up in the commit's tree, so a sparse checkout still shows it.
_CUTLASS_MARKER = "include/cutlass/cutlass.h"
_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.M)


def locate_checkout(
    flag: Optional[str], env: Mapping[str, str], interpreter: Optional[Interpreter], distribution: str, subdir: str
) -> Optional[tuple[str, str]]:
    """(path, how it was found) of the checkout to read, or None when nothing points at one."""
    if flag:
        return flag, "--cutlass-dir"
    if env.get("ENVCHECK_CUTLASS_DIR"):
        return env["ENVCHECK_CUTLASS_DIR"], "ENVCHECK_CUTLASS_DIR"
    if interpreter is not None:
        installed = interpreter.dist(distribution)
        if installed is not None and installed.editable:
            source = Path(installed.editable)
            parts = Path(subdir).parts
            root = source.parents[len(parts) - 1] if source.parts[-len(parts):] == parts else source
            return str(root), f"editable {distribution} install"
    default = default_cutlass_dir(env)
    if default.is_dir():
        return str(default), "envcheck's default checkout"
    return None


class _Git:
    """git in one folder, every call with the repository's executing settings neutralised and under a time limit.

    drivers: the filter drivers to empty; () for calls that run no filter (rev-parse, config, cat-file)."""

    def __init__(self, folder: Path, drivers: Sequence[str] = (), timeout: float = 30.0):
        self.folder, self.timeout = folder, timeout
        self.env = {**os.environ, **gitsafe.environment(folder, drivers=drivers)}

    def __call__(self, *args: str) -> tuple[bool, str]:
        """(whether git succeeded, its standard output)."""
        ok, out, _ = self.run(*args)
        return ok, out

    def run(self, *args: str) -> tuple[bool, str, str]:
        """(whether git succeeded, its standard output, its standard error)."""
        done = proc.run(["git", "-C", str(self.folder), *args], self.timeout, env=self.env)
        if done.timed_out:
            raise RuntimeError(f"git {args[0]} did not finish within {self.timeout:.0f} s in {self.folder}")
        return done.returncode == 0, done.stdout, done.stderr


_TRUE = ("true", "yes", "on", "1", "")  # git's spellings of a true boolean (a bare key is true)
# One read of the settings doctor reports, and of the filter drivers `git status` must not run.
_SETTINGS = r"^(core\.sparsecheckout|remote\..*\.url|filter\..*)$"


def read_checkout(path: str, source: str, subdir: str, module: str) -> Checkout:
    folder = Path(path).expanduser()
    if not folder.exists():
        return Checkout(path=str(folder), source=source, exists=False)
    has_package = (folder / subdir / "pyproject.toml").is_file()
    package_version = _package_version(folder / subdir, module)
    if not folder.is_dir():
        return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
    # An untrusted checkout: nothing its configuration names runs, and reading it rewrites nothing. Four git calls
    # in two rounds of two (doctor's start-up is a measured goal): where and what HEAD is, with the settings; then
    # the status, with the filter drivers emptied, and whether the commit is CUTLASS.
    reader = _Git(folder)
    with ThreadPoolExecutor(2) as pool:
        where = pool.submit(reader.run, "rev-parse", "--show-toplevel", "--is-shallow-repository", "HEAD",
                            "--abbrev-ref", "HEAD")
        config = pool.submit(reader, "config", "--null", "--get-regexp", _SETTINGS)
        ok, out, err = where.result()
        settings = [entry.partition("\n") for entry in config.result()[1].split("\0") if entry]
    if not ok and "dubious ownership" in err:  # a repository git will not read as this user: say so, not "no repo"
        raise RuntimeError(next((line for line in err.splitlines() if line.startswith("fatal:")), err.strip()))
    lines = out.splitlines()
    if not ok:  # no commits yet, or not a repository at all
        ok, out = reader("rev-parse", "--show-toplevel")
        if not ok or not out.strip():
            return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
        root = Path(out.strip())
        return Checkout(path=str(root), source=source, is_repo=True, has_package=(root / subdir / "pyproject.toml").is_file(),
                        error="no commits")
    root, shallow, head, branch = Path(lines[0]), lines[1].strip(), lines[2].strip(), lines[3].strip()
    has_package = (root / subdir / "pyproject.toml").is_file()
    package_version = _package_version(root / subdir, module)
    git = _Git(root, drivers=gitsafe.filter_drivers(key for key, _, _ in settings))
    with ThreadPoolExecutor(2) as pool:
        status = pool.submit(git, "status", "--porcelain", "--untracked-files=normal")
        marker = pool.submit(reader, "cat-file", "-e", f"{head}:{_CUTLASS_MARKER}")
        ok_status, porcelain = status.result()
        is_cutlass = marker.result()[0]
    if not ok_status:
        raise RuntimeError(f"git status failed in {root}")
    return Checkout(
        path=str(root),
        source=source,
        is_repo=True,
        commit=head,
        branch=None if branch == "HEAD" else branch,  # "HEAD": a detached HEAD
        dirty_files=tuple(changed_paths(porcelain)),
        shallow=shallow == "true",
        # `git config` reads every scope, the per-worktree one that `git sparse-checkout` writes included
        sparse=any(key == "core.sparsecheckout" and value.strip().lower() in _TRUE for key, _, value in settings),
        remotes=tuple(sorted({value for key, _, value in settings if key.startswith("remote.") and key.endswith(".url")})),
        has_package=has_package,
        is_cutlass=is_cutlass,
        package_version=package_version,
    )


# What an install leaves in a source tree (`pip install -e` writes NAME.egg-info): not a change to the code.
_BYPRODUCTS = re.compile(r"(^|/)([^/]+\.egg-info|__pycache__|build|dist)(/|$)")


def changed_paths(porcelain: str) -> list[str]:
    """Paths with local changes, from `git status --porcelain`; untracked install byproducts do not count."""
    paths = []
    for line in porcelain.splitlines():
        if not line.strip():
            continue
        code, path = line[:2], line[3:]
        if code == "??" and _BYPRODUCTS.search(path):
            continue
        paths.append(path)
    return paths


def _package_version(package_dir: Path, module: str) -> Optional[str]:
    init = package_dir / module / "__init__.py"
    try:
        match = _VERSION.search(init.read_text(encoding="utf-8"))
    except OSError:
        return None
    return match[1] if match else None
