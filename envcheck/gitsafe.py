"""git that runs nothing a repository names, works in the repository it was given; the one check of a URL git
may fetch from and of the values that reach git's argv (a branch, a commit, a folder); the one recipe of a fetch.

A checkout envcheck did not create is untrusted: its `.git/config`, and every file that config includes, can name
programs that git runs on its own (`core.fsmonitor` during `git status`, hooks on checkout, `filter.<driver>.smudge`,
`remote.<name>.uploadpack` when a partial clone fetches a missing blob, `core.alternateRefsCommand` on fetch, ...).
`SETTINGS` (gitsettings.py) is the audit of every git setting that names a command, with what envcheck sets it to
and why; each git process envcheck starts, GitPython's included, gets those values through `GIT_CONFIG_COUNT`/
`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which git ranks above every configuration file. Settings whose names the configuration chooses
(`filter.<driver>.clean`, `remote.<name>.vcs`, `protocol.<name>.allow`, ...) are found by reading the configuration
first (`git config --list` follows includes and runs nothing), again before every GitPython call, as an `includeIf
"onbranch:..."` can add some once a checkout has moved HEAD. If the configuration cannot be read, git is not run.
A few settings cannot be outranked (git takes their first value: remote.<name>.uploadpack, core.gitProxy); for those
the environment (GIT_PROXY_COMMAND) or the command line (--upload-pack) decides, and git fetches nothing on its own:
every transport is refused except inside `online()`, where envcheck means to fetch.

The caller's environment is trusted for how to reach a remote, not for which repository git works in: a git hook
runs with GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE and more set for its own repository, and envcheck may run from one.
Every `GIT_*` variable outside `KEPT_VARIABLES` is left out of git's environment (for GitPython, out of this
process's own environment, which GitPython copies into every call).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, MutableMapping, Optional
from urllib.parse import urlparse

from . import proc
from .errors import UsageError
from .gitsettings import KEPT_VARIABLES, SETTINGS, SOURCE, Setting
from .redact import Redactor, redact_url

__all__ = ["FILE_UPLOAD_PACK", "GIT_URL_SCHEMES", "INDEX_URL_SCHEMES", "KEPT_VARIABLES", "PARTIAL", "SETTINGS",
           "SOURCE", "Setting", "UnreadableConfig", "check_git_values", "checked_index_url", "checked_url",
           "config_true", "configured", "credential_file", "credentials_apart", "environment", "foreign_upload_pack",
           "forget_caller_repository", "full_environment", "git_commands", "gitpython", "init_repo", "is_commit_id", "is_plain_name",
           "is_relative_path", "online", "open_repo", "upload_pack", "variables"]

GIT_URL_SCHEMES = ("https", "ssh", "file")
INDEX_URL_SCHEMES = ("https", "file")  # a package index: never plain http, where hashes and wheels could be swapped
# The upload-pack envcheck runs for a local repository: it consents to the filtered, by-commit fetch. A constant.
FILE_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"

_KEPT_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_PYTHON_")  # GIT_PYTHON_*: GitPython's, not git's
_KEPT = frozenset(name for name, _ in KEPT_VARIABLES)
_QUIET = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for a password
    "GIT_ASKPASS": "",  # empty: no askpass program (neither core.askPass nor SSH_ASKPASS is tried)
    "SSH_ASKPASS": "",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": ":",
    "GIT_PROXY_COMMAND": "",  # set and empty: no core.gitProxy is looked up
    "GIT_OPTIONAL_LOCKS": "0",  # `git status` must not rewrite the index of a checkout it only reads
}
_OFFLINE = {"GIT_NO_LAZY_FETCH": "1"}  # git 2.44+ (and 2.39.4+): no fetch for a missing object, as protocol.allow=never


_FIXED = tuple((s.key, s.value) for s in SETTINGS if s.value is not None and "<name>" not in s.key)
# The <name> settings, as patterns of the keys `git config --list` prints (section and variable in lower case). Kept
# as text: re compiles each the first time a checkout's configuration is read (and caches it), not at import.
_NAMED = tuple((re.escape(s.trigger.lower()).replace("<name>", "(?P<name>.+)"), s.key, s.value)
               for s in SETTINGS if s.value is not None and "<name>" in s.key)


class UnreadableConfig(OSError):
    """git's configuration in a folder could not be read, so git is not run there: it could name a command that
    envcheck would not know to turn off."""


def _kept(name: str) -> bool:
    """Whether git may see the caller's variable: any but GIT_*, and of those KEPT_VARIABLES and GitPython's own."""
    return not name.startswith("GIT_") or name in _KEPT or name.startswith(_KEPT_PREFIXES)


def variables(base: Mapping[str, str]) -> dict[str, str]:
    """base without the GIT_* variables git must not see."""
    return {name: value for name, value in base.items() if _kept(name)}


def configured(repo_dir: str | Path, base: Optional[Mapping[str, str]] = None) -> tuple[tuple[str, str], ...]:
    """Every setting git sees in repo_dir, as (key, value): all scopes, includes followed. Reading runs nothing.

    Raises UnreadableConfig when git cannot say (an error, or no answer in 30 s: an include of a FIFO)."""
    folder = Path(repo_dir).absolute()  # git runs in a folder of its own (proc), not here
    if not folder.is_dir():
        return ()
    env = {**variables(os.environ if base is None else base), **_QUIET}
    try:
        done = proc.run(["git", "-C", str(folder), "config", "--null", "--list"], 30, env=env)
    except FileNotFoundError:  # no git: nothing it could run either
        return ()
    if done.timed_out or done.returncode != 0:
        why = "it did not answer within 30 s" if done.timed_out else (done.stderr.strip().splitlines() or ["?"])[0]
        raise UnreadableConfig(f"cannot read the git configuration of {folder}: {why}")
    return tuple((key, value) for key, _, value in (entry.partition("\n") for entry in done.stdout.split("\0")) if key)


def _named(config: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The <name> settings of SETTINGS that config calls for (Setting.trigger), each for the name it uses."""
    fixed = {key.lower() for key, _ in _FIXED}
    pairs: dict[str, str] = {}
    for key, _ in config:
        lower = key.lower()
        for pattern, template, neutral in _NAMED:
            found = re.fullmatch(pattern, lower)
            if found:  # the name as configured (git keeps its case), the rest in SETTINGS' spelling
                start, end = found.span("name")
                named = template.replace("<name>", key[start:end])
                if named.lower() not in fixed:
                    pairs[named] = neutral
    return list(pairs.items())


