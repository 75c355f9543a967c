"""What a tool run as root must never do: delete work on undo, run code a checkout's git config names, or import
modules from the user's working directory into the target interpreter. Real repositories, real processes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from conftest import flat, git

from envcheck.cutlass_fetch import fetch, read_state
from envcheck.fix.byproducts import record_byproducts
from envcheck.errors import UsageError
from envcheck.fix.apply import run_command
from envcheck.fix.undo import restore
from envcheck.gather.checkout import read_checkout
from envcheck.gather.interpreter import gather_interpreter
from envcheck.gitsafe import checked_url, environment

SUBDIR = "python/cutlass_api"
BRANCH = "cutlass_api"


def head(repo: Path) -> str:
    return git("rev-parse", "HEAD", cwd=repo)


# ---------------------------------------------------------------------------------------------------------------
# 1. Undo never deletes work


@pytest.fixture
def fetched(cutlass_repo, tmp_path):
    """A checkout fix fetched, with the state recorded before (absent)."""
    dest = tmp_path / "cache" / "cutlass"
    before = read_state(dest, BRANCH)
    fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    return dest, before


def _commit(dest: Path) -> None:
    (dest / SUBDIR / "mine.py").write_text("x = 1\n")
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "my work", cwd=dest)


def _stash(dest: Path) -> None:
    (dest / SUBDIR / "pyproject.toml").write_text("# my edit\n", encoding="utf-8")
    git("stash", "-q", cwd=dest)


def _ignored_results(dest: Path) -> None:
    with open(dest / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("*.csv\n")
    (dest / SUBDIR / "results.csv").write_text("m,n,k,tflops\n")


def _untracked(dest: Path) -> None:
    (dest / SUBDIR / "notes.txt").write_text("mine\n")


def _tag(dest: Path) -> None:
    git("tag", "my-tag", cwd=dest)


def _commit_then_reset(dest: Path) -> None:  # the commit lives on only in the reflog
    _commit(dest)
    git("reset", "-q", "--hard", "HEAD~1", cwd=dest)


def _other_branch(dest: Path) -> None:
    git("branch", "experiment", cwd=dest)


def _install(dest: Path) -> None:  # what fix's `pip install -e` leaves, recorded by fix as it ends the step
    (dest / SUBDIR / "cutlass_api.egg-info").mkdir()
    (dest / SUBDIR / "cutlass_api.egg-info" / "PKG-INFO").write_text("Name: cutlass_api\n")
    (dest / SUBDIR / "build" / "lib").mkdir(parents=True)
    (dest / SUBDIR / "build" / "lib" / "x.py").write_text("x = 1\n")
    record_byproducts(dest)


def _byproducts_only(dest: Path) -> None:  # what fix's install and running the package leave: not work
    _install(dest)
    (dest / SUBDIR / "cutlass_api" / "__pycache__").mkdir()
    (dest / SUBDIR / "cutlass_api" / "__pycache__" / "__init__.cpython-312.pyc").write_bytes(b"\0")


def _mine_in_build(dest: Path) -> None:  # the user's own file where the install writes: work, not a byproduct
    _install(dest)
    (dest / SUBDIR / "build" / "my-results.txt").write_text("mine\n")


def _mine_in_egg_info(dest: Path) -> None:
    _install(dest)
    (dest / SUBDIR / "cutlass_api.egg-info" / "NOTES").write_text("mine\n")


def _byproduct_changed_since(dest: Path) -> None:  # a file fix's install wrote, edited since
    _install(dest)
    (dest / SUBDIR / "build" / "lib" / "x.py").write_text("x = 2  # my change\n")


def _byproducts_without_record(dest: Path) -> None:  # no record of fix's install: nobody can tell whose they are
    (dest / SUBDIR / "cutlass_api.egg-info").mkdir()
    (dest / SUBDIR / "cutlass_api.egg-info" / "PKG-INFO").write_text("Name: cutlass_api\n")


@pytest.mark.parametrize(
    "touch, kept",
    [
        (None, False),
        (_byproducts_only, False),
        (_mine_in_build, True),
        (_mine_in_egg_info, True),
        (_byproduct_changed_since, True),
        (_byproducts_without_record, True),
        (_commit, True),
        (_stash, True),
        (_ignored_results, True),
        (_untracked, True),
        (_tag, True),
        (_commit_then_reset, True),
        (_other_branch, True),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_undo_removes_a_fetched_checkout_only_if_nothing_touched_it(fetched, touch, kept):
    dest, before = fetched
    if touch is not None:
        touch(dest)
    files_before = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    said = restore(before, BRANCH)
    if kept:
        assert dest.is_dir() and "kept" in said and "because" in said
        assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == files_before
        named = {_mine_in_build: "build/my-results.txt", _mine_in_egg_info: "cutlass_api.egg-info/NOTES",
                 _byproduct_changed_since: "build/lib/x.py", _byproducts_without_record: "egg-info/PKG-INFO"}
        assert named.get(touch, "") in said
    else:
        assert not dest.exists() and "removed" in said


def test_undo_does_not_move_a_checkout_the_user_committed_on_since(cutlass_repo, tmp_path):
    old = git("rev-parse", "HEAD~1", cwd=cutlass_repo)
    new = head(cutlass_repo)
    dest = tmp_path / "mine"
    git("clone", "-q", str(cutlass_repo), str(dest), cwd=tmp_path)
    git("checkout", "-q", "-b", "work", old, cwd=dest)
    before = read_state(dest, BRANCH)
    fetch(dest, str(cutlass_repo), BRANCH, new, SUBDIR)
    _commit(dest)
    mine = head(dest)
    said = restore(before, BRANCH, commit=new)
    assert "kept" in said and head(dest) == mine
    assert git("rev-parse", BRANCH, cwd=dest) == mine


# ---------------------------------------------------------------------------------------------------------------
# 2. No git configuration or hook in a checkout runs code


def _hostile(repo: Path, marker_dir: Path) -> None:
    """Every executing setting the issue lists, each leaving its own marker file when it runs."""

    def run(name: str) -> str:
        return f"touch {marker_dir / name}"

    for key, name in [
        ("core.fsmonitor", "fsmonitor"),
        ("core.sshCommand", "sshcommand"),
        ("core.pager", "pager"),
        ("core.editor", "editor"),
        ("credential.helper", "!" + run("credential")),
        ("remote.origin.uploadpack", "uploadpack"),
        ("filter.evil.smudge", "smudge"),
        ("filter.evil.clean", "clean"),
        ("filter.evil.process", "process"),
        ("protocol.ext.allow", "always"),
        ("core.hooksPath", str(repo / ".git" / "evil-hooks")),
    ]:
        value = name if key in ("protocol.ext.allow", "core.hooksPath") or name.startswith("!") else run(name)
        git("config", key, value, cwd=repo)
    git("config", "filter.evil.required", "true", cwd=repo)
    for hooks in (repo / ".git" / "hooks", repo / ".git" / "evil-hooks"):
        hooks.mkdir(exist_ok=True)
        for hook in ("post-checkout", "reference-transaction", "pre-auto-gc", "post-index-change"):
            script = hooks / hook
            script.write_text(f"#!/bin/sh\ntouch {marker_dir / hook}-{hooks.name}\n")
            script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def hostile_checkout(cutlass_repo, tmp_path):
    markers = tmp_path / "markers"
    markers.mkdir()
    dest = tmp_path / "theirs"
    old = git("rev-parse", "HEAD~1", cwd=cutlass_repo)
    git("clone", "-q", str(cutlass_repo), str(dest), cwd=tmp_path)
    git("checkout", "-q", "-b", "theirs", old, cwd=dest)
    (dest / ".gitattributes").write_text("* filter=evil\n")  # every file checked out goes through the filter
    git("add", ".gitattributes", cwd=dest)
    git("commit", "-q", "-m", "attributes", cwd=dest)
    _hostile(dest, markers)  # from here on, any git that reads this config and obeys it leaves a marker
    return dest, markers


def test_reading_a_hostile_checkout_runs_nothing(hostile_checkout):
    dest, markers = hostile_checkout
    checkout = read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    assert checkout.is_repo and checkout.commit
    state = read_state(dest, BRANCH)
    assert state.is_repo
    assert sorted(p.name for p in markers.iterdir()) == []


def test_fix_and_undo_on_a_hostile_checkout_run_nothing(hostile_checkout, cutlass_repo):
    dest, markers = hostile_checkout
    before = read_state(dest, BRANCH)
    result = fetch(dest, str(cutlass_repo), BRANCH, head(cutlass_repo), SUBDIR)
    assert result.action == "moved" and head(dest) == head(cutlass_repo)
    restore(before, BRANCH, commit=head(cutlass_repo))
    assert head(dest) == before.commit
    assert sorted(p.name for p in markers.iterdir()) == []


def test_doctor_on_a_hostile_checkout_runs_nothing_in_any_format(hostile_checkout):
    dest, markers = hostile_checkout
    for args in (["--json"], [], ["--format", "markdown"]):
        subprocess.run(
            [sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--cutlass-dir", str(dest), *args],
            capture_output=True, text=True, timeout=120, check=False,
        )
    assert sorted(p.name for p in markers.iterdir()) == []


def test_the_environment_overrides_what_a_repository_configures(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    git("config", "core.fsmonitor", "touch /nonexistent/x", cwd=repo)
    git("config", "filter.a.b.smudge", "touch /nonexistent/y", cwd=repo)  # a driver name with a dot in it
    env = {**os.environ, **environment(repo)}
    def read(key):
        return subprocess.run(["git", "-C", str(repo), "config", "--get", key], capture_output=True, text=True,
                              env=env, check=False).stdout.strip()
    assert read("core.fsmonitor") == "false"
    assert read("filter.a.b.smudge") == ""
    assert read("protocol.ext.allow") == "" and read("protocol.allow") == "never"


def test_a_users_own_git_config_count_is_kept():
    env = environment(None, base={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "me"})
    assert "GIT_CONFIG_KEY_0" not in env and env["GIT_CONFIG_KEY_1"] == "core.fsmonitor"
    assert int(env["GIT_CONFIG_COUNT"]) > 1


@pytest.mark.parametrize("url", [
    "ssh://-oProxyCommand=touch%20/tmp/pwned/x", "ssh://git@-oProxyCommand=x/y", "ssh:///path-without-host",
    "ext::sh -c touch% /tmp/pwned", "-oProxyCommand=x", "file://-x/y",
])
def test_option_like_hosts_and_users_are_refused(url):
    with pytest.raises(UsageError, match="--cutlass-url"):
        checked_url(url)


def test_a_token_in_a_refused_url_is_not_echoed():
    with pytest.raises(UsageError) as refused:
        checked_url("http://user:s3cr3t-token@example.com/cutlass")
    assert "s3cr3t-token" not in str(refused.value)


# ---------------------------------------------------------------------------------------------------------------
# 3. Nothing from the working directory runs in the target interpreter

STDLIB_NAMES = ("ast", "json", "platform", "site", "importlib", "os", "sitecustomize", "usercustomize", "encodings",
                "subprocess", "re", "runpy", "pip")


@pytest.fixture
def hostile_cwd(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    markers = tmp_path / "ran"
    markers.mkdir()
    for name in STDLIB_NAMES:
        code = f"open({str(markers / name)!r}, 'w').close()\n"
        (folder / f"{name}.py").write_text(code)
    (folder / "pip").mkdir()  # `python -m pip` would run this package's __main__ from the working directory
    (folder / "pip" / "__init__.py").write_text(f"open({str(markers / 'pip-package')!r}, 'w').close()\n")
    (folder / "pip" / "__main__.py").write_text(f"open({str(markers / 'pip-main')!r}, 'w').close()\n")
    monkeypatch.chdir(folder)
    return folder, markers


def test_the_probe_imports_nothing_from_the_working_directory(hostile_cwd, tmp_path, monkeypatch):
    folder, markers = hostile_cwd
    extra = tmp_path / "on-pythonpath"
    extra.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(extra))
    interpreter = gather_interpreter(sys.executable)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert str(extra) in interpreter.sys_path and interpreter.pythonpath == str(extra)  # the .pth trap check's facts
    assert "" not in interpreter.sys_path and str(folder) not in interpreter.sys_path


def test_pip_runs_outside_the_working_directory(hostile_cwd):
    folder, markers = hostile_cwd
    log = StringIO()
    status = run_command([sys.executable, "-m", "pip", "--version"], log, lambda line: None)
    assert status == 0 and "pip " in log.getvalue()
    assert sorted(p.name for p in markers.iterdir()) == []


def test_doctor_and_fix_plan_name_the_policy_a_parent_pyproject_supplied(tmp_path):
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / ".git").mkdir()  # a parent's pyproject.toml is the project's only inside one repository
    (project / "pyproject.toml").write_text('[tool.envcheck]\nextends = "torch-2.11-nvgemm"\n')
    env = {**os.environ}
    doctor = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--json"], cwd=project / "sub",
                            capture_output=True, text=True, timeout=120, env=env, check=False)
    data = json.loads(doctor.stdout)
    assert data["policy_source"].endswith("pyproject.toml [tool.envcheck]")
    table = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu"], cwd=project / "sub",
                           capture_output=True, text=True, timeout=120, env=env, check=False)
    assert "pyproject.toml [tool.envcheck]" in flat(table.stdout)
    plan = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--dry-run", "--no-gpu"], cwd=project / "sub",
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert "pyproject.toml [tool.envcheck]" in flat(plan.stdout), plan.stdout + plan.stderr

