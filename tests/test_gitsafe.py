"""git run by envcheck runs nothing a checkout names and reads the checkout it was asked about: every git setting
that names a command planted in a real repository (and in a real submodule), every GIT_* variable a hook sets, and
folder names with control characters. Real repositories, real git, real processes; a marker file proves a command
ran."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import git, python312

from envcheck import gitsafe
from envcheck.cutlass_fetch import CheckoutRefused, fetch, read_state
from envcheck.fix.undo import restore
from envcheck.gather.checkout import read_checkout
from envcheck.redact import Redactor

RECIPE_ID = "torch-2.11-nvgemm"  # the profile with a CUTLASS checkout: doctor reads it only there

SUBDIR = "python/cutlass_api"
BRANCH = "cutlass_api"


def head(repo: Path) -> str:
    return git("rev-parse", "HEAD", cwd=repo)


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def script(path: Path, marker: Path) -> str:
    """An executable that leaves marker when it runs (and prints nothing), for settings that name a program."""
    path.write_text(f"#!/bin/sh\ntouch {marker}\n")
    path.chmod(0o755)
    return str(path)


def envcheck_cli(*args: str, env=None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True, timeout=180,
                          env=env or dict(os.environ), cwd=cwd, check=False)


@pytest.fixture
def theirs(cutlass_repo, tmp_path):
    """A checkout of the CUTLASS-shaped repository on a branch of its own, one commit behind the pinned one and
    without it (so that fix must fetch), with a folder for markers."""
    markers = tmp_path / "markers"
    markers.mkdir()
    dest = tmp_path / "theirs"
    git("clone", "-q", "--no-local", "--single-branch", "--branch", "main", str(cutlass_repo), str(dest), cwd=tmp_path)
    git("checkout", "-q", "-b", "theirs", cwd=dest)
    return dest, markers


def exercise(dest: Path, source: Path) -> list[str]:
    """What envcheck does to a checkout: doctor's read, fix's fetch (a move), undo. A refusal or a failed fetch
    is an answer; code that runs is not. Returns what was refused."""
    refused = []
    try:
        read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    except (RuntimeError, ValueError, OSError) as exc:
        refused.append(f"read: {exc}")
    before = read_state(dest, BRANCH)
    git_error = gitsafe.gitpython().GitCommandError
    try:
        fetch(dest, str(source), BRANCH, head(source), SUBDIR)
    except (CheckoutRefused, git_error, OSError) as exc:
        refused.append(f"fetch: {exc}")
    restore(before, BRANCH, commit=head(source))
    return refused


# ---------------------------------------------------------------------------------------------------------------
# 1. A submodule's own configuration


@pytest.fixture
def with_submodule(theirs, tmp_path):
    """theirs with a submodule `sub` whose .gitattributes sends every file through filter `evil`, defined in the
    submodule's own config (clean and smudge leave markers), a remote whose upload-pack leaves one, a change in the
    submodule's work tree (so that status must clean it), and a superproject that asks for recursion."""
    dest, markers = theirs
    library = tmp_path / "library"
    library.mkdir()
    (library / "lib.txt").write_text("lib\n")
    git("init", "-q", "-b", "main", cwd=library)
    git("add", "-A", cwd=library)
    git("commit", "-q", "-m", "lib", cwd=library)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub", cwd=dest)
    git("commit", "-q", "-m", "submodule", cwd=dest)
    sub = dest / "sub"
    (sub / ".gitattributes").write_text("* filter=evil\n")
    git("add", ".gitattributes", cwd=sub)
    git("commit", "-q", "-m", "attributes", cwd=sub)
    git("add", "sub", cwd=dest)
    git("commit", "-q", "-m", "submodule moved", cwd=dest)
    git("config", "filter.evil.clean", f"touch {markers / 'sub-clean'}; cat", cwd=sub)
    git("config", "filter.evil.smudge", f"touch {markers / 'sub-smudge'}; cat", cwd=sub)
    git("config", "remote.origin.uploadpack", f"touch {markers / 'sub-uploadpack'}; git-upload-pack", cwd=sub)
    (sub / "lib.txt").write_text("changed in the submodule\n")
    # .gitattributes as committed but an hour older: only its time differs from the index, so status must read it
    # through its filter, whatever the clock (a file changed in the second the index was written may be read or not).
    old = os.stat(sub / ".gitattributes").st_mtime - 3600
    os.utime(sub / ".gitattributes", (old, old))
    git("config", "submodule.recurse", "true", cwd=dest)
    git("config", "fetch.recurseSubmodules", "yes", cwd=dest)
    assert subprocess.run(["git", "-C", str(dest), "status", "--porcelain"], capture_output=True, check=True).returncode == 0
    assert ran(markers) == ["sub-clean"]  # plain git runs the submodule's driver: the trap is real
    (markers / "sub-clean").unlink()
    return dest, markers


