"""The policy: the built-in profile reads as the verified facts, and every bad value is named with its file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.errors import UsageError
from envcheck.policy import DEFAULT_PROFILE, PolicyError, builtin_profiles, load, load_builtin, resolve


def test_the_default_profile_holds_the_published_recipe(policy):
    assert policy.id == DEFAULT_PROFILE and policy.backend == "NVGEMM"
    assert policy.python.contains("3.12") and not policy.python.contains("3.11.9")
    assert policy.torch.contains("2.11.0") and not policy.torch.contains("2.10.1")
    assert policy.toolkit.contains("13.1.80") and not policy.toolkit.contains("13.0.88")
    assert policy.driver_cuda == Version("13.1") and str(policy.driver_floor) == "590.44.1"
    assert policy.cutedsl.specifier.contains("4.3.5") and not policy.cutedsl.specifier.contains("4.4.0")
    assert not policy.cutedsl.specifier.contains("4.2.1")
    assert policy.cutlass.commit == "e594def95e1c73ad9d5517ab28b80d691127dd1c" and policy.cutlass.branch == "cutlass_api"
    assert {p.name: str(p.specifier) for p in policy.packages}["apache-tvm-ffi"] == "==0.1.7"
    assert {p.name: p.level for p in policy.packages}["nvidia-matmul-heuristics"] == "recommended"
    assert [f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus] == ["8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0"]


def _write(tmp_path: Path, text: str, name: str = "profile.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


EXTENDS = f'extends = "{DEFAULT_PROFILE}"\n'


@pytest.mark.parametrize("body, key, expected", [
    ('[python]\nversion = ">=three"\n', "python.version", "version specifier"),
    ('[cutedsl]\nversion = 435\n', "cutedsl.version", "version specifier"),
    ('[cutlass]\nurl = "http://github.com/NVIDIA/cutlass"\n', "cutlass.url", "https, ssh or file"),
    ('[cutlass]\nurl = "-uhttps://evil"\n', "cutlass.url", "https, ssh or file"),
    ('[cutlass]\ncommit = "e594def95"\n', "cutlass.commit", "40-character"),
    ('[cutlass]\nbranch = "--upload-pack=touch /tmp/x"\n', "cutlass.branch", "branch name"),
    ('[cutlass]\nsubdir = "../../etc"\n', "cutlass.subdir", "relative path"),
    ('[torch]\nrequirement = "torch @ https://example.com/torch.whl"\n', "torch.requirement", "requirement"),
    ('[torch]\nindex-url = "ftp://mirror"\n', "torch.index-url", "URL"),
    ('[cuda]\ndriver-cuda = "thirteen"\n', "cuda.driver-cuda", "CUDA version"),
    ('[cuda]\ntoolkit-level = "sometimes"\n', "cuda.toolkit-level", "'required' or 'recommended'"),
    ('[[packages]]\nname = "--index-url=evil"\n', "packages[3].name", "distribution name"),
    ('[[packages]]\nname = "ok"\nlevel = "optional"\n', "packages[3].level", "'required' or 'recommended'"),
    ('[[packages]]\nname = "ok"\ncolour = "red"\n', "packages[3].colour", "no such key"),
    ('[[gpu]]\ncapability = "9"\nstatus = "pass"\nkernels = "x"\n', "gpu[7].capability", "compute capability"),
    ('[[gpu]]\ncapability = "9.0"\nstatus = "great"\nkernels = "x"\n', "gpu[3].status", "'pass', 'warn' or 'fail'"),
    ('[[conflicts]]\nwhy = "neither"\n', "conflicts[2].name", "exactly one of"),
    ('surprise = 1\n', "surprise", "no such key"),
    ('schema = 2\n', "schema", "schema 1"),
])
def test_a_bad_value_names_the_file_the_key_and_what_was_expected(tmp_path, body, key, expected):
    path = _write(tmp_path, EXTENDS + body)
    with pytest.raises(PolicyError) as caught:
        load(path)
    message = str(caught.value)
    assert str(path) in message and f"'{key}'" in message and expected in message, message


def test_missing_required_table_is_named(tmp_path):
    with pytest.raises(PolicyError, match=r"key 'python' = \(missing\)"):
        load(_write(tmp_path, 'schema = 1\nid = "x"\ntitle = "t"\nbackend = "NVGEMM"\n'))


def test_invalid_toml_and_unreadable_file(tmp_path):
    with pytest.raises(UsageError, match="not valid TOML"):
        load(_write(tmp_path, "this is = = not toml"))
    with pytest.raises(UsageError, match="policy file .*absent.toml: cannot read"):
        load(tmp_path / "absent.toml")


def test_extends_overrides_only_what_it_names(tmp_path, policy):
    path = _write(tmp_path, EXTENDS + 'id = "site"\n[cutedsl]\nversion = "==4.3.4"\n[cutlass]\nurl = "file:///mirror/cutlass.git"\n')
    custom = load(path)
    assert custom.id == "site" and str(custom.cutedsl.specifier) == "==4.3.4"
    assert custom.cutlass.url == "file:///mirror/cutlass.git" and custom.cutlass.commit == policy.cutlass.commit
    assert custom.packages == policy.packages


def test_extends_a_relative_file(tmp_path):
    _write(tmp_path, EXTENDS + 'id = "base"\n', "base.toml")
    child = _write(tmp_path, 'extends = "base.toml"\ntitle = "child"\n', "child.toml")
    assert load(child).id == "base" and load(child).title == "child"
    loop = _write(tmp_path, 'extends = "loop.toml"\n', "loop.toml")
    with pytest.raises(PolicyError, match="without cycles"):
        load(loop)


def test_pyproject_tool_envcheck_is_used_from_the_project_directory(tmp_path):
    (tmp_path / ".git").mkdir()  # a repository: its root's pyproject.toml is the project's, from any folder in it
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n\n[tool.envcheck]\n' + EXTENDS + 'id = "app-policy"\n')
    nested = tmp_path / "src" / "app"
    nested.mkdir(parents=True)
    assert resolve(cwd=nested).id == "app-policy"
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\n' + EXTENDS + '[tool.envcheck.python]\nversion = ">=3.x"\n')
    with pytest.raises(PolicyError, match=r"pyproject.toml \[tool.envcheck\]: key 'python.version'"):
        resolve(cwd=nested)


def test_no_pyproject_means_the_default(tmp_path):
    assert resolve(cwd=tmp_path).id == DEFAULT_PROFILE


def test_flag_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\n' + EXTENDS + 'id = "from-pyproject"\n')
    flag = _write(tmp_path, EXTENDS + 'id = "from-flag"\n', "flag.toml")
    assert resolve(flag, cwd=tmp_path).id == "from-flag"


def test_builtin_profiles_load_by_id():
    assert DEFAULT_PROFILE in builtin_profiles()
    assert load(Path(DEFAULT_PROFILE)).id == DEFAULT_PROFILE
    with pytest.raises(PolicyError, match="built-in profiles"):
        load_builtin("no-such-profile")


def test_a_later_stack_is_a_new_profile_not_code(tmp_path):
    """The upstream direction (STACK.md section 6): cutlass.operators with DSL >= 4.8, described as data alone."""
    later = _write(tmp_path, EXTENDS + '''id = "torch-next-operators"
[cutedsl]
version = ">=4.8"
why = "cutlass.operators 0.3.0 needs DSL 4.8"
[cutlass]
distribution = "nvidia-cutlass-operators"
module = "cutlass"
subdir = "python/cutlass_operators"
branch = "main"
commit = "0123456789abcdef0123456789abcdef01234567"
''')
    profile = load(later)
    assert profile.cutedsl.specifier.contains("4.8.1") and profile.cutlass.distribution == "nvidia-cutlass-operators"
