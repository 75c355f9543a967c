"""The CUTLASS checkout: a shallow, blob-filtered, sparse fetch of one commit with GitPython, and the checkout's state.
fix fetches with it and records the state before (fix/undo.py puts the checkout back from it); bundle fetches the
commit it packs.

A new checkout is built in a sibling folder and renamed into place when it is complete, so a killed fetch never leaves
a half-made checkout behind (the next run removes the leftover folder and starts again). An existing checkout is moved
to the pinned commit only when it is clean and is CUTLASS; a dirty one is never touched.

git fetches only inside `online()`: everywhere else every transport is refused, so that git cannot fetch a missing
object on its own with the checkout's own upload-pack program. Every git argument is either a constant or a value
checked here (URL scheme, 40-hex commit, branch and path shapes come checked from the policy; a remote's name or a
branch read from the checkout is used only when it is a plain name, after `--`), no git call goes through a shell,
and none enters a submodule (whose own configuration is not read: envcheck.gitsafe).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, TextIO

from .gather.checkout import changed_paths
from .gitsafe import (FILE_UPLOAD_PACK, PARTIAL, check_git_values, checked_url, configured, credential_file,
                      credentials_apart, foreign_upload_pack, gitpython, init_repo, is_plain_name, online, open_repo,
                      upload_pack)
from .redact import redact_url
from .shell import describe, unsafe_character

__all__ = [
    "CheckoutRefused",
    "CheckoutState",
    "FetchResult",
    "read_state",
    "fetch",
    "partial_folder",
    "remove_partial",
    "install_byproduct",
    "log_git",
    "shown_paths",
]

CUTLASS_MARKER = "include/cutlass/cutlass.h"  # in every CUTLASS commit's tree; readable without blobs
# What building and installing cutlass_api editable leaves in the work tree: not a change to the checkout.
_EXCLUDES = ("*.egg-info/", "__pycache__/", "/python/*/build/")

Progress = Callable[[str, Optional[float]], None]


class CheckoutRefused(Exception):
    """The checkout folder holds something envcheck must not change: the message says what, and what to do."""


@dataclass(frozen=True)
class CheckoutState:
    """The checkout as it was, for the snapshot and for undo."""

    path: str
    exists: bool
    is_repo: bool = False
    commit: Optional[str] = None
    branch: Optional[str] = None  # None: detached or not a repository
    branch_tip: Optional[str] = None  # where the policy's branch pointed (None: no such local branch)
    dirty_files: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "exists": self.exists,
            "is_repo": self.is_repo,
            "commit": self.commit,
            "branch": self.branch,
            "branch_tip": self.branch_tip,
            "dirty_files": list(self.dirty_files),
        }

    @classmethod
    def from_json(cls, data: dict) -> "CheckoutState":
        return cls(
            path=data["path"],
            exists=data["exists"],
            is_repo=data.get("is_repo", False),
            commit=data.get("commit"),
            branch=data.get("branch"),
            branch_tip=data.get("branch_tip"),
            dirty_files=tuple(data.get("dirty_files", ())),
        )


@dataclass(frozen=True)
class FetchResult:
    path: str
    commit: str
    action: str  # "cloned", "moved", "already there"
    bytes_received: int
    seconds: float


def _repo(path: Path):
    return open_repo(path)  # this folder itself, never a repository above it; nothing it configures runs


def _is_repo_root(path: Path) -> bool:
    """path is the top folder of a work tree, as GitPython and git itself both see it (a core.worktree elsewhere,
    which GitPython does not always read, makes it not)."""
    git = gitpython()
    try:
        repo = open_repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return False
    try:
        top = repo.git.rev_parse("--show-toplevel")
    except git.GitCommandError:
        return False
    finally:
        repo.close()
    return Path(repo.working_tree_dir or "").resolve() == path.resolve() == Path(top).resolve()


def read_state(path: str | Path, branch: str) -> CheckoutState:
    folder = Path(path).expanduser().absolute()
    if not folder.exists():
        return CheckoutState(str(folder), exists=False)
    if not folder.is_dir() or not _is_repo_root(folder):
        return CheckoutState(str(folder), exists=True)
    repo = _repo(folder)
    try:
        commit = repo.head.commit.hexsha
    except ValueError:
        commit = None
    current = None if repo.head.is_detached else repo.head.ref.name
    tip = next((head.commit.hexsha for head in repo.heads if head.name == branch), None) if commit else None
    return CheckoutState(
        str(folder), exists=True, is_repo=True, commit=commit, branch=current, branch_tip=tip, dirty_files=_dirty(repo)
    )


def _dirty(repo) -> tuple[str, ...]:
    """Local changes as doctor counts them (install byproducts such as *.egg-info are not changes)."""
    status = repo.git.status("--porcelain", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
    return tuple(changed_paths(status))


def _objects_bytes(git_dir: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(git_dir / "objects"):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class _GitProgress:
    """GitPython's progress lines, to the log and as (message, fraction) to the caller."""

    def __init__(self, progress: Optional[Progress], log: Optional[TextIO]):
        git = gitpython()
        outer = self

        class _Handler(git.RemoteProgress):
            def update(self, op_code, cur_count, max_count=None, message=""):  # noqa: ANN001 - GitPython's signature
                fraction = (float(cur_count) / float(max_count)) if max_count else None
                if progress is not None:
                    stage = self._cur_line.split(":", 1)[0].strip() if self._cur_line else "fetching"
                    progress(stage, fraction)

            def line_dropped(self, line):  # noqa: ANN001
                outer.write(line)

        self.handler = _Handler()
        self.log = log

    def run(self, repo, command: str, *args: str, timeout: float) -> None:
        """A git command whose progress (stderr) streams through the handler; raises GitCommandError on failure."""
        from git.cmd import handle_process_output
        from git.util import finalize_process

        process = getattr(repo.git, command.replace("-", "_"))(*args, as_process=True)
        try:
            handle_process_output(
                process, None, self.handler.new_message_handler(), finalize_process,
                decode_streams=False, kill_after_timeout=timeout,
            )
        finally:  # GitPython keeps git's `fatal:` and `error:` lines apart from the others: the log needs them most
            for line in self.handler.error_lines:
                self.write(line)

    def write(self, line: str) -> None:
        log_git(self.log, line)


