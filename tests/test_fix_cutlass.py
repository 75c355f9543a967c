"""The CUTLASS fetch with GitPython on real git repositories: shallow, blob-filtered, sparse; clean-only moves; undo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import PINNED, git

from envcheck.cutlass_fetch import CheckoutRefused, fetch, read_state
from envcheck.errors import UsageError
from envcheck.fix.undo import restore
from envcheck.gather.checkout import read_checkout
from envcheck.gitsafe import checked_url

SUBDIR = "python/cutlass_api"
MIRROR = Path("/work/.mirror/NVIDIA+cutlass/repo")


def head(repo: Path) -> str:
    return git("rev-parse", "HEAD", cwd=repo)


def test_a_fresh_fetch_is_shallow_blob_filtered_and_sparse(cutlass_repo, tmp_path):
    commit = head(cutlass_repo)
    dest = tmp_path / "cache" / "cutlass"
    progress = []
    result = fetch(dest, str(cutlass_repo), "cutlass_api", commit, SUBDIR, progress=lambda m, f: progress.append(m))
    assert result.action == "cloned" and result.commit == commit and progress
    assert head(dest) == commit and git("branch", "--show-current", cwd=dest) == "cutlass_api"
    assert (dest / ".git" / "shallow").exists()
    assert git("config", "remote.origin.partialclonefilter", cwd=dest) == "blob:none"
    assert git("config", "--get", "--type=bool", "core.sparseCheckout", cwd=dest) == "true"
    assert (dest / SUBDIR / "pyproject.toml").is_file()
    assert not (dest / "include").exists()  # outside the sparse cone
    checkout = read_checkout(str(dest), "--cutlass-dir", SUBDIR, "cutlass_api")
    assert checkout.is_cutlass and checkout.shallow and checkout.sparse and not checkout.dirty
    assert not list(tmp_path.glob("cache/*partial*"))
    # idempotent
    assert fetch(dest, str(cutlass_repo), "cutlass_api", commit, SUBDIR).action == "already there"


def test_a_leftover_from_a_killed_fetch_is_cleared(cutlass_repo, tmp_path):
    leftover = tmp_path / "cutlass.envcheck-partial"
    (leftover / ".git").mkdir(parents=True)
    result = fetch(tmp_path / "cutlass", cutlass_repo.as_uri(), "cutlass_api", head(cutlass_repo), SUBDIR)
    assert result.action == "cloned" and not leftover.exists()


def test_the_pinned_commit_not_the_branch_head_is_fetched(cutlass_repo, tmp_path):
    pinned = head(cutlass_repo)
    (cutlass_repo / "later.txt").write_text("later\n")
    git("add", "-A", cwd=cutlass_repo)
    git("commit", "-q", "-m", "later", cwd=cutlass_repo)
    dest = tmp_path / "cutlass"
    fetch(dest, str(cutlass_repo), "cutlass_api", pinned, SUBDIR)
    assert head(dest) == pinned


def test_a_clean_checkout_is_moved_and_undo_puts_it_back(cutlass_repo, tmp_path):
    old = git("rev-parse", "HEAD~1", cwd=cutlass_repo)
    new = head(cutlass_repo)
    dest = tmp_path / "mine"
    git("clone", "-q", str(cutlass_repo), str(dest), cwd=tmp_path)
    git("checkout", "-q", "-b", "work", old, cwd=dest)
    before = read_state(dest, "cutlass_api")
    result = fetch(dest, str(cutlass_repo), "cutlass_api", new, SUBDIR)
    assert result.action == "moved" and head(dest) == new
    assert not (dest / ".git" / "shallow").exists()  # a full clone stays full
    restore(before, "cutlass_api")
    assert head(dest) == old and git("branch", "--show-current", cwd=dest) == "work"
    assert read_state(dest, "cutlass_api") == before


def test_a_dirty_checkout_is_never_touched(cutlass_repo, tmp_path):
    old = git("rev-parse", "HEAD~1", cwd=cutlass_repo)
    dest = tmp_path / "mine"
    git("clone", "-q", str(cutlass_repo), str(dest), cwd=tmp_path)
    git("checkout", "-q", old, cwd=dest)
    (dest / "include" / "cutlass" / "cutlass.h").write_text("// my change\n")
    with pytest.raises(CheckoutRefused, match="not committed"):
        fetch(dest, str(cutlass_repo), "cutlass_api", head(cutlass_repo), SUBDIR)
    assert head(dest) == old and "my change" in (dest / "include" / "cutlass" / "cutlass.h").read_text()


def test_a_folder_that_is_not_a_cutlass_checkout_is_refused(cutlass_repo, tmp_path):
    other = tmp_path / "project"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    with pytest.raises(CheckoutRefused, match="not a git checkout"):
        fetch(other, str(cutlass_repo), "cutlass_api", head(cutlass_repo), SUBDIR)
    git("init", "-q", cwd=other)
    git("add", "-A", cwd=other)
    git("commit", "-q", "-m", "x", cwd=other)
    with pytest.raises(CheckoutRefused, match="not CUTLASS"):
        fetch(other, str(cutlass_repo), "cutlass_api", head(cutlass_repo), SUBDIR)
    assert (other / "notes.txt").read_text() == "mine\n"


def test_undo_removes_a_checkout_envcheck_made_only_while_clean(cutlass_repo, tmp_path):
    dest = tmp_path / "cutlass"
    before = read_state(dest, "cutlass_api")
    assert not before.exists
    fetch(dest, str(cutlass_repo), "cutlass_api", head(cutlass_repo), SUBDIR)
    (dest / SUBDIR / "scratch.py").write_text("x = 1\n")
    assert "kept" in restore(before, "cutlass_api") and (dest / SUBDIR / "scratch.py").exists()
    (dest / SUBDIR / "scratch.py").unlink()
    assert "removed" in restore(before, "cutlass_api")
    assert not dest.exists()


@pytest.mark.parametrize("url", ["ext::sh -c touch% /tmp/pwned", "--upload-pack=touch /tmp/pwned", "http://x/cutlass",
                                 "git://x/cutlass", "https://x/cutlass\n-c", ""])
def test_only_https_ssh_and_file_urls_reach_git(url):
    with pytest.raises(UsageError, match="--cutlass-url"):
        checked_url(url)


def test_a_local_path_becomes_a_file_url(cutlass_repo):
    assert checked_url(str(cutlass_repo)) == cutlass_repo.as_uri()
    assert checked_url("https://github.com/NVIDIA/cutlass") == "https://github.com/NVIDIA/cutlass"
    assert checked_url("ssh://git@github.com/NVIDIA/cutlass") == "ssh://git@github.com/NVIDIA/cutlass"


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs the local NVIDIA/cutlass mirror")
def test_the_real_cutlass_mirror_moves_under_5_mb(tmp_path):
    result = fetch(tmp_path / "cutlass", str(MIRROR), "cutlass_api", PINNED, SUBDIR)
    assert result.commit == PINNED and (tmp_path / "cutlass" / SUBDIR / "cutlass_api" / "__init__.py").is_file()
    assert result.bytes_received < 5 * 1000 * 1000
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(tmp_path / "cutlass" / ".git" / "objects") for f in fs)
    assert size < 5 * 1000 * 1000
