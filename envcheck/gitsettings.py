"""The audit behind gitsafe: every git setting that names a command (or decides whether one runs), with what
envcheck sets it to for each git process and why, and the caller's GIT_* variables git may still see.

Data only: gitsafe.py turns SETTINGS into the GIT_CONFIG_* variables of every git call, and leaves every GIT_*
variable outside KEPT_VARIABLES out of git's environment. tests/test_gitsafe.py checks SETTINGS against the
settings git itself lists, so a new git's command-naming setting is noticed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["SOURCE", "Setting", "SETTINGS", "KEPT_VARIABLES"]

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