def log_git(log: Optional[TextIO], output: str) -> None:
    """What git printed, into the fix log (nothing without a log or an output)."""
    if log is not None and output.strip():
        log.write(f"git: {output.rstrip()}\n")
        log.flush()


def fetch(
    dest: str | Path,
    url: str,
    branch: str,
    commit: str,
    subdir: str,
    *,
    progress: Optional[Progress] = None,
    log: Optional[TextIO] = None,
    timeout: float = 1800.0,
) -> FetchResult:
    """Put the pinned commit of CUTLASS at dest, moving nothing that is not clean. Idempotent. A password in url's
    user info reaches git through its credential store only (gitsafe.credentials_apart), never its argv."""
    check_git_values(branch, commit, subdir)
    url = checked_url(url)
    try:
        url, secret = credentials_apart(url)
    except ValueError as exc:
        raise CheckoutRefused(f"{redact_url(url)}: {exc}") from None
    dest = Path(dest).expanduser().absolute()
    if unsafe_character(str(dest)):
        raise CheckoutRefused(f"{str(dest)!r} holds {describe(unsafe_character(str(dest)))}, a line break or control "
                              "character: choose another folder with --cutlass-dir.")
    with credential_file(secret) as credentials:
        return _fetch(dest, url, branch, commit, subdir, credentials, progress, log, timeout)


