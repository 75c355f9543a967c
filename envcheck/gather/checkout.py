"""Facts about the CUTLASS checkout, read with GitPython: where it is, which commit, clean or dirty, what it holds."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping, Optional

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


def read_checkout(path: str, source: str, subdir: str, module: str) -> Checkout:
    folder = Path(path).expanduser()
    if not folder.exists():
        return Checkout(path=str(folder), source=source, exists=False)
    has_package = (folder / subdir / "pyproject.toml").is_file()
    package_version = _package_version(folder / subdir, module)
    import git  # GitPython: imported only when there is a checkout to read

    from ..gitsafe import open_repo

    try:
        # An untrusted checkout: nothing its configuration names runs, and reading it rewrites nothing.
        repo = open_repo(folder, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
    root = Path(repo.working_tree_dir or folder)
    has_package = (root / subdir / "pyproject.toml").is_file()
    package_version = _package_version(root / subdir, module)
    try:
        head = repo.head.commit
    except ValueError:  # a repository with no commits
        return Checkout(path=str(root), source=source, is_repo=True, has_package=has_package, error="no commits")
    try:
        branch = repo.active_branch.name
    except TypeError:  # detached HEAD
        branch = None
    status = repo.git.status("--porcelain", "--untracked-files=normal")
    dirty = tuple(changed_paths(status))
    try:  # `git config` reads every scope, the per-worktree one that `git sparse-checkout` writes included
        sparse = repo.git.config("--get", "--type=bool", "core.sparseCheckout") == "true"
    except git.GitCommandError:
        sparse = False
    try:
        head.tree / _CUTLASS_MARKER
        is_cutlass = True
    except KeyError:
        is_cutlass = False
    return Checkout(
        path=str(root),
        source=source,
        is_repo=True,
        commit=head.hexsha,
        branch=branch,
        dirty_files=dirty,
        shallow=os.path.exists(os.path.join(repo.git_dir, "shallow")),
        sparse=sparse,
        remotes=tuple(sorted({url for remote in repo.remotes for url in remote.urls})),
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
