"""git that runs nothing from the repository it works in, and the one check of a URL git may fetch from.

A checkout envcheck did not create is untrusted: its `.git/config` can name programs that git runs on its own:
`core.fsmonitor` during `git status`, hooks (`core.hooksPath`, `.git/hooks/*`) on checkout, `core.sshCommand` and
`remote.*.uploadpack` on fetch, `filter.*.smudge`/`process` on checkout, credential helpers, pagers and editors, and
the `ext::` transport. Every git process envcheck starts, GitPython's included, runs with `environment()`: settings
passed as `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which git ranks above every configuration file,
turn each of those off. Filter drivers have names of the repository's choosing, so the names it configures are read
first (reading configuration runs nothing) and each driver is emptied.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Optional
from urllib.parse import urlparse

from . import proc
from .errors import UsageError
from .redact import Redactor

__all__ = ["GIT_URL_SCHEMES", "INDEX_URL_SCHEMES", "checked_url", "checked_index_url", "environment", "filter_drivers", "open_repo",
           "init_repo", "upload_pack"]

GIT_URL_SCHEMES = ("https", "ssh", "file")
INDEX_URL_SCHEMES = ("https", "file")  # a package index: never plain http, where hashes and wheels could be swapped

# Highest-precedence settings for every git call. Each turns off one way a repository's own configuration runs code.
_NEUTRAL: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),  # a command run by `git status`
    ("core.hooksPath", "/dev/null"),  # no hook is found there: post-checkout, reference-transaction, ...
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("credential.helper", ""),  # the empty value clears every helper configured before it
    ("diff.external", ""),
    ("protocol.allow", "never"),  # ext::, git:// and plain http:// are refused; only these three are used
    ("protocol.https.allow", "always"),
    ("protocol.ssh.allow", "always"),
    ("protocol.file.allow", "always"),
)
_QUIET = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for a password
    "GIT_ASKPASS": "",  # empty: no askpass program (neither core.askPass nor SSH_ASKPASS is tried)
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` must not rewrite the index of a checkout it only reads
}
_FILTER_KEY = re.compile(r"^filter\.(?P<driver>.+)\.(clean|smudge|process|required)$", re.IGNORECASE)
# The upload-pack envcheck runs for a local repository: it consents to the filtered, by-commit fetch. A constant.
FILE_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"


def environment(
    repo_dir: Optional[str | Path] = None, base: Optional[Mapping[str, str]] = None,
    drivers: Optional[Iterable[str]] = None,
) -> dict[str, str]:
    """The variables to add to git's environment so that nothing configured in `repo_dir` runs.

    drivers: the filter drivers to empty, when the caller has read them already (`filter_drivers`); else they are
    read from repo_dir's configuration."""
    base = os.environ if base is None else base
    pairs = list(_NEUTRAL)
    if drivers is None:
        drivers = _filter_drivers(Path(repo_dir), base) if repo_dir is not None else ()
    for driver in drivers:
        pairs += [(f"filter.{driver}.{key}", "") for key in ("clean", "smudge", "process")]
        pairs.append((f"filter.{driver}.required", "false"))
    try:
        first = int(base.get("GIT_CONFIG_COUNT", "0") or 0)  # settings the user passed this way stay, before ours
    except ValueError:
        first = 0
    env = dict(_QUIET)
    for offset, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{first + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{first + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return env


def _filter_drivers(repo_dir: Path, base: Mapping[str, str]) -> list[str]:
    """Names of the filter drivers configured for repo_dir, in any scope. `git config` reads; it runs nothing."""
    if not repo_dir.is_dir():
        return []
    try:
        done = proc.run(["git", "-C", str(repo_dir), "config", "--null", "--name-only", "--get-regexp", r"^filter\."],
                        30, env={**base, **_QUIET})
    except OSError:  # no git: nothing configured for it either
        return []
    return filter_drivers(done.stdout.split("\0"))


def filter_drivers(config_keys: Iterable[str]) -> list[str]:
    """The filter driver names among configuration keys (`filter.<driver>.smudge` and the like; a name may hold dots)."""
    return sorted({m["driver"] for m in map(_FILTER_KEY.match, config_keys) if m})


def gitpython():
    import git  # GitPython, imported only when a checkout is read or changed

    return git


def open_repo(path: str | Path, *, search_parent_directories: bool = False):
    """A GitPython Repo whose every git call runs with environment()."""
    repo = gitpython().Repo(path, search_parent_directories=search_parent_directories)
    repo.git.update_environment(**environment(repo.working_tree_dir or repo.git_dir))
    return repo


def init_repo(path: str | Path, *, bare: bool = False):
    """`git init` of a new, empty folder (ours), hardened like every other call."""
    git = gitpython()
    runner = git.Git()
    runner.update_environment(**environment())
    Path(path).mkdir(parents=True, exist_ok=True)
    runner.execute(["git", "init", "--quiet", *(["--bare"] if bare else []), str(path)])
    return open_repo(path)


_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


def check_git_values(branch: str, commit: str, subdir: str) -> None:
    """A branch, a commit and a folder that reach git as arguments: a branch name, 40 hex digits, a relative path.
    The policy checks them when it is read, a bundle's manifest when it is opened; checked again where git runs."""
    if not _SHA.fullmatch(commit):
        raise ValueError(f"not a full commit id: {commit!r}")
    if not _REF.fullmatch(branch) or ".." in branch:
        raise ValueError(f"not a branch name: {branch!r}")
    if not subdir or subdir.startswith(("/", "-")) or ".." in Path(subdir).parts:
        raise ValueError(f"not a relative path: {subdir!r}")


def upload_pack(url: str) -> str:
    """The --upload-pack every fetch names, so that no `remote.*.uploadpack` in a repository's config is used."""
    return FILE_UPLOAD_PACK if url.startswith("file:") else "git-upload-pack"


def _url_shape(value: str, schemes: tuple[str, ...]) -> bool:
    """The shape every URL envcheck hands to git or pip must have: one of `schemes`, no whitespace or control
    characters, not option-like, a host or a path, and no host or user that starts with '-'."""
    if not isinstance(value, str) or not value or value.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in value):
        return False
    parsed = urlparse(value)
    if parsed.scheme not in schemes or not (parsed.netloc or parsed.path):
        return False
    user, _, host = parsed.netloc.rpartition("@")
    return not (host.startswith("-") or user.startswith("-") or (parsed.scheme in ("ssh", "https", "http") and not host))


def checked_index_url(value: str, flag: str = "--index-url") -> str:
    """A package index URL pip may use: https or file (the same shape rules as checked_url). Else UsageError."""
    if not _url_shape(value, INDEX_URL_SCHEMES):
        raise UsageError(f"{flag} {Redactor()(repr(value))}: expected an https:// or file:// URL of a package index")
    return value


def checked_url(value: str, flag: str = "--cutlass-url") -> str:
    """An https, ssh or file URL git may fetch from; a local directory becomes its file:// URL. Else UsageError.

    Refused: other schemes (ext::, git://, http://), option-like values, and a host or user that starts with '-'
    (`ssh://-oProxyCommand=...`), which ssh would read as an option."""
    expected = "expected an https://, ssh:// or file:// URL, or a local repository"
    shown = Redactor()(repr(value))  # a token in the URL is not echoed
    plain = isinstance(value, str) and not any(ch.isspace() or ord(ch) < 32 for ch in value)
    if plain and value and "://" not in value and not value.startswith("-"):
        path = Path(value).expanduser()
        if path.is_dir():
            return path.absolute().as_uri()
    if not _url_shape(value, GIT_URL_SCHEMES):
        raise UsageError(f"{flag} {shown}: {expected} (and no host or user that starts with '-')")
    return value