def _fetch(dest: Path, url: str, branch: str, commit: str, subdir: str, credentials: Optional[Path], progress, log,
           timeout: float) -> FetchResult:
    started = time.monotonic()
    remove_partial(dest)  # a fetch that was stopped
    if dest.exists() and not (dest.is_dir() and not any(dest.iterdir())):
        return _move_existing(dest, url, branch, commit, credentials, progress, log, timeout, started)
    partial = partial_folder(dest)
    partial.parent.mkdir(parents=True, exist_ok=True)
    os.mkdir(partial)  # new, or the fetch fails: never into a folder or through a link someone else put there
    repo = init_repo(partial)
    repo.create_remote("origin", url)
    with repo.config_writer() as config:
        config.set_value('remote "origin"', "promisor", "true")
        config.set_value('remote "origin"', "partialclonefilter", "blob:none")
        if url.startswith("file:"):
            config.set_value('remote "origin"', "uploadpack", FILE_UPLOAD_PACK)
    (Path(repo.git_dir) / "info").mkdir(exist_ok=True)  # `git init --template=` makes none
    with open(Path(repo.git_dir) / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("# build outputs of the editable cutlass_api install (envcheck)\n" + "\n".join(_EXCLUDES) + "\n")
    _refuse_foreign_upload_pack(partial)  # ours, but a global configuration's remote.origin.uploadpack would come first
    handler = _GitProgress(progress, log)
    with online(repo, credentials):
        # --no-tags: the refs are exactly the two named here, so that undo can tell what fix made from what a user added
        handler.run(repo, "fetch", "--depth=1", "--filter=blob:none", "--no-tags", "--no-recurse-submodules",
                    f"--upload-pack={upload_pack(url)}", "--progress", "--", "origin",
                    f"+{commit}:refs/remotes/origin/{branch}", timeout=timeout)
        received = _objects_bytes(Path(repo.git_dir))
        if progress is not None:
            progress("checking out", None)
        handler.write(repo.git.sparse_checkout("set", "--cone", subdir))
        handler.write(repo.git.checkout("--quiet", "--no-recurse-submodules", "-B", branch, commit, "--",
                                        kill_after_timeout=timeout))
    received = max(received, _objects_bytes(Path(repo.git_dir)))  # blobs the checkout fetched
    repo.close()
    if dest.exists():
        dest.rmdir()  # it was empty
    os.rename(partial, dest)
    return FetchResult(str(dest), commit, "cloned", received, round(time.monotonic() - started, 3))


def partial_folder(dest: str | Path) -> Path:
    """The sibling folder a fresh fetch of dest builds in, renamed into place when it is complete."""
    dest = Path(dest)
    return dest.parent / f"{dest.name}{PARTIAL}"


def remove_partial(dest: str | Path) -> Optional[str]:
    """Remove what a stopped fetch of dest left (`<dest>.envcheck-partial`, a killed fix's half-made checkout): what
    was done, in words, or None when nothing was there. Only a folder of the user's is removed (the name is
    envcheck's own); a link or a file of that name, or another's folder, is kept: CheckoutRefused says so."""
    partial = partial_folder(Path(dest).expanduser().absolute())
    try:
        info = os.lstat(partial)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise CheckoutRefused(f"{partial} is not a folder envcheck made, so it stays: move it away, then run envcheck "
                              "fix again")
    try:
        shutil.rmtree(partial)
    except OSError as exc:
        raise CheckoutRefused(f"{partial}, left by a fetch that was stopped, could not be removed: "
                              f"{exc.strerror or exc}") from None
    return f"{partial}: removed (a fetch that was stopped)"


def _move_existing(dest: Path, url: str, branch: str, commit: str, credentials: Optional[Path], progress, log, timeout,
                   started) -> FetchResult:
    if not dest.is_dir() or not _is_repo_root(dest):
        raise CheckoutRefused(
            f"{dest} exists and is not a git checkout: envcheck will not write into it. "
            "Move it away, or choose another folder with --cutlass-dir."
        )
    repo = _repo(dest)
    handler = _GitProgress(progress, log)
    try:
        head = repo.head.commit.hexsha
    except ValueError:
        head = None
    if head == commit:
        return FetchResult(str(dest), commit, "already there", 0, round(time.monotonic() - started, 3))
    dirty = _dirty(repo)
    if dirty:
        raise CheckoutRefused(
            f"{dest} has changes that are not committed ({shown_paths(dirty)}): envcheck does not touch a dirty "
            f"checkout. Commit or stash them, or choose another folder with --cutlass-dir; then run `envcheck fix` again."
        )
    if head is not None and not _tree_has(repo, head, CUTLASS_MARKER):
        raise CheckoutRefused(
            f"{dest} is a git repository but not CUTLASS (no {CUTLASS_MARKER} at HEAD): envcheck will not change it. "
            "Choose another folder with --cutlass-dir."
        )
    _refuse_foreign_upload_pack(dest)
    before = _objects_bytes(Path(repo.git_dir))
    missing = not _has_commit(repo, commit)  # offline: a partial clone does not go and fetch it to answer
    with online(repo, credentials):
        if missing:
            shallow = (Path(repo.git_dir) / "shallow").exists()
            partial = bool(repo.config_reader().get_value("extensions", "partialclone", default=""))
            remote = next((r for r in repo.remotes if is_plain_name(r.name) and url in list(r.urls)), None)
            args = ["--depth=1"] if shallow else []
            if partial and remote is not None:
                args.append("--filter=blob:none")
            args.append(f"--upload-pack={upload_pack(url)}")  # never the checkout's own remote.*.uploadpack
            handler.run(repo, "fetch", *args, "--no-recurse-submodules", "--progress", "--",
                        remote.name if remote is not None else url, commit, timeout=timeout)
        if progress is not None:
            progress("checking out", None)
        handler.write(repo.git.checkout("--quiet", "--no-recurse-submodules", "-B", branch, commit, "--",
                                        kill_after_timeout=timeout))
    received = max(0, _objects_bytes(Path(repo.git_dir)) - before)
    return FetchResult(str(dest), commit, "moved", received, round(time.monotonic() - started, 3))


def _refuse_foreign_upload_pack(folder: Path) -> None:
    """Before a partial clone goes online(): no remote of it may name an upload-pack envcheck does not run."""
    own = foreign_upload_pack(configured(folder))
    if own:
        raise CheckoutRefused(
            f"{folder} is a partial clone whose remote names an upload-pack program of its own ({own!r}, in its git "
            "configuration), which git would run to fetch what the checkout lacks: envcheck will not. Remove the "
            "setting, or choose another folder with --cutlass-dir."
        )


def _has_commit(repo, commit: str) -> bool:
    git = gitpython()
    try:
        repo.git.cat_file("-e", f"{commit}^{{commit}}")
        return True
    except git.GitCommandError:
        return False


def _tree_has(repo, commit: str, path: str) -> bool:
    try:
        repo.commit(commit).tree / path
        return True
    except KeyError:
        return False


def install_byproduct(code: str, path: str) -> bool:
    """A `git status --porcelain` entry for a file the editable install writes (untracked or ignored, never tracked):
    where it writes, not that it wrote this one (fix/byproducts.py says which ones fix's install wrote)."""
    return code in ("??", "!!") and bool(_BYPRODUCT.search(path))


# The paths _EXCLUDES names, as one pattern: NAME.egg-info and __pycache__ anywhere, python/<package>/build.
_BYPRODUCT = re.compile(r"(^|/)([^/]+\.egg-info|__pycache__)(/|$)|^python/[^/]+/build(/|$)")


def shown_paths(paths) -> str:
    """The first five paths, and how many more: for a message."""
    paths = list(paths)
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
