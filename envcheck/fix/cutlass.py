"""The CUTLASS checkout: a shallow, blob-filtered, sparse fetch of one commit with GitPython, and its undo.

A new checkout is built in a sibling folder and renamed into place when it is complete, so a killed fetch never leaves
a half-made checkout behind (the next run removes the leftover folder and starts again). An existing checkout is moved
to the pinned commit only when it is clean and is CUTLASS; a dirty one is never touched.

Every git argument is either a constant or a value checked here (URL scheme, 40-hex commit, branch and path shapes
come checked from the policy), and no git call goes through a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, TextIO
from urllib.parse import urlparse

from ..errors import UsageError

__all__ = [
    "GIT_URL_SCHEMES",
    "CheckoutRefused",
    "CheckoutState",
    "FetchResult",
    "checked_url",
    "read_state",
    "fetch",
    "restore",
    "git_commands",
]

GIT_URL_SCHEMES = ("https", "ssh", "file")
CUTLASS_MARKER = "include/cutlass/cutlass.h"  # in every CUTLASS commit's tree; readable without blobs
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
# A local repository serves a filtered fetch only if it agrees to; git does not pass our -c settings to the
# upload-pack of a file:// remote, so the consent travels as the remote's upload-pack command. A constant.
_FILE_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
# What building and installing cutlass_api editable leaves in the work tree: not a change to the checkout.
_EXCLUDES = ("*.egg-info/", "__pycache__/", "/python/*/build/")
_PARTIAL = ".envcheck-partial"

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


def checked_url(value: str, flag: str = "--cutlass-url") -> str:
    """An https, ssh or file URL git may fetch from; a local directory becomes its file:// URL."""
    if not isinstance(value, str) or not value or any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise UsageError(f"{flag} {value!r}: expected an https://, ssh:// or file:// URL, or a local repository")
    if "://" not in value and not value.startswith("-"):
        path = Path(value).expanduser()
        if path.is_dir():
            return path.absolute().as_uri()
    parsed = urlparse(value)
    if parsed.scheme not in GIT_URL_SCHEMES or value.startswith("-") or not (parsed.netloc or parsed.path):
        raise UsageError(f"{flag} {value!r}: expected an https://, ssh:// or file:// URL, or a local repository")
    return value


def _check_git_values(branch: str, commit: str, subdir: str) -> None:
    """The policy checked these when it was read; checked again here, where they meet git."""
    if not _SHA.fullmatch(commit):
        raise ValueError(f"not a full commit id: {commit!r}")
    if not _REF.fullmatch(branch) or ".." in branch:
        raise ValueError(f"not a branch name: {branch!r}")
    if not subdir or subdir.startswith(("/", "-")) or ".." in Path(subdir).parts:
        raise ValueError(f"not a relative path: {subdir!r}")


def _git():
    import git  # GitPython, imported only when a checkout is read or changed

    return git


def _repo(path: Path):
    git = _git()
    repo = git.Repo(path)  # this folder itself, never a repository above it
    # never prompt; and `git status` must not rewrite the index of a checkout it only reads
    repo.git.update_environment(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="", GIT_OPTIONAL_LOCKS="0")
    return repo


def _is_repo_root(path: Path) -> bool:
    git = _git()
    try:
        repo = git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return False
    return Path(repo.working_tree_dir or "").resolve() == path.resolve()


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
    status = repo.git.status("--porcelain", "--untracked-files=normal")
    return tuple(line[3:] for line in status.splitlines() if line.strip())


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
        git = _git()
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
        handle_process_output(
            process, None, self.handler.new_message_handler(), finalize_process,
            decode_streams=False, kill_after_timeout=timeout,
        )

    def write(self, line: str) -> None:
        if self.log is not None and line.strip():
            self.log.write(f"git: {line.rstrip()}\n")
            self.log.flush()


