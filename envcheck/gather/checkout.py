"""Facts about the CUTLASS checkout, read with git itself: where it is, which commit, clean or dirty, what it holds.

Reading takes four short git calls, offline, each with the repository's executing settings neutralised
(envcheck.gitsafe), paths read NUL-separated. GitPython, which the fixer uses to change a checkout, is not imported
for it (it is most of doctor's start-up)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Optional

from .. import gitsafe, proc
from ..model import Checkout, Interpreter
from ..paths import default_cutlass_dir
from ..shell import describe, unsafe_character

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
    """git in one folder, offline, every call with the repository's executing settings neutralised (envcheck.gitsafe)
    and under a time limit.

    config: the folder's settings as gitsafe.configured read them; () for calls that run nothing configured
    (rev-parse, ls-tree)."""

    def __init__(self, folder: Path, config: tuple[tuple[str, str], ...] = (), timeout: float = 30.0):
        self.folder, self.timeout = folder, timeout
        self.env = gitsafe.full_environment(folder, config=config, offline=True)

    def __call__(self, *args: str) -> tuple[bool, str]:
        """(whether git succeeded, its standard output)."""
        ok, out, _ = self.run(*args)
        return ok, out

    def run(self, *args: str) -> tuple[bool, str, str]:
        """(whether git succeeded, its standard output, its standard error)."""
        done = proc.run(["git", "-C", str(self.folder.absolute()), *args], self.timeout, env=self.env)
        if done.timed_out:
            raise RuntimeError(f"git {args[0]} did not finish within {self.timeout:.0f} s in {self.folder}")
        return done.returncode == 0, done.stdout, done.stderr


def _refuse_control_characters(path: Path, source: str) -> None:
    """git prints paths one per line: a folder whose name holds a line break is refused, not misread."""
    found = unsafe_character(str(path))
    if found:
        raise ValueError(f"the folder {str(path)!r} (from {source}) holds {describe(found)}, a line break or control "
                         "character, in its path: envcheck does not read such a folder as the CUTLASS checkout; "
                         "rename it, or choose another")


def read_checkout(path: str, source: str, subdir: str, module: str) -> Checkout:
    folder = Path(path).expanduser()
    _refuse_control_characters(folder, source)
    if not folder.exists():
        return Checkout(path=str(folder), source=source, exists=False)
    _refuse_control_characters(folder.resolve(), source)
    has_package = (folder / subdir / "pyproject.toml").is_file()
    package_version = _package_version(folder / subdir, module)
    if not folder.is_dir():
        return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
    # An untrusted checkout: nothing its configuration names runs, nothing is fetched, and reading it rewrites
    # nothing. Four git calls in two rounds of two (doctor's start-up is a measured goal): where and what HEAD is,
    # with every setting; then the status, with the settings that name commands neutralised, and whether the commit
    # is CUTLASS.
    reader = _Git(folder)
    with ThreadPoolExecutor(2) as pool:
        where = pool.submit(reader.run, "rev-parse", "--show-toplevel", "--is-shallow-repository", "HEAD",
                            "--abbrev-ref", "HEAD")
        config = pool.submit(gitsafe.configured, folder)
        ok, out, err = where.result()
        settings = config.result()
    if not ok and "dubious ownership" in err:  # a repository git will not read as this user: say so, not "no repo"
        raise RuntimeError(next((line for line in err.splitlines() if line.startswith("fatal:")), err.strip()))
    if not ok:  # no commits yet, or not a repository at all
        ok, out = reader("rev-parse", "--show-toplevel")
        if not ok or not out.strip():
            return Checkout(path=str(folder), source=source, has_package=has_package, package_version=package_version)
        root = _root(folder, out.rstrip("\n"), source)
        return Checkout(path=str(root), source=source, is_repo=True, has_package=(root / subdir / "pyproject.toml").is_file(),
                        error="no commits")
    # The last three lines are fixed words and a commit id; the top level, a path, is everything before them.
    *top, shallow, head, branch = out.rstrip("\n").split("\n")
    root = _root(folder, "\n".join(top), source)
    has_package = (root / subdir / "pyproject.toml").is_file()
    package_version = _package_version(root / subdir, module)
    git = _Git(root, config=settings)
    with ThreadPoolExecutor(2) as pool:
        # Submodules are not entered (their drivers are not read here): one that moved still shows
        status = pool.submit(git, "status", "--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
        # trees only: a blob-filtered checkout has no blob to fetch for it
        marker = pool.submit(reader, "ls-tree", "-z", "--name-only", head, "--", _CUTLASS_MARKER)
        ok_status, porcelain = status.result()
        ok_marker, listed = marker.result()
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
        sparse=any(key.lower() == "core.sparsecheckout" and gitsafe.config_true(value) for key, value in settings),
        remotes=tuple(sorted({value for key, value in settings
                              if key.lower().startswith("remote.") and key.lower().endswith(".url")})),
        has_package=has_package,
        is_cutlass=ok_marker and listed.split("\0")[0] == _CUTLASS_MARKER,
        package_version=package_version,
    )


def _root(folder: Path, top: str, source: str) -> Path:
    """The work tree's top, as git reported it for folder: folder itself or a folder above it. Anywhere else, the
    repository's configuration put the work tree there (core.worktree): refused, not read."""
    root = Path(top)
    _refuse_control_characters(root, source)
    resolved = folder.resolve()
    if root.resolve() != resolved and root.resolve() not in resolved.parents:
        raise ValueError(f"{folder} (from {source}): its git configuration puts the work tree at {top!r} "
                         "(core.worktree), outside this folder; envcheck reads only the folder it was given")
    return root


# What an install leaves in a source tree (`pip install -e` writes NAME.egg-info): not a change to the code.
_BYPRODUCTS = re.compile(r"(^|/)([^/]+\.egg-info|__pycache__|build|dist)(/|$)")


def status_entries(porcelain_z: str) -> list[tuple[str, str]]:
    """(status code, path) of each entry of `git status --porcelain -z`: paths verbatim, whatever they hold; a
    rename's or copy's second path (where it came from) is not an entry of its own."""
    entries, fields = [], iter(porcelain_z.split("\0"))
    for field in fields:
        if len(field) < 4:
            continue
        entries.append((field[:2], field[3:]))
        if "R" in field[:2] or "C" in field[:2]:
            next(fields, None)
    return entries


def changed_paths(porcelain_z: str) -> list[str]:
    """Paths with local changes, from `git status --porcelain -z`; untracked install byproducts do not count."""
    return [path for code, path in status_entries(porcelain_z) if not (code == "??" and _BYPRODUCTS.search(path))]


def _package_version(package_dir: Path, module: str) -> Optional[str]:
    init = package_dir / module / "__init__.py"
    try:
        match = _VERSION.search(init.read_text(encoding="utf-8"))
    except OSError:
        return None
    return match[1] if match else None