def test_a_submodules_filter_driver_does_not_run_when_doctor_reads_the_checkout(with_submodule):
    dest, markers = with_submodule
    checkout = read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    assert checkout.is_repo and checkout.commit == head(dest)
    done = envcheck_cli("doctor", "--no-gpu", "--json", "--profile", RECIPE_ID, "--cutlass-dir", str(dest))
    assert done.returncode in (0, 1), done.stderr
    assert ran(markers) == []


def test_fix_and_undo_do_not_enter_a_submodule(with_submodule, cutlass_repo):
    dest, markers = with_submodule
    before = read_state(dest, BRANCH)
    try:
        result = fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    finally:
        assert ran(markers) == []  # first, whatever fetch did
    assert result.action == "moved" and head(dest) == head(cutlass_repo)
    said = restore(before, BRANCH, commit=head(cutlass_repo))
    assert "kept" in said and "sub/" in said  # the submodule's folder stayed behind, with work in it: not moved back
    assert ran(markers) == []
    assert (dest / "sub" / "lib.txt").read_text() == "changed in the submodule\n"  # its work is left alone


# ---------------------------------------------------------------------------------------------------------------
# 2. Every setting that names a command, planted where git would use it


class _Server(http.server.BaseHTTPRequestHandler):
    """An http server that asks for a password and sets a cookie; being asked at all leaves a marker."""

    marker: Path

    def do_GET(self):  # noqa: N802 - http.server's name
        self.marker.touch()
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="x"')
        self.send_header("Set-Cookie", "session=evil; Path=/")
        self.end_headers()

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def http_server(tmp_path):
    handler = type("Handler", (_Server,), {"marker": tmp_path / "markers" / "http-request"})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def _alternate_refs_command(dest, markers, tmp_path, source, server):
    other = tmp_path / "other"  # an alternate without the pinned commit, so that fetch asks the remote
    git("clone", "-q", "--no-local", "--single-branch", "--branch", "main", str(source), str(other), cwd=tmp_path)
    (dest / ".git" / "objects" / "info" / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    git("config", "core.alternateRefsCommand", f"touch {markers / 'alternate-refs'}; true", cwd=dest)


def _partial_clone_upload_pack(dest, markers, tmp_path, source, server):
    """A blob-filtered sparse clone: include/cutlass/cutlass.h has no blob, so a read of it fetches one, and the
    fetch git starts itself for it runs remote.origin.uploadpack."""
    shutil.rmtree(dest)
    git("clone", "-q", "--filter=blob:none", "--sparse", "--single-branch", "--branch", "main",
        "--upload-pack", gitsafe.FILE_UPLOAD_PACK, source.as_uri(), str(dest), cwd=tmp_path)
    git("checkout", "-q", "-b", "theirs", cwd=dest)
    git("config", "remote.origin.uploadpack", f"touch {markers / 'lazy-upload-pack'}; git-upload-pack", cwd=dest)


def _ext_through_insteadof(dest, markers, tmp_path, source, server):
    git("config", "protocol.ext.allow", "always", cwd=dest)
    git("config", f"url.ext::sh -c touch% {markers / 'ext'}% #.insteadOf", "file://", cwd=dest)


def _git_proxy(dest, markers, tmp_path, source, server):
    git("config", "protocol.git.allow", "always", cwd=dest)
    git("config", "url.git://127.0.0.1/.insteadOf", "file://", cwd=dest)
    git("config", "core.gitProxy", script(tmp_path / "proxy", markers / "git-proxy"), cwd=dest)


def _http_credentials_and_cookies(dest, markers, tmp_path, source, server):
    git("config", "protocol.http.allow", "always", cwd=dest)
    git("config", f"url.{server}.insteadOf", "file://", cwd=dest)
    git("config", "credential.helper", f"!touch {markers / 'credential-helper'}; true", cwd=dest)
    git("config", f"credential.{server}.helper", f"!touch {markers / 'credential-url-helper'}; true", cwd=dest)
    git("config", "core.askPass", script(tmp_path / "askpass", markers / "askpass"), cwd=dest)
    git("config", "http.saveCookies", "true", cwd=dest)
    git("config", "http.cookieFile", str(markers / "cookies"), cwd=dest)
    git("config", f"http.{server}.saveCookies", "true", cwd=dest)


def _remote_vcs(dest, markers, tmp_path, source, server):
    """remote.origin.vcs=ext: git-remote-ext runs the remote's URL as a command; a URL of file:///... is the
    relative path file:/..., so an executable of that name in the working folder (ignored) is what runs."""
    git("config", "remote.origin.url", source.as_uri(), cwd=dest)  # the remote fix fetches from, by name
    git("config", "remote.origin.vcs", "ext", cwd=dest)
    git("config", "protocol.ext.allow", "always", cwd=dest)
    planted = dest / f"file:{source}"
    planted.parent.mkdir(parents=True)
    script(planted, markers / "remote-vcs")
    with open(dest / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write("/file:\n")


def _remote_named_like_an_option(dest, markers, tmp_path, source, server):
    git("config", "remote.origin.url", "file:///nowhere", cwd=dest)
    with open(dest / ".git" / "config", "a") as config:
        config.write(f'[remote "--upload-pack=touch {markers / "remote-name"}; git-upload-pack"]\n'
                     f"\turl = {source.as_uri()}\n")


def _drivers_of_every_kind(dest, markers, tmp_path, source, server):
    """Drivers named in .gitattributes, one of them in a file that an include pulls in, another only once HEAD is
    on the pinned branch (includeIf onbranch:), for what undo runs after fix moved HEAD there."""
    (dest / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n*.h filter=included\n*.py filter=late\n")
    git("add", ".gitattributes", cwd=dest)
    git("commit", "-q", "-m", "attributes", cwd=dest)
    for key in ("filter.evil.clean", "filter.evil.smudge", "filter.evil.process", "diff.evil.command",
                "diff.evil.textconv", "merge.evil.driver", "diff.external", "core.fsmonitor", "core.pager",
                "pager.status", "pager.checkout", "core.editor", "sequence.editor", "gpg.program",
                "interactive.diffFilter"):
        git("config", key, f"touch {markers / key}; cat", cwd=dest)
    git("config", "filter.evil.required", "true", cwd=dest)
    (tmp_path / "included.cfg").write_text(f'[filter "included"]\n\tsmudge = touch {markers / "included"}; cat\n'
                                           f'\tclean = touch {markers / "included"}; cat\n')
    git("config", "include.path", str(tmp_path / "included.cfg"), cwd=dest)
    (tmp_path / "late.cfg").write_text(f'[filter "late"]\n\tsmudge = touch {markers / "onbranch"}; cat\n'
                                       f'\tclean = touch {markers / "onbranch"}; cat\n')
    git("config", f"includeIf.onbranch:{BRANCH}.path", str(tmp_path / "late.cfg"), cwd=dest)
    for name in ("hooks", "evil-hooks"):
        hooks = dest / ".git" / name
        hooks.mkdir(exist_ok=True)
        for hook in ("post-checkout", "reference-transaction", "pre-auto-gc", "post-index-change", "fsmonitor-watchman"):
            script(hooks / hook, markers / f"{hook}-{name}")
    git("config", "core.hooksPath", str(dest / ".git" / "evil-hooks"), cwd=dest)
    git("config", "gc.auto", "1", cwd=dest)  # any loose object makes fetch start gc --auto (pre-auto-gc)


PLANTED = [_alternate_refs_command, _partial_clone_upload_pack, _ext_through_insteadof, _git_proxy,
           _http_credentials_and_cookies, _remote_vcs, _remote_named_like_an_option, _drivers_of_every_kind]


@pytest.mark.parametrize("plant", PLANTED, ids=lambda f: f.__name__.strip("_"))
def test_a_setting_that_names_a_command_runs_nothing(plant, theirs, tmp_path, cutlass_repo, http_server):
    dest, markers = theirs
    plant(dest, markers, tmp_path, cutlass_repo, http_server)
    refused = exercise(dest, cutlass_repo)
    assert ran(markers) == [], refused


def test_a_remote_named_like_an_option_is_not_used_and_the_fetch_still_works(theirs, tmp_path, cutlass_repo):
    dest, markers = theirs
    _remote_named_like_an_option(dest, markers, tmp_path, cutlass_repo, None)
    assert fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR).action == "moved"
    assert ran(markers) == []


def test_undo_gives_git_no_option_like_name_from_a_record(theirs, cutlass_repo):
    """A snapshot's commit and branch reach git's command line: an option-like one is refused, the checkout kept."""
    dest, markers = theirs
    before = read_state(dest, BRANCH)
    assert fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR).action == "moved"
    for forged in (replace(before, branch="--orphan=evil"), replace(before, commit="--detach"),
                   replace(before, branch="-f")):
        said = restore(forged, BRANCH, commit=head(cutlass_repo))
        assert "kept as it is" in said and head(dest) == head(cutlass_repo)
    assert "back at" in restore(before, BRANCH, commit=head(cutlass_repo)) and head(dest) == before.commit


def test_a_blob_filtered_checkout_is_read_offline_and_still_known_as_cutlass(theirs, tmp_path, cutlass_repo):
    dest, markers = theirs
    _partial_clone_upload_pack(dest, markers, tmp_path, cutlass_repo, None)
    git("config", "remote.origin.uploadpack", "false", cwd=dest)  # any fetch doctor started would fail loudly
    objects = sorted(str(p) for p in (dest / ".git" / "objects").rglob("*"))
    checkout = read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    assert checkout.is_cutlass and not checkout.dirty  # from the commit's trees: no blob was needed
    assert sorted(str(p) for p in (dest / ".git" / "objects").rglob("*")) == objects  # nothing was fetched


def test_a_partial_clone_envcheck_made_still_moves_to_a_new_commit(cutlass_repo, tmp_path):
    """Its remote's upload-pack is envcheck's own: the checkout may fetch the blobs it lacks."""
    dest = tmp_path / "cutlass"
    old = git("rev-parse", "main", cwd=cutlass_repo)
    assert fetch(dest, str(cutlass_repo), BRANCH, old, SUBDIR).action == "cloned"
    result = fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert result.action == "moved" and head(dest) == head(cutlass_repo)
    assert (dest / SUBDIR / "README.md").read_text() == "cutlass_api\n"  # a blob of the new commit, fetched


def test_a_work_tree_elsewhere_is_refused_not_read(theirs, tmp_path, cutlass_repo):
    dest, markers = theirs
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git("config", "core.worktree", str(elsewhere), cwd=dest)
    with pytest.raises(ValueError, match="core.worktree"):
        read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    with pytest.raises(CheckoutRefused, match="not a git checkout"):
        fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert list(elsewhere.iterdir()) == []


def test_a_template_plants_no_hook_or_config_in_the_checkout_fix_makes(cutlass_repo, tmp_path, monkeypatch):
    template = tmp_path / "template"
    (template / "hooks").mkdir(parents=True)
    script(template / "hooks" / "post-checkout", tmp_path / "hook-ran")
    (template / "config").write_text("[core]\n\tfsmonitor = touch /nonexistent/x\n")
    global_config = tmp_path / "gitconfig"
    global_config.write_text(f"[init]\n\ttemplateDir = {template}\n")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    dest = tmp_path / "cutlass"
    fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert not (dest / ".git" / "hooks").exists()
    assert "fsmonitor" not in (dest / ".git" / "config").read_text()


def test_an_upload_pack_from_another_configuration_file_is_not_run_by_the_fresh_checkout(cutlass_repo, tmp_path,
                                                                                       monkeypatch):
    """git takes remote.origin.uploadpack's first value, and the global file comes before the repository's."""
    markers = tmp_path / "markers"
    markers.mkdir()
    global_config = tmp_path / "gitconfig"
    global_config.write_text(f'[remote "origin"]\n\tuploadpack = touch {markers / "global-upload-pack"}; git-upload-pack\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    with pytest.raises(CheckoutRefused, match="upload-pack program of its own"):
        fetch(tmp_path / "cutlass", str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert ran(markers) == [] and not (tmp_path / "cutlass").exists()


# The settings of `git help --config` (this machine's git) whose names say "command" in some way but are not one.
NOT_COMMANDS = {
    "advice.ignoredhook", "advice.waitingforeditor", "color.branch.worktree", "color.pager", "completion.commands",
    "core.fsmonitorhookversion", "diff.<name>.binary", "diff.<name>.cachetextconv", "diff.<name>.wordregex",
    "diff.<name>.xfuncname", "fsmonitor.allowremote", "fsmonitor.socketdir", "gitcvs.dbdriver", "http.proxyauthmethod",
    "http.proxysslcainfo", "http.proxysslcert", "http.proxysslcertpasswordprotected", "http.proxysslkey",
    "merge.<name>.name", "merge.<name>.recursive", "notes.rewrite.<name>", "push.recursesubmodules",
    "push.useforceifincludes", "rebase.abbreviatecommands", "remote.<name>.proxyauthmethod",
    "sendemail.smtpserveroption", "sendemail.smtpserverport", "stash.showincludeuntracked",
    "uploadpack.allowanysha1inwant", "uploadpack.allowfilter", "uploadpack.allowreachablesha1inwant",
    "uploadpack.allowrefinwant", "uploadpack.allowtipsha1inwant", "uploadpack.hiderefs", "uploadpack.keepalive",
    "uploadpackfilter.<name>.allow", "uploadpackfilter.allow", "uploadpackfilter.tree.maxdepth",
    "url.<name>.pushinsteadof",
}
COMMANDISH = re.compile(r"cmd|command|program|helper|hook|editor|pager|proxy|driver|textconv|browser|tunnel|askpass|"
                        r"uploadpack|receivepack|vcs|fsmonitor|external|difffilter|viewer|\.tool$|smtpserver|"
                        r"templatedir|worktree$|include|insteadof|\.allow$|recurse", re.IGNORECASE)


def test_the_list_covers_every_setting_of_the_installed_git_that_names_a_command():
    def name(key: str) -> str:
        return re.sub(r"<[^>]+>", "<name>", key).lower()

    listed = subprocess.run(["git", "help", "--config"], capture_output=True, text=True, check=True).stdout.split()
    ours = {name(s.key) for s in gitsafe.SETTINGS}
    missing = sorted(k for k in listed if "." in k and COMMANDISH.search(k) and name(k) not in ours | NOT_COMMANDS)
    assert missing == []
    assert all(s.reason for s in gitsafe.SETTINGS) and len({s.key for s in gitsafe.SETTINGS}) == len(gitsafe.SETTINGS)
    assert "2.39" in gitsafe.SOURCE


def test_each_value_is_what_git_then_reads(tmp_path):
    """Every value reaches git as given, ranked above a repository's own (fixed names and names it chose)."""
    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    planted = {"core.alternateRefsCommand": "touch x", "remote.o.url": "file:///x", "remote.o.vcs": "ext",
               "remote.o.uploadpack": "touch x", "protocol.ext.allow": "always", "protocol.file.allow": "never",
               "credential.https://h.helper": "!x", "http.https://h.saveCookies": "true", "filter.a.b.smudge": "x",
               "hook.mine.command": "touch x", "hook.mine.event": "post-checkout"}
    for key, value in planted.items():
        git("config", key, value, cwd=repo)
    env = gitsafe.full_environment(repo)

    def read(key: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "config", "--get", key], capture_output=True, text=True,
                              env=env, check=False).stdout.strip()

    assert read("core.alternateRefsCommand") == "" and read("remote.o.vcs") == "" and read("filter.a.b.smudge") == ""
    assert read("remote.o.uploadpack") == "touch x"  # git takes its first value: not set, refused where it runs
    assert read("protocol.ext.allow") == "never" and read("protocol.file.allow") == "always"
    assert read("credential.https://h.helper") == "" and read("http.https://h.savecookies") == "false"
    assert read("hook.mine.enabled") == "false"
    assert read("gc.auto") == "0" and read("submodule.recurse") == "false"
    offline = gitsafe.full_environment(repo, offline=True)
    assert {offline[k.replace("KEY", "VALUE")] for k, v in offline.items()
            if k.startswith("GIT_CONFIG_KEY_") and v.startswith("protocol.")} == {"never"}


def test_an_unreadable_configuration_stops_git_instead_of_running_it(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (tmp_path / "broken.cfg").write_text("[filter\n")
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[include]\n\tpath = {tmp_path / 'broken.cfg'}\n")
    with pytest.raises(gitsafe.UnreadableConfig, match="cannot read the git configuration"):
        gitsafe.environment(repo)


# ---------------------------------------------------------------------------------------------------------------
# 3. The GIT_* variables of a hook (or of anyone) do not redirect envcheck's git


@pytest.fixture
def two_checkouts(cutlass_repo, tmp_path):
    """mine: the checkout envcheck is asked about (one commit behind the pinned one); other: another repository,
    with a change, that the variables point at."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    git("clone", "-q", "--no-local", "--single-branch", "--branch", "main", str(cutlass_repo), str(mine), cwd=tmp_path)
    git("clone", "-q", str(cutlass_repo), str(other), cwd=tmp_path)
    (other / "other.txt").write_text("other\n")
    git("add", "-A", cwd=other)
    git("commit", "-q", "-m", "other", cwd=other)
    (other / SUBDIR / "pyproject.toml").write_text("# changed\n")
    markers = tmp_path / "markers"
    markers.mkdir()
    evil_exec = tmp_path / "exec-path"
    evil_exec.mkdir()
    script(evil_exec / "git", markers / "exec-path-git")  # a `git` first on the PATH git gives its children
    script(evil_exec / "git-upload-pack", markers / "exec-path-upload-pack")
    hook_env = {
        "GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other), "GIT_INDEX_FILE": str(other / ".git" / "index"),
        "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects"), "GIT_COMMON_DIR": str(other / ".git"),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(other / ".git" / "objects"), "GIT_NAMESPACE": "elsewhere",
        "GIT_CONFIG": str(other / ".git" / "config"), "GIT_CEILING_DIRECTORIES": str(tmp_path),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='touch {markers / 'config-parameters'}'",
        "GIT_EXEC_PATH": str(evil_exec), "GIT_EXTERNAL_DIFF": f"touch {markers / 'external-diff'}",
        "GIT_ALLOW_PROTOCOL": "ext", "GIT_TRACE": str(markers / "trace"), "GIT_TRACE2_EVENT": str(markers / "trace2"),
        "GIT_TEMPLATE_DIR": str(tmp_path), "GIT_PREFIX": "python/",
    }
    return mine, other, markers, hook_env


def test_doctor_reads_the_checkout_it_was_asked_about_whatever_git_variables_say(two_checkouts):
    mine, other, markers, hook_env = two_checkouts
    done = envcheck_cli("doctor", "--no-gpu", "--json", "--profile", RECIPE_ID, "--cutlass-dir", str(mine),
                        env={**os.environ, **hook_env})
    assert done.returncode in (0, 1), done.stderr
    checkout = json.loads(done.stdout)["facts"]["checkout"]
    assert checkout["path"] == Redactor()(str(mine)) and checkout["commit"] == head(mine) != head(other)
    assert checkout["dirty_files"] == [] and checkout["is_repo"]
    assert ran(markers) == []


def test_fix_and_undo_change_the_checkout_they_were_asked_about_whatever_git_variables_say(two_checkouts, cutlass_repo):
    mine, other, markers, hook_env = two_checkouts
    old, other_head = head(mine), head(other)
    program = (f"from envcheck.cutlass_fetch import fetch, read_state\n"
               f"from envcheck.fix.undo import restore\n"
               f"before = read_state({str(mine)!r}, {BRANCH!r})\n"
               f"print(fetch({str(mine)!r}, {str(cutlass_repo)!r}, {BRANCH!r}, {head(cutlass_repo)!r}, {SUBDIR!r}).action)\n"
               f"print(restore(before, {BRANCH!r}, commit={head(cutlass_repo)!r}))\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **hook_env}, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "moved" and "back at" in done.stdout
    assert head(mine) == old and head(other) == other_head
    assert git("status", "--porcelain", cwd=other) == "M python/cutlass_api/pyproject.toml"
    assert ran(markers) == []


def test_gitpython_in_this_process_is_not_redirected_either(two_checkouts, monkeypatch):
    mine, other, markers, hook_env = two_checkouts
    for name, value in hook_env.items():
        monkeypatch.setenv(name, value)
    state = read_state(mine, BRANCH)
    assert state.commit == head(mine) and state.branch == "main" and state.dirty_files == ()
    assert "GIT_DIR" not in os.environ and ran(markers) == []


def test_what_a_user_needs_for_ssh_and_tls_stays():
    base = {"GIT_SSH_COMMAND": "ssh -i key", "GIT_SSL_CAINFO": "/ca.pem", "GIT_DIR": "/x", "GIT_INDEX_FILE": "/y",
            "GIT_CONFIG_PARAMETERS": "'a.b'='c'", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name",
            "GIT_CONFIG_VALUE_0": "me", "PATH": "/bin", "HOME": "/home/me"}
    env = gitsafe.full_environment(None, base=base)
    assert {k: env[k] for k in ("GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_CONFIG_KEY_0", "PATH", "HOME")} == {
        "GIT_SSH_COMMAND": "ssh -i key", "GIT_SSL_CAINFO": "/ca.pem", "GIT_CONFIG_KEY_0": "user.name", "PATH": "/bin",
        "HOME": "/home/me"}
    assert not {"GIT_DIR", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS"} & set(env)
    assert gitsafe.environment(None, base={"GIT_SSH": "/opt/my ssh"})["GIT_CONFIG_VALUE_2"] == "'/opt/my ssh'"


# ---------------------------------------------------------------------------------------------------------------
# 4. A folder whose name holds a control character


@pytest.mark.parametrize("name", ["a\nb", "a\x1b[2Jb", "a\rb"], ids=["newline", "escape", "return"])
def test_doctor_says_a_folder_with_a_control_character_cannot_be_the_checkout(tmp_path, name, cutlass_repo):
    folder = tmp_path / name
    git("clone", "-q", str(cutlass_repo), str(folder), cwd=tmp_path)
    done = envcheck_cli("doctor", "--no-gpu", "--json", "--profile", RECIPE_ID, "--cutlass-dir", str(folder))
    assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
    finding = next(f for f in json.loads(done.stdout)["checks"] if f["id"] == "cutlass.checkout")
    assert finding["status"] == "error" and "control character" in finding["found"] and "--cutlass-dir" in finding["found"]


@pytest.mark.slow  # a real venv of Python 3.12 with the recipe installed (fetch's own refusal, below, is quick)
@pytest.mark.skipif(python312() is None, reason="needs a Python >= 3.12 for cutlass_api")
def test_fix_refuses_a_cutlass_dir_with_a_control_character_before_any_change(tmp_path, wheelhouse, cutlass_repo):
    from test_fix_apply import broken_env, freeze, profile

    python = broken_env(tmp_path, wheelhouse)
    before = freeze(python)
    folder = tmp_path / "new\nline" / "cutlass"
    for extra in (["--dry-run"], ["--yes"]):
        done = envcheck_cli("fix", "--python", str(python), "--policy", str(profile(tmp_path, cutlass_repo)),
                            "--cutlass-dir", str(folder), "--no-index", "--find-links", str(wheelhouse), "--no-gpu",
                            *extra)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "--cutlass-dir" in done.stderr and "control character" in done.stderr and "Traceback" not in done.stderr
    assert freeze(python) == before and not (tmp_path / "new\nline").exists()


def test_fetch_itself_refuses_such_a_folder(tmp_path, cutlass_repo):
    with pytest.raises(CheckoutRefused, match="control character"):
        fetch(tmp_path / "a\nb", str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert not (tmp_path / "a\nb").exists()