def git_commands(dest: str, url: str, branch: str, commit: str, subdir: str) -> tuple[tuple[str, ...], ...]:
    """The git commands a fresh fetch runs, for the plan (GitPython runs the same ones, without a shell)."""
    partial = f"{dest}{_PARTIAL}"
    commands = [
        ("git", "init", "--quiet", partial),
        ("git", "-C", partial, "remote", "add", "origin", url),
        ("git", "-C", partial, "config", "remote.origin.promisor", "true"),
        ("git", "-C", partial, "config", "remote.origin.partialclonefilter", "blob:none"),
    ]
    if url.startswith("file:"):
        commands.append(("git", "-C", partial, "config", "remote.origin.uploadpack", _FILE_UPLOAD_PACK))
    commands += [
        ("git", "-C", partial, "fetch", "--depth=1", "--filter=blob:none", "--progress", "origin",
         f"+{commit}:refs/remotes/origin/{branch}"),
        ("git", "-C", partial, "sparse-checkout", "set", "--cone", subdir),
        ("git", "-C", partial, "checkout", "--quiet", "-B", branch, commit),
        ("mv", partial, dest),
    ]
    return tuple(commands)


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
    """Put the pinned commit of CUTLASS at dest, moving nothing that is not clean. Idempotent."""
    _check_git_values(branch, commit, subdir)
    url = checked_url(url)
    dest = Path(dest).expanduser().absolute()
    started = time.monotonic()
    for leftover in dest.parent.glob(f"{dest.name}{_PARTIAL}*") if dest.parent.is_dir() else ():
        shutil.rmtree(leftover, ignore_errors=True)  # ours, from a fetch that was stopped
    if dest.exists() and not (dest.is_dir() and not any(dest.iterdir())):
        return _move_existing(dest, url, branch, commit, progress, log, timeout, started)
    partial = dest.parent / f"{dest.name}{_PARTIAL}"
    partial.parent.mkdir(parents=True, exist_ok=True)
    git = _git()
    repo = git.Repo.init(partial)
    repo.git.update_environment(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="")
    repo.create_remote("origin", url)
    with repo.config_writer() as config:
        config.set_value('remote "origin"', "promisor", "true")
        config.set_value('remote "origin"', "partialclonefilter", "blob:none")
        if url.startswith("file:"):
            config.set_value('remote "origin"', "uploadpack", _FILE_UPLOAD_PACK)
    with open(Path(repo.git_dir) / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("# build outputs of the editable cutlass_api install (envcheck)\n" + "\n".join(_EXCLUDES) + "\n")
    handler = _GitProgress(progress, log)
    handler.run(repo, "fetch", "--depth=1", "--filter=blob:none", "--progress", "origin",
                f"+{commit}:refs/remotes/origin/{branch}", timeout=timeout)
    received = _objects_bytes(Path(repo.git_dir))
    if progress is not None:
        progress("checking out", None)
    handler.write(repo.git.sparse_checkout("set", "--cone", subdir))
    handler.write(repo.git.checkout("--quiet", "-B", branch, commit, kill_after_timeout=timeout))
    received = max(received, _objects_bytes(Path(repo.git_dir)))  # blobs the checkout fetched
    repo.close()
    if dest.exists():
        dest.rmdir()  # it was empty
    os.rename(partial, dest)
    return FetchResult(str(dest), commit, "cloned", received, round(time.monotonic() - started, 3))


def _move_existing(dest: Path, url: str, branch: str, commit: str, progress, log, timeout, started) -> FetchResult:
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
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise CheckoutRefused(
            f"{dest} has changes that are not committed ({shown}): envcheck does not touch a dirty checkout. "
            f"Commit or stash them, or choose another folder with --cutlass-dir; then run `envcheck fix` again."
        )
    if head is not None and not _tree_has(repo, head, CUTLASS_MARKER):
        raise CheckoutRefused(
            f"{dest} is a git repository but not CUTLASS (no {CUTLASS_MARKER} at HEAD): envcheck will not change it. "
            "Choose another folder with --cutlass-dir."
        )
    before = _objects_bytes(Path(repo.git_dir))
    if not _has_commit(repo, commit):
        shallow = (Path(repo.git_dir) / "shallow").exists()
        partial = bool(repo.config_reader().get_value("extensions", "partialclone", default=""))
        remote = next((r for r in repo.remotes if url in list(r.urls)), None)
        args = ["--depth=1"] if shallow else []
        if partial and remote is not None:
            args.append("--filter=blob:none")
        if remote is None and url.startswith("file:"):
            args.append(f"--upload-pack={_FILE_UPLOAD_PACK}")
        handler.run(repo, "fetch", *args, "--progress", remote.name if remote is not None else url, commit, timeout=timeout)
    if progress is not None:
        progress("checking out", None)
    handler.write(repo.git.checkout("--quiet", "-B", branch, commit, kill_after_timeout=timeout))
    received = max(0, _objects_bytes(Path(repo.git_dir)) - before)
    return FetchResult(str(dest), commit, "moved", received, round(time.monotonic() - started, 3))


def _has_commit(repo, commit: str) -> bool:
    git = _git()
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


def restore(state: CheckoutState, branch: str, log: Optional[TextIO] = None) -> str:
    """Put the checkout back as the snapshot found it. Returns what was done; raises CheckoutRefused if it is dirty."""
    folder = Path(state.path)
    now = read_state(folder, branch)
    if not state.exists:
        if not now.exists:
            return f"{folder}: already absent"
        if now.is_repo and not now.dirty_files:
            shutil.rmtree(folder)
            return f"{folder}: removed (envcheck had fetched it)"
        raise CheckoutRefused(f"{folder} was made by envcheck but has changed since: left as it is")
    if not state.is_repo or not now.is_repo:
        return f"{folder}: not a checkout envcheck changed"
    if (now.commit, now.branch, now.branch_tip) == (state.commit, state.branch, state.branch_tip):
        return f"{folder}: already at {state.commit[:12] if state.commit else 'its recorded state'}"
    if now.dirty_files:
        raise CheckoutRefused(f"{folder} has changes that are not committed: envcheck does not touch a dirty checkout")
    repo = _repo(folder)
    handler = _GitProgress(None, log)
    if state.commit:
        handler.write(repo.git.checkout("--quiet", "--detach", state.commit))
    if state.branch_tip:
        handler.write(repo.git.branch("--force", "--", branch, state.branch_tip))
    elif any(head.name == branch for head in repo.heads) and state.branch != branch:
        handler.write(repo.git.branch("-D", "--", branch))
    if state.branch:
        handler.write(repo.git.checkout("--quiet", state.branch, "--"))
    return f"{folder}: back at {state.commit[:12] if state.commit else '?'}" + (f" on {state.branch}" if state.branch else "")
