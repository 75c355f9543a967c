"""Every URL envcheck hands to git or pip is checked one way (envcheck.gitsafe): git's from a flag or a profile,
pip's index from a flag, a profile or lock; a table over every boundary."""

from __future__ import annotations

import pytest

from envcheck.errors import UsageError
from envcheck.fix.pip import sources_from_flags
from envcheck.gitsafe import checked_index_url, checked_url
from envcheck.commands.lock import run_lock
from envcheck.profile import PolicyError, load

GOOD_GIT = ["https://github.com/NVIDIA/cutlass", "ssh://git@github.com/NVIDIA/cutlass", "file:///srv/mirror/cutlass"]
GOOD_INDEX = ["https://download.pytorch.org/whl/cu130", "file:///srv/wheels/simple"]
BAD_BOTH = ["", "-https://x", "https://x/simple\n--no-deps", "https://x y", "ftp://x", "javascript:alert(1)",
            "https://-oProxyCommand=x/y", "https://-u@host/x", "ext::sh -c x", "git://host/x"]


@pytest.mark.parametrize("url", GOOD_GIT)
def test_git_urls_pass(url):
    assert checked_url(url) == url


@pytest.mark.parametrize("url", GOOD_INDEX)
def test_index_urls_pass(url):
    assert checked_index_url(url) == url


@pytest.mark.parametrize("url", BAD_BOTH + ["ssh://-oProxyCommand=x/y", "ssh:///path", "http://github.com/x"])
def test_bad_git_urls_are_refused_by_flag(url):
    with pytest.raises(UsageError, match="--cutlass-url"):
        checked_url(url)


@pytest.mark.parametrize("url", BAD_BOTH + ["ssh://host/simple", "http://pypi.example/simple"])
def test_bad_index_urls_are_refused_everywhere_the_same(url, tmp_path):
    with pytest.raises(UsageError, match="--index-url"):
        checked_index_url(url)
    with pytest.raises(UsageError, match="--index-url"):
        sources_from_flags(index_url=url)
    with pytest.raises(UsageError, match="--index-url"):
        run_lock(tmp_path / "pylock.toml", python=None, index_url=url)


@pytest.mark.parametrize("url", ["ssh://host/simple", "http://pypi.example/simple", "-https://x"])
def test_a_profile_torch_index_is_checked_as_pip_would_need_it(tmp_path, url):
    profile = tmp_path / "p.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n[torch]\nindex-url = "{url}"\n')
    with pytest.raises(PolicyError, match="torch.index-url"):
        load(profile)