def environment(
    repo_dir: Optional[str | Path] = None, base: Optional[Mapping[str, str]] = None,
    config: Optional[tuple[tuple[str, str], ...]] = None, *, offline: bool = False,
    credentials: Optional[Path] = None,
) -> dict[str, str]:
    """The variables to add to git's environment so that nothing configured in `repo_dir` (or by the caller) runs.

    config: repo_dir's settings when the caller has read them already (`configured`); else they are read here.
    offline: allow no transport at all: git fetches nothing, not even a partial clone's missing object.
    credentials: the private file git's own credential store reads a URL's user info from (credential_file);
    its helper comes after the empty credential.helper that clears every configured one."""
    base = os.environ if base is None else base
    if config is None:
        config = configured(repo_dir, base) if repo_dir is not None else ()
    ssh = shlex.quote(base["GIT_SSH"]) if base.get("GIT_SSH") else "ssh"
    pairs = [(key, ssh if key == "core.sshCommand" else
              "never" if offline and key.startswith("protocol.") else value) for key, value in _FIXED]
    pairs += _named(config)
    if credentials is not None:
        pairs.append(("credential.helper", f"store --file={shlex.quote(str(credentials))}"))
    try:
        first = int(base.get("GIT_CONFIG_COUNT", "0") or 0)  # settings the user passed this way stay, before ours
    except ValueError:
        first = 0
    env = {**_QUIET, **(_OFFLINE if offline else {})}
    for offset, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{first + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{first + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return env


def full_environment(
    repo_dir: Optional[str | Path] = None, base: Optional[Mapping[str, str]] = None,
    config: Optional[tuple[tuple[str, str], ...]] = None, *, offline: bool = False,
) -> dict[str, str]:
    """The whole environment of a git process started without GitPython: base (os.environ) without the variables
    git must not see, and environment()'s."""
    base = os.environ if base is None else base
    return {**variables(base), **environment(repo_dir, base, config, offline=offline)}


def forget_caller_repository(environ: MutableMapping[str, str]) -> None:
    """Take the GIT_* variables git must not see out of environ (this process's, for GitPython)."""
    for name in [name for name in environ if not _kept(name)]:
        del environ[name]


def gitpython():
    """GitPython, imported only when a checkout is changed; this process's environment loses the GIT_* variables
    git must not see first, as GitPython copies os.environ into every call (and Repo() reads GIT_WORK_TREE,
    GIT_COMMON_DIR and GIT_OBJECT_DIRECTORY from it itself), with no way to leave a variable out of one call."""
    forget_caller_repository(os.environ)
    import git

    return git


@functools.lru_cache(maxsize=1)
def _hardened():
    """GitPython's Git and Repo, every git call reading the repository's configuration again and running with
    environment(): a setting can change between two calls (an includeIf onbranch: once HEAD moved)."""
    git = gitpython()

    class Git(git.Git):
        online = False  # see online()

        credentials: Optional[Path] = None  # see online()

        def execute(self, command, *args, **kwargs):  # noqa: ANN001 - GitPython's signature
            forget_caller_repository(os.environ)
            self._environment.clear()  # nothing left from the call before (GIT_NO_LAZY_FETCH, a setting gone)
            self.update_environment(**environment(self._working_dir, offline=not self.online,
                                                  credentials=self.credentials if self.online else None))
            return super().execute(command, *args, **kwargs)

    class Repo(git.Repo):
        GitCommandWrapperType = Git

    return Git, Repo


_TRUE = ("true", "yes", "on", "1", "")  # git's spellings of a true boolean (a bare key is true)


def config_true(value: str) -> bool:
    return value.strip().lower() in _TRUE


def foreign_upload_pack(config: tuple[tuple[str, str], ...]) -> Optional[str]:
    """In a partial clone's configuration, an upload-pack program a remote names that is not one envcheck runs: git
    would run it to fetch an object the clone lacks (it takes the first value, which no setting outranks), so a
    partial clone with one is not taken online()."""
    promisor = any(key.lower() == "extensions.partialclone" or (
        key.lower().startswith("remote.") and key.lower().endswith(".promisor") and config_true(value))
        for key, value in config)
    return next((value for key, value in config if promisor and key.lower().startswith("remote.")
                 and key.lower().endswith(".uploadpack") and value not in (FILE_UPLOAD_PACK, upload_pack(""))), None)


@contextmanager
def online(repo, credentials: Optional[Path] = None) -> Iterator[None]:
    """Inside, repo's git calls may fetch (https, ssh, file); everywhere else every transport is refused. git
    fetches a partial clone's missing object on its own, with the remote's own remote.<name>.uploadpack, which no
    setting outranks (git takes its first value): only where envcheck means to fetch may that happen, and its
    callers see to that upload-pack first. A persistent process GitPython started keeps what it started with.
    credentials: the file credential_file made, which git's credential store reads, inside only."""
    repo.git.online, repo.git.credentials = True, credentials
    try:
        yield
    finally:
        repo.git.online, repo.git.credentials = False, None


def credentials_apart(url: str) -> tuple[str, Optional[str]]:
    """(the URL git is given for a fetch from url, the line of git's credential store that holds its user info, or
    None where it has none). A password or a token in an https URL's user info reaches git only through that line
    (credential_file): never git's argv, which every user of the machine can read in /proc, nor the checkout's
    .git/config, which keeps the URL git was given. A secret git could take only on its command line (a query's
    token, an ssh password) is a ValueError saying so."""
    from urllib.parse import quote, unquote

    from .redact import has_credentials, url_parts, without_credentials

    if not has_credentials(url):
        return url, None
    scheme, user_info, rest, query, fragment = url_parts(url)
    if query is not None or (fragment is not None and has_credentials(f"{scheme}{rest}#{fragment}")):
        raise ValueError("a token in the URL's query cannot reach git except on its command line, which every user "
                         "of the machine can read: put it in the URL's user info (https://TOKEN@host/...)")
    if scheme.lower() not in ("https://", "http://"):
        raise ValueError(f"{scheme}user:password@... takes no password from its URL (git would need it on its "
                         "command line): use a key, or an https:// URL")
    user, _, password = user_info.partition(":")
    host = rest.split("/", 1)[0]
    return without_credentials(url), f"{scheme.lower()}{quote(unquote(user), safe='')}:{quote(unquote(password), safe='')}@{host}\n"


@contextmanager
def credential_file(line: Optional[str]) -> Iterator[Optional[Path]]:
    """The file git's own credential store reads `line` from (credentials_apart), for the block: readable by its
    owner only, in a private folder of its own (proc.private_folder), named to git in its environment (online()),
    which only the user and root can read; removed when the block ends. None without a line."""
    if line is None:
        yield None
        return
    with proc.private_folder() as folder:
        path = folder / "git-credentials"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(line)
        yield path


def open_repo(path: str | Path):
    """A GitPython Repo of this folder itself (never one above it) whose every git call runs with environment(),
    offline (see online())."""
    gitpython()
    return _hardened()[1](path)


def init_repo(path: str | Path, *, bare: bool = False):
    """`git init` of a new, empty folder (ours), hardened like every other call, and with no template."""
    gitpython()
    Path(path).mkdir(parents=True, exist_ok=True)
    # git runs in the new folder itself: the caller's folder could hold a repository whose configuration git reads
    _hardened()[0](str(Path(path).absolute())).execute(
        ["git", "init", "--quiet", "--template=", *(["--bare"] if bare else []), str(Path(path).absolute())])
    return open_repo(path)


_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")
# A folder inside a repository or a site directory: names of letters, digits, '_', '.', '+', '-' (none starting with
# '.' or '-', so no '..' and nothing option-like), joined by '/'. It reaches git's argv, the Dockerfile's RUN lines
# and printed commands, where any other character (a space, '$', a backquote, a quote, a line break) could mean more.
_RELATIVE_PATH = re.compile(r"[A-Za-z0-9_+][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+][A-Za-z0-9_.+-]*)*")


def is_commit_id(text: Optional[str]) -> bool:
    """40 hex digits."""
    return bool(text) and bool(_SHA.fullmatch(text))


def is_plain_name(text: Optional[str]) -> bool:
    """A branch or remote name git may get as an argument: letters, digits, ._/-, not option-like, no `..`."""
    return bool(text) and bool(_REF.fullmatch(text)) and ".." not in text


def is_relative_path(text: Optional[str]) -> bool:
    """A folder inside a repository: plain names joined by '/' (no '..', nothing absolute or option-like)."""
    return bool(text) and bool(_RELATIVE_PATH.fullmatch(text))


def check_git_values(branch: str, commit: str, subdir: str) -> None:
    """A branch, a commit and a folder that reach git as arguments: a branch name, 40 hex digits, a relative path.
    The policy checks them when it is read, a bundle's manifest when it is opened; checked again where git runs."""
    if not is_commit_id(commit):
        raise ValueError(f"not a full commit id: {commit!r}")
    if not is_plain_name(branch):
        raise ValueError(f"not a branch name: {branch!r}")
    if not is_relative_path(subdir):
        raise ValueError(f"not a relative path: {subdir!r}")


def upload_pack(url: str) -> str:
    """The --upload-pack every fetch names, so that no `remote.*.uploadpack` in a repository's config is used."""
    return FILE_UPLOAD_PACK if url.startswith("file:") else "git-upload-pack"


PARTIAL = ".envcheck-partial"  # the sibling folder a fetch builds in, renamed into place when complete


def git_commands(dest: str, url: str, branch: str, commit: str, subdir: str) -> tuple[tuple[str, ...], ...]:
    """The git commands of a fresh CUTLASS fetch, written once: the fetch runs the same ones (through GitPython, no
    shell), plans show them, and doctor's remedy prints them for doing it by hand."""
    partial = f"{dest}{PARTIAL}"
    commands = [
        ("git", "init", "--quiet", "--template=", partial),  # no hooks or config copied from a template
        ("git", "-C", partial, "remote", "add", "origin", url),
        ("git", "-C", partial, "config", "remote.origin.promisor", "true"),
        ("git", "-C", partial, "config", "remote.origin.partialclonefilter", "blob:none"),
    ]
    if url.startswith("file:"):
        commands.append(("git", "-C", partial, "config", "remote.origin.uploadpack", FILE_UPLOAD_PACK))
    commands += [
        ("git", "-C", partial, "fetch", "--depth=1", "--filter=blob:none", "--no-tags", "--no-recurse-submodules",
         f"--upload-pack={upload_pack(url)}", "--progress", "--", "origin", f"+{commit}:refs/remotes/origin/{branch}"),
        ("git", "-C", partial, "sparse-checkout", "set", "--cone", subdir),
        ("git", "-C", partial, "checkout", "--quiet", "--no-recurse-submodules", "-B", branch, commit, "--"),
        ("mv", partial, dest),
    ]
    return tuple(commands)


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


def _shown(value: object) -> str:
    """A value given as a URL, as an error quotes it: the URL parsed and its secrets masked (redact_url), then
    anything secret-looking left in the text."""
    return Redactor()(repr(redact_url(value) if isinstance(value, str) else value))


def checked_index_url(value: str, flag: str = "--index-url") -> str:
    """A package index URL pip may use: https or file (the same shape rules as checked_url). Else UsageError."""
    if not _url_shape(value, INDEX_URL_SCHEMES):
        raise UsageError(f"{flag} {_shown(value)}: expected an https:// or file:// URL of a package index")
    return value


def checked_url(value: str, flag: str = "--cutlass-url") -> str:
    """An https, ssh or file URL git may fetch from; a local directory becomes its file:// URL. Else UsageError.

    Refused: other schemes (ext::, git://, http://), option-like values, and a host or user that starts with '-'
    (`ssh://-oProxyCommand=...`), which ssh would read as an option."""
    expected = "expected an https://, ssh:// or file:// URL, or a local repository"
    shown = _shown(value)
    plain = isinstance(value, str) and not any(ch.isspace() or ord(ch) < 32 for ch in value)
    if plain and value and "://" not in value and not value.startswith("-"):
        path = Path(value).expanduser()
        if path.is_dir():
            return path.absolute().as_uri()
    if not _url_shape(value, GIT_URL_SCHEMES):
        raise UsageError(f"{flag} {shown}: {expected} (and no host or user that starts with '-')")
    return value
