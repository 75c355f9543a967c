"""Facts about the CUTLASS checkout, read with git itself: where it is, which commit, clean or dirty, what it holds.

Reading takes six short git calls, each with the repository's executing settings neutralised (envcheck.gitsafe);
GitPython, which the fixer uses to change a checkout, is not imported for it (it is most of doctor's start-up)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping, Optional

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
    """git in one folder, every call with the repository's executing settings neutralised and under a time limit."""

    def __init__(self, folder: Path, timeout: float = 30.0):
        self.folder, self.timeout = folder, timeout
        self.env = {**os.environ, **gitsafe.environment(folder)}

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


def read_checkout(path: str, source: str, subdir: str, module: str) -> Checkout:
    folder = Path(path).expanduser()
    if not folder.exists():
        return Checkout(path=str(folder), source=source, exists=False)
    has_package = (folder / subdir / "pyproject.toml").is_file()
    package_version = _package_version(folder / subdir, module)
    if not folder.is_dir():
        return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
    # An untrusted checkout: nothing its configuration names runs, and reading it rewrites nothing.
    first = _Git(folder)
    ok, out, err = first.run("rev-parse", "--show-toplevel", "--is-shallow-repository")
    lines = out.splitlines()
    if not ok and "dubious ownership" in err:  # a repository git will not read as this user: say so, not "no repo"
        raise RuntimeError(next((line for line in err.splitlines() if line.startswith("fatal:")), err.strip()))
    if not ok or len(lines) < 2:  # not inside a work tree (or a bare repository)
        return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
    root = Path(lines[0])
    git = first if root == folder.resolve() else _Git(root)  # the filter drivers are the work tree's own
    has_package = (root / subdir / "pyproject.toml").is_file()
    package_version = _package_version(root / subdir, module)
    ok, head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not ok:  # a repository with no commits
        return Checkout(path=str(root), source=source, is_repo=True, has_package=has_package, error="no commits")
    head = head.strip()
    ok, branch = git("symbolic-ref", "--quiet", "--short", "HEAD")
    ok_status, status = git("status", "--porcelain", "--untracked-files=normal")
    if not ok_status:
        raise RuntimeError(f"git status failed in {root}")
    # `git config` reads every scope, the per-worktree one that `git sparse-checkout` writes included
    _, config = git("config", "--null", "--get-regexp", r"^(core\.sparsecheckout|remote\..*\.url)$")
    settings = [entry.partition("\n") for entry in config.split("\0") if entry]
    return Checkout(
        path=str(root),
        source=source,
        is_repo=True,
        commit=head,
        branch=branch.strip() if ok else None,  # None: a detached HEAD
        dirty_files=tuple(changed_paths(status)),
        shallow=lines[1].strip() == "true",
        sparse=any(key == "core.sparsecheckout" and value.strip().lower() in _TRUE for key, _, value in settings),
        remotes=tuple(sorted({value for key, _, value in settings if key.startswith("remote.")})),
        has_package=has_package,
        is_cutlass=git("cat-file", "-e", f"{head}:{_CUTLASS_MARKER}")[0],
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
