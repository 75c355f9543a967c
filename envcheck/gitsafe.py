"""git that runs nothing a repository names, works in the repository it was given, and the one check of a URL git
may fetch from.

A checkout envcheck did not create is untrusted: its `.git/config`, and every file that config includes, can name
programs that git runs on its own (`core.fsmonitor` during `git status`, hooks on checkout, `filter.<driver>.smudge`,
`remote.<name>.uploadpack` when a partial clone fetches a missing blob, `core.alternateRefsCommand` on fetch, ...).
`SETTINGS` is the audit of every git setting that names a command, with what envcheck sets it to and why; each git
process envcheck starts, GitPython's included, gets those values through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/
`GIT_CONFIG_VALUE_n`, which git ranks above every configuration file. Settings whose names the configuration chooses
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
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, MutableMapping, Optional
from urllib.parse import urlparse

from . import proc
from .errors import UsageError
from .redact import Redactor

__all__ = ["FILE_UPLOAD_PACK", "GIT_URL_SCHEMES", "INDEX_URL_SCHEMES", "KEPT_VARIABLES", "SETTINGS", "SOURCE",
           "Setting", "UnreadableConfig", "PARTIAL", "check_git_values", "checked_index_url", "checked_url", "config_true",
           "configured", "environment", "foreign_upload_pack", "forget_caller_repository",
           "full_environment", "git_commands", "gitpython", "init_repo", "is_commit_id", "is_plain_name", "online", "open_repo",
           "upload_pack", "variables"]

GIT_URL_SCHEMES = ("https", "ssh", "file")
INDEX_URL_SCHEMES = ("https", "file")  # a package index: never plain http, where hashes and wheels could be swapped
# The upload-pack envcheck runs for a local repository: it consents to the filtered, by-commit fetch. A constant.
FILE_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"

SOURCE = ("git 2.39.5 on the build machine (`git help config`, `git help --config`) and git's upstream "
          "Documentation/config/*.adoc at 2.55 (git/git 1a3e64c); the commands envcheck runs are rev-parse, config, "
          "status, ls-tree, cat-file, for-each-ref, rev-list, init, remote, fetch, sparse-checkout, checkout, branch, "
          "hash-object and bundle")


@dataclass(frozen=True)
class Setting:
    """One git setting that names a command (or decides whether one runs), as envcheck treats it.

    key: git's name; `<name>` is a part the configuration chooses (a driver, a remote, a URL, a protocol).
    value: what envcheck sets it to for every git call; None: left alone, and `reason` says why nothing runs.
    when: for a `<name>` key, the variable whose presence in the configuration calls for it (the key's own when
    empty: a key that is not configured cannot run, and some must not be given a value unasked: an empty
    remote.<name>.vcs is a helper named '', which refuses every fetch from that remote)."""

    key: str
    value: Optional[str]
    reason: str
    when: str = ""

    @property
    def trigger(self) -> str:
        """The key whose presence calls for this setting (itself, or its section's `when` variable)."""
        return f"{self.key.rpartition('.')[0]}.{self.when}" if self.when else self.key


_NOT_RUN = "envcheck never runs "
SETTINGS: tuple[Setting, ...] = (
    # Run by the commands envcheck runs: each gets a value that runs nothing.
    Setting("core.fsmonitor", "false", "`git status` runs it (or starts git's fsmonitor daemon)"),
    Setting("core.hooksPath", "/dev/null", "no hook is found there: post-checkout, reference-transaction, "
            "post-index-change, pre-auto-gc, ... (the hooks in .git/hooks included)"),
    Setting("core.sshCommand", "ssh", "fetch runs it for ssh:// (the caller's GIT_SSH_COMMAND still wins; the "
            "caller's GIT_SSH is put here instead of ssh)"),
    Setting("ssh.variant", "auto", "how the ssh command's arguments are written: from its name, not the repository"),
    Setting("core.askPass", "", "fetch runs it for a password (GIT_ASKPASS is empty too)"),
    Setting("core.gitProxy", "", "fetch runs it for git:// (refused by protocol.allow anyway); the first value "
            "configured wins, so the empty GIT_PROXY_COMMAND is what turns it off"),
    Setting("core.alternateRefsCommand", "", "fetch runs it for each repository in objects/info/alternates"),
    Setting("core.pager", "cat", "GIT_PAGER=cat wins anyway, over pager.<cmd> too"),
    Setting("core.editor", ":", "an editor, for a message (GIT_EDITOR=: too)"),
    Setting("sequence.editor", ":", "an editor, for a rebase list"),
    Setting("credential.helper", "", "fetch runs helpers for https; the empty value given last clears every helper "
            "before it, credential.<url>.helper included (git applies every matching credential entry in order)"),
    Setting("credential.<name>.helper", "", "a helper for URLs matching <name>: emptied by name as well"),
    Setting("diff.external", "", "a diff program; envcheck's commands print no diff (GIT_EXTERNAL_DIFF is left out)"),
    Setting("diff.<name>.command", "", "a diff driver's program, chosen by .gitattributes"),
    Setting("diff.<name>.textconv", "", "a diff driver's converter, chosen by .gitattributes"),
    Setting("merge.<name>.driver", "", "a merge driver, chosen by .gitattributes"),
    Setting("filter.<name>.clean", "", "`git status` and hash-object run it on work-tree files, chosen by "
            ".gitattributes (a submodule's too, which is why status does not recurse: --ignore-submodules=dirty)"),
    Setting("filter.<name>.smudge", "", "checkout runs it on every file it writes"),
    Setting("filter.<name>.process", "", "the long-running form of clean and smudge"),
    Setting("filter.<name>.required", "false", "so that an emptied filter is not an error"),
    Setting("remote.<name>.vcs", "", "a remote helper program (git-remote-<vcs>, ext among them); empty: refused"),
    Setting("protocol.allow", "never", "ext::, git://, plain http:// and any other transport are refused, also "
            "where url.<base>.insteadOf rewrites a URL to one"),
    Setting("protocol.<name>.allow", "never", "a repository's protocol.ext.allow=always would outrank "
            "protocol.allow; refused by name"),
    Setting("protocol.https.allow", "always", "the three transports a fetch may use; only where envcheck means to "
            "fetch (gitsafe.online), never elsewhere: doctor and every other git call fetch nothing"),
    Setting("protocol.ssh.allow", "always", "as above"),
    Setting("protocol.file.allow", "always", "as above"),
    Setting("submodule.recurse", "false", "checkout and branch would recurse into submodules, whose own drivers "
            "and remotes are not read here"),
    Setting("fetch.recurseSubmodules", "false", "fetch would run in submodules (envcheck also passes "
            "--no-recurse-submodules, which outranks submodule.<name>.fetchRecurseSubmodules)"),
    Setting("submodule.propagateBranches", "false", "`git branch` would recurse into submodules"),
    Setting("status.submoduleSummary", "false", "`git status` would run `git submodule summary`"),
    Setting("gc.auto", "0", "fetch starts `git gc --auto` or maintenance in the background, a process envcheck "
            "does not wait for, which reads the configuration again (gc.recentObjectsHook is a command)"),
    Setting("maintenance.auto", "false", "as above"),
    Setting("hook.<name>.enabled", "false", "git 2.5x runs hooks named in the configuration "
            "(hook.<name>.command), which core.hooksPath does not reach", when="command"),
    Setting("http.saveCookies", "false", "fetch would write cookies to http.cookieFile: a file of the "
            "configuration's choosing, written by envcheck (root in CI)"),
    Setting("http.cookieFile", "", "fetch would send a file's cookies to the server"),
    Setting("http.<name>.saveCookies", "false", "per-URL form of http.saveCookies, which outranks it"),
    Setting("http.<name>.cookieFile", "", "per-URL form of http.cookieFile"),
    Setting("promisor.acceptFromServer", "none", "git 2.49+: a server could name remotes to fetch missing "
            "objects from"),
    # Left alone: the reason says why none of them runs.
    Setting("remote.<name>.uploadpack", None, "the program a fetch runs, and git takes its first value, so no "
            "setting outranks a repository's: every fetch envcheck starts names its own --upload-pack, git's own "
            "fetch of a missing object (a partial clone) is refused wherever envcheck does not mean to fetch "
            "(protocol.allow=never), and fix moves no partial clone whose remote names an upload-pack of its own"),
    Setting("include.path", None, "not a command: it pulls in another file, which `git config --list` reads too, "
            "so what it sets is neutralised here like the rest"),
    Setting("includeIf.<name>.path", None, "as include.path; a condition (onbranch:, hasconfig:) can change "
            "between two calls, so the configuration is read again before each"),
    Setting("core.worktree", None, "not a command but where the work tree is: doctor says so when it is not the "
            "checkout's folder, fix refuses such a checkout"),
    Setting("init.templateDir", None, "git init copies hooks and a config from it: envcheck runs `git init "
            "--template=`, which copies nothing (GIT_TEMPLATE_DIR is left out)"),
    Setting("url.<name>.insteadOf", None, "not a command but a redirect: the transport it leads to must be allowed "
            "(protocol.*), and a fetch is by commit id, so a redirect can fail it but not change what it checks out"),
    Setting("pager.<name>", None, "GIT_PAGER=cat outranks it, and git starts no pager without a terminal"),
    Setting("alias.<name>", None, "an alias never shadows a git command, and envcheck runs git's own commands"),
    Setting("uploadpack.packObjectsHook", None, "git reads it from system and global configuration and the "
            "command line only, never from a repository: the machine owner's own"),
    Setting("remote.<name>.receivepack", None, _NOT_RUN + "push (and, like uploadpack, git takes its first value)"),
    Setting("receive.procReceiveRefs", None, _NOT_RUN + "receive-pack"),
    Setting("submodule.<name>.fetchRecurseSubmodules", None, "envcheck's --no-recurse-submodules outranks it"),
    Setting("http.proxy", None, "not a command but a proxy URL: it sees where a fetch goes; TLS still checks the "
            "server, and the commit id what is fetched"),
    Setting("remote.<name>.proxy", None, "as http.proxy"),
    Setting("submodule.<name>.update", None, _NOT_RUN + "`git submodule update`, the only reader of `!command`"),
    Setting("gc.recentObjectsHook", None, "git 2.42+, for gc and repack only: gc.auto=0 and maintenance.auto=false"),
    Setting("fetch.bundleURI", None, "git 2.42+: a URL to fetch a bundle from first, not a command"),
    Setting("gpg.program", None, _NOT_RUN + "a command that signs or verifies (commit -S, tag -s, verify-commit, "
            "log --show-signature, merge --verify-signatures)"),
    Setting("gpg.<name>.program", None, "as gpg.program"),
    Setting("gpg.ssh.defaultKeyCommand", None, "as gpg.program"),
    Setting("interactive.diffFilter", None, _NOT_RUN + "`git add -p`"),
    Setting("diff.tool", None, _NOT_RUN + "`git difftool`"),
    Setting("difftool.<name>.cmd", None, _NOT_RUN + "`git difftool`"),
    Setting("merge.tool", None, _NOT_RUN + "`git mergetool`"),
    Setting("mergetool.<name>.cmd", None, _NOT_RUN + "`git mergetool`"),
    Setting("trailer.<name>.command", None, _NOT_RUN + "`git interpret-trailers` or `commit --trailer`"),
    Setting("trailer.<name>.cmd", None, "as trailer.<name>.command"),
    Setting("web.browser", None, _NOT_RUN + "`git help --web` or `git web--browse`"),
    Setting("browser.<name>.cmd", None, "as web.browser"),
    Setting("browser.<name>.path", None, "as web.browser"),
    Setting("help.browser", None, "as web.browser"),
    Setting("man.viewer", None, _NOT_RUN + "`git help`"),
    Setting("man.<name>.cmd", None, "as man.viewer"),
    Setting("instaweb.httpd", None, _NOT_RUN + "`git instaweb`"),
    Setting("instaweb.browser", None, "as instaweb.httpd"),
    Setting("guitool.<name>.cmd", None, _NOT_RUN + "`git gui`"),
    Setting("sendemail.smtpServer", None, _NOT_RUN + "`git send-email` (a path here is a program)"),
    Setting("sendemail.toCmd", None, "as sendemail.smtpServer"),
    Setting("sendemail.ccCmd", None, "as sendemail.smtpServer"),
    Setting("sendemail.headerCmd", None, "as sendemail.smtpServer"),
    Setting("sendemail.sendmailCmd", None, "as sendemail.smtpServer"),
    Setting("imap.tunnel", None, _NOT_RUN + "`git imap-send`"),
)

# The caller's variables git keeps; every other GIT_* variable is left out of git's environment: the ones that
# select a repository or what git reads (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY,
# GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_COMMON_DIR, GIT_NAMESPACE, GIT_CONFIG, GIT_CEILING_DIRECTORIES, ...), the ones
# that name a program or a folder of programs (GIT_EXEC_PATH, GIT_EXTERNAL_DIFF, GIT_PROXY_COMMAND, GIT_TEMPLATE_DIR),
# the ones that outrank envcheck's settings (GIT_CONFIG_PARAMETERS, GIT_ALLOW_PROTOCOL), the traces that write files
# or print headers (GIT_TRACE*, GIT_CURL_VERBOSE), and GIT_SSL_NO_VERIFY: a fetch checks its server.
KEPT_VARIABLES: tuple[tuple[str, str], ...] = (
    ("GIT_SSH_COMMAND", "how the caller reaches an ssh:// --cutlass-url (a deploy key in CI); a repository cannot set it"),
    ("GIT_SSH", "as GIT_SSH_COMMAND (put in core.sshCommand, which would outrank it)"),
    ("GIT_SSH_VARIANT", "the argument style of the caller's ssh"),
    ("GIT_SSL_CAINFO", "how the caller reaches an https:// URL: its certificate authority"),
    ("GIT_SSL_CAPATH", "as GIT_SSL_CAINFO"),
    ("GIT_SSL_CERT", "a client certificate"),
    ("GIT_SSL_KEY", "its key"),
    ("GIT_SSL_CERT_PASSWORD_PROTECTED", "as GIT_SSL_CERT"),
    ("GIT_SSL_CIPHER_LIST", "TLS settings"),
    ("GIT_SSL_VERSION", "TLS settings"),
    ("GIT_HTTP_PROXY_AUTHMETHOD", "the caller's proxy"),
    ("GIT_HTTP_USER_AGENT", "what a server or proxy lets through"),
    ("GIT_HTTP_LOW_SPEED_LIMIT", "when a slow transfer is given up"),
    ("GIT_HTTP_LOW_SPEED_TIME", "as GIT_HTTP_LOW_SPEED_LIMIT"),
    ("GIT_CONFIG_GLOBAL", "which of the caller's own configuration files git reads: whatever they name is "
     "neutralised like a repository's (SETTINGS outrank every file, and names are read from every scope)"),
    ("GIT_CONFIG_SYSTEM", "as GIT_CONFIG_GLOBAL"),
    ("GIT_CONFIG_NOSYSTEM", "as GIT_CONFIG_GLOBAL"),
    ("GIT_CONFIG_COUNT", "the caller's own settings, given before envcheck's, which outrank them (with "
     "GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n); GIT_CONFIG_PARAMETERS is left out: git ranks it above these"),
    ("GIT_AUTHOR_NAME", "an identity; envcheck commits nothing"),
    ("GIT_AUTHOR_EMAIL", "as GIT_AUTHOR_NAME"),
    ("GIT_COMMITTER_NAME", "as GIT_AUTHOR_NAME"),
    ("GIT_COMMITTER_EMAIL", "as GIT_AUTHOR_NAME"),
)
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
# The <name> settings, as patterns of the keys `git config --list` prints (section and variable in lower case).
_NAMED = tuple((re.compile(re.escape(s.trigger.lower()).replace("<name>", "(?P<name>.+)")), s.key, s.value)
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
    folder = Path(repo_dir)
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
            found = pattern.fullmatch(lower)
            if found:  # the name as configured (git keeps its case), the rest in SETTINGS' spelling
                start, end = found.span("name")
                named = template.replace("<name>", key[start:end])
                if named.lower() not in fixed:
                    pairs[named] = neutral
    return list(pairs.items())


def environment(
    repo_dir: Optional[str | Path] = None, base: Optional[Mapping[str, str]] = None,
    config: Optional[tuple[tuple[str, str], ...]] = None, *, offline: bool = False,
) -> dict[str, str]:
    """The variables to add to git's environment so that nothing configured in `repo_dir` (or by the caller) runs.

    config: repo_dir's settings when the caller has read them already (`configured`); else they are read here.
    offline: allow no transport at all: git fetches nothing, not even a partial clone's missing object."""
    base = os.environ if base is None else base
    if config is None:
        config = configured(repo_dir, base) if repo_dir is not None else ()
    ssh = shlex.quote(base["GIT_SSH"]) if base.get("GIT_SSH") else "ssh"
    pairs = [(key, ssh if key == "core.sshCommand" else
              "never" if offline and key.startswith("protocol.") else value) for key, value in _FIXED]
    pairs += _named(config)
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

        def execute(self, command, *args, **kwargs):  # noqa: ANN001 - GitPython's signature
            forget_caller_repository(os.environ)
            self._environment.clear()  # nothing left from the call before (GIT_NO_LAZY_FETCH, a setting gone)
            self.update_environment(**environment(self._working_dir, offline=not self.online))
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
def online(repo) -> Iterator[None]:
    """Inside, repo's git calls may fetch (https, ssh, file); everywhere else every transport is refused. git
    fetches a partial clone's missing object on its own, with the remote's own remote.<name>.uploadpack, which no
    setting outranks (git takes its first value): only where envcheck means to fetch may that happen, and its
    callers see to that upload-pack first. A persistent process GitPython started keeps what it started with."""
    repo.git.online = True
    try:
        yield
    finally:
        repo.git.online = False


def open_repo(path: str | Path):
    """A GitPython Repo of this folder itself (never one above it) whose every git call runs with environment(),
    offline (see online())."""
    gitpython()
    return _hardened()[1](path)


def init_repo(path: str | Path, *, bare: bool = False):
    """`git init` of a new, empty folder (ours), hardened like every other call, and with no template."""
    gitpython()
    Path(path).mkdir(parents=True, exist_ok=True)
    _hardened()[0]().execute(["git", "init", "--quiet", "--template=", *(["--bare"] if bare else []), str(path)])
    return open_repo(path)


_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


def is_commit_id(text: Optional[str]) -> bool:
    """40 hex digits."""
    return bool(text) and bool(_SHA.fullmatch(text))


def is_plain_name(text: Optional[str]) -> bool:
    """A branch or remote name git may get as an argument: letters, digits, ._/-, not option-like, no `..`."""
    return bool(text) and bool(_REF.fullmatch(text)) and ".." not in text


def check_git_values(branch: str, commit: str, subdir: str) -> None:
    """A branch, a commit and a folder that reach git as arguments: a branch name, 40 hex digits, a relative path.
    The policy checks them when it is read, a bundle's manifest when it is opened; checked again where git runs."""
    if not is_commit_id(commit):
        raise ValueError(f"not a full commit id: {commit!r}")
    if not is_plain_name(branch):
        raise ValueError(f"not a branch name: {branch!r}")
    if not subdir or subdir.startswith(("/", "-")) or ".." in Path(subdir).parts:
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
