"""The policy: the built-in profile reads as the verified facts, and every bad value is named with its file and key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from packaging.version import Version

from envcheck.errors import UsageError
from envcheck.profile import DEFAULT_PROFILE, PolicyError, builtin_profiles, load, load_builtin, resolve


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
    assert [f"{g.capability[0]}.{g.capability[1]}" for g in policy.gpus] == ["8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "10.7",
                                                                                     "11.0", "12.0", "12.1"]


def test_every_rule_of_a_built_in_profile_names_its_source():
    """A verdict without its source is a reading nobody can check again (issue 17): every rule says where it comes
    from, a wheel's file and line or a run."""
    for name in builtin_profiles():
        built = load_builtin(name)
        rules = [("python", built.python_source), ("cutedsl", built.cutedsl.source), ("gpu-below", built.gpu_below.source)]
        rules += [(f"packages {r.name}", r.source) for r in built.packages]
        rules += [(f"conflicts {c.match}", c.source) for c in built.conflicts]
        rules += [(f"stand-ins {s.missing}", s.source) for s in built.stand_ins]
        rules += [(f"gpu {g.capability}", g.source) for g in built.gpus]
        rules += [(f"caveats {c.name}", c.source) for c in built.caveats]
        rules += [(f"python.by-torch {r.torch}", r.source) for r in built.python_by_torch]
        rules += [(f"gemm-ops {r.op}", r.source) for r in built.gemm_ops]
        rules += [(f"torch.frames {r.torch}", r.source) for r in built.torch_frames]
        rules += [(f"runtime-beside {b.when}", b.source) for r in built.packages for b in r.runtime_beside]
        target = built.compile_target
        rules += [("compile-target", target.source)] + [(f"compile-target {r.capability}", r.source) for r in target.gpus] if target else []
        assert [what for what, source in rules if not source.strip()] == [], name


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
    ('[[packages]]\nname = "ok"\nlevel = "sometimes"\n', "packages[3].level", "'required', 'recommended' or 'optional'"),
    ('[[packages]]\nname = "ok"\ncolour = "red"\n', "packages[3].colour", "no such key"),
    ('[[gpu]]\ncapability = "9"\nstatus = "pass"\nkernels = "x"\n', "gpu[10].capability", "compute capability"),
    ('[[gpu]]\ncapability = "9.0"\nstatus = "great"\nkernels = "x"\n', "gpu[3].status", "'pass', 'warn' or 'fail'"),
    ('[[conflicts]]\nwhy = "neither"\n', "conflicts[2].name", "exactly one of"),
    # the keys of issue 17: sources, Python per torch, caveats, recipe-basis conflicts, per-version layouts and floors
    ('[python]\nsource = 1\n', "python.source", "a string"),
    ('[[python.by-torch]]\ntorch = "2.15"\nversion = ">=3.11"\n', "python.by-torch[0].torch", "torch version specifier"),
    # issue 29: the ops NVGEMM serves, and Inductor's frames by torch release
    ('[[gemm-ops]]\nop = "aten.addmm.default"\n', "gemm-ops[6].op", "an aten op's name"),
    ('[[gemm-ops]]\nop = "addmm"\ncapability = "10"\n', "gemm-ops[6].capability", "compute-capability specifier"),
    ('[[gemm-ops]]\nop = "addmm"\nkernels = "x"\n', "gemm-ops[6].kernels", "no such key"),
    ('[[torch.frames]]\ntorch = "2.13.0"\nframes = ["graph.py:1518"]\n', "torch.frames[0].frames", "a list of frames"),
    ('[[torch.frames]]\ntorch = "two"\nframes = []\n', "torch.frames[1].torch", "a torch release"),
    ('[[python.by-torch]]\ntorch = ">=2.15"\n', "python.by-torch[0].version", "(the key is required)"),
    ('[[python.by-torch]]\ntorch = ">=2.15"\nversion = ">=3.11"\nlevel = "x"\n', "python.by-torch[0].level", "no such key"),
    ('[[caveats]]\nname = "x"\ncapability = ">=10.0"\nstatus = "warn"\n', "caveats[0].text", "(the key is required)"),
    ('[[caveats]]\nname = "x"\ncapability = "ten"\nstatus = "warn"\ntext = "t"\n', "caveats[0].capability", "compute-capability specifier"),
    ('[[caveats]]\nname = "x"\ncapability = ">=10.0"\nstatus = "skip"\ntext = "t"\n', "caveats[0].status", "'pass', 'warn' or 'fail'"),
    ('[[caveats]]\nname = "x y"\ncapability = ">=10.0"\nstatus = "warn"\ntext = "t"\n', "caveats[0].name", "a name"),
    ('[[caveats]]\nname = "x"\ncapability = ">=10.0"\ntorch = "new"\nstatus = "warn"\ntext = "t"\n', "caveats[0].torch", "torch version specifier"),
    ('[[conflicts]]\nname = "x"\nstatus = "warn"\nbasis = "recipe"\n', "conflicts[2].basis", "either 'status' or 'basis'"),
    ('[[conflicts]]\nname = "x"\nbasis = "recipe"\nruntime-on = "rubin"\n', "conflicts[2].runtime-on", "compute-capability specifier"),
    ('[cutedsl]\nmodule-dirs = { "<4.6" = "nvidia_cutlass_dsl/python_packages" }\n', "cutedsl.module-dirs", "version specifier -> such a list"),
    ('[cutedsl]\nmodule-dirs = { "four" = ["nvidia_cutlass_dsl/python_packages"] }\n', "cutedsl.module-dirs", "version specifier -> such a list"),
    ('[cutedsl]\nmodule-dirs = { "<4.6" = ["../up"] }\n', "cutedsl.module-dirs", "version specifier -> such a list"),
    ('[[packages]]\nname = "ok"\nruntime-beside = [{ when = "x>=1", version = ">=2", colour = 1 }]\n', "packages[3].runtime-beside", "a list of {when"),
    ('[[packages]]\nname = "ok"\nruntime-beside = [{ when = "x @ https://e/x.whl", version = ">=2" }]\n', "packages[3].runtime-beside", "a list of {when"),
    ('[[packages]]\nname = "ok"\nruntime-beside = [{ version = ">=2" }]\n', "packages[3].runtime-beside", "a list of {when"),
    ('mixed-cuda-exempt = [{ prefix = "nvidia-", version = 4 }]\n', "mixed-cuda-exempt", "{prefix = '...'"),
    ('mixed-cuda-exempt = [{ name = "nvidia-" }]\n', "mixed-cuda-exempt", "{prefix = '...'"),
    ('[[gpu]]\ncapability = "9.0"\nstatus = "pass"\nkernels = "x"\nremedy = 3\n', "gpu[3].remedy", "a string"),
    ('[gpu-below]\nsource = ["x"]\n', "gpu-below.source", "a string"),
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
    with pytest.raises(UsageError, match="profile file .*absent.toml: cannot read"):
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


@pytest.mark.parametrize("profile_id", sorted(builtin_profiles()))
def test_a_copy_of_a_built_in_profile_can_be_extended_by_its_file(tmp_path, profile_id):
    # A site's profile that extends its own copy of a built-in one: every key a built-in profile holds is a profile's.
    _write(tmp_path, builtin_profiles()[profile_id], "copy.toml")
    child = _write(tmp_path, 'extends = "copy.toml"\ntitle = "site"\n', "site.toml")
    assert load(child).title == "site" and load(child).compile_target == load_builtin(profile_id).compile_target


def test_pyproject_tool_envcheck_is_used_from_the_project_directory(tmp_path):
    (tmp_path / ".git").mkdir()  # a repository: its root's pyproject.toml is the project's, from any folder in it
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\n\n[tool.envcheck]\n' + EXTENDS + 'id = "app-policy"\n')
    nested = tmp_path / "src" / "app"
    nested.mkdir(parents=True)
    assert resolve(cwd=nested).id == "app-policy"
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\n' + EXTENDS + '[tool.envcheck.python]\nversion = ">=3.x"\n')
    with pytest.raises(PolicyError, match=r"pyproject.toml \[tool.envcheck\]: key 'python.version'"):
        resolve(cwd=nested)


def test_no_pyproject_means_a_built_in_profile(tmp_path):
    assert resolve(cwd=tmp_path).id in builtin_profiles()


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


# ---------------------------------------------------------------------------------------------------------------
# Which pyproject.toml is the project's: the repository the user is in, from folders nobody else can write


def _tree(base: Path, spec: dict) -> None:
    """Folders and files: 'a/b/' is a folder, 'a/.git' a folder named .git, 'a/.git=file' a .git file (a worktree)."""
    for name, text in spec.items():
        if name.endswith("/"):
            (base / name).mkdir(parents=True, exist_ok=True)
        elif name.endswith("=file"):
            (base / name[:-5]).parent.mkdir(parents=True, exist_ok=True)
            (base / name[:-5]).write_text("gitdir: /elsewhere\n")
        elif name.endswith(".git"):
            (base / name).mkdir(parents=True, exist_ok=True)
        else:
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text(text or "[tool.envcheck]\n")


def _need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file or folder to another user")


def _other_uid(path: Path) -> None:
    _need_root()
    os.chown(path, 54321, -1)


def _shared_group(path: Path) -> None:
    """Group-writable, in a group that is not the owner's own private group."""
    import grp

    _need_root()
    other = next(g.gr_gid for g in grp.getgrall() if g.gr_gid != os.getegid())
    os.chown(path, -1, other)
    path.chmod(0o664 if path.is_file() else 0o775)


# (tree, cwd, home, change: (path, how), expected pyproject.toml or None)
BOUNDARIES = [
    ("a subfolder of a repository", {"repo/.git": "", "repo/pyproject.toml": "", "repo/src/pkg/": ""},
     "repo/src/pkg", None, None, "repo/pyproject.toml"),
    ("the repository's root", {"repo/.git": "", "repo/pyproject.toml": ""}, "repo", None, None, "repo/pyproject.toml"),
    ("the nearest one inside the repository", {"repo/.git": "", "repo/pyproject.toml": "", "repo/sub/pyproject.toml": "",
     "repo/sub/x/": ""}, "repo/sub/x", None, None, "repo/sub/pyproject.toml"),
    ("a .git file (a worktree, a submodule) ends the walk", {"outer/.git": "", "outer/pyproject.toml": "",
     "outer/wt/.git=file": "", "outer/wt/src/": ""}, "outer/wt/src", None, None, None),
    ("no repository: the working folder's own", {"plain/pyproject.toml": ""}, "plain", None, None, "plain/pyproject.toml"),
    ("no repository: never a parent's", {"plain/pyproject.toml": "", "plain/job/sub/": ""}, "plain/job/sub", None, None, None),
    ("a parent above the repository's .git", {"outer/pyproject.toml": "", "outer/repo/.git": "", "outer/repo/src/": ""},
     "outer/repo/src", None, None, None),
    ("never above home: its parent is not read", {"above/.git": "", "above/pyproject.toml": "", "above/home/proj/": ""},
     "above/home/proj", "above/home", None, None),
    ("home itself may be the repository (dotfiles)", {"h/.git": "", "h/pyproject.toml": "", "h/proj/": ""},
     "h/proj", "h", None, "h/pyproject.toml"),
    ("a file owned by another user", {"repo/.git": "", "repo/pyproject.toml": ""}, "repo", None,
     ("repo/pyproject.toml", _other_uid), None),
    ("a folder owned by another user on the way", {"repo/.git": "", "repo/pyproject.toml": "", "repo/src/x/": ""},
     "repo/src/x", None, ("repo/src", _other_uid), None),
    ("a world-writable folder on the way", {"repo/.git": "", "repo/pyproject.toml": "", "repo/src/x/": ""},
     "repo/src/x", None, ("repo/src", lambda p: p.chmod(0o777)), None),
    ("a world-writable folder with the sticky bit (/tmp)", {"tmp/.git": "", "tmp/pyproject.toml": "", "tmp/job/": ""},
     "tmp/job", None, ("tmp", lambda p: p.chmod(0o1777)), None),
    ("the working folder itself world-writable", {"drop/pyproject.toml": ""}, "drop", None,
     ("drop", lambda p: p.chmod(0o777)), None),
    ("a world-writable file", {"repo/.git": "", "repo/pyproject.toml": ""}, "repo", None,
     ("repo/pyproject.toml", lambda p: p.chmod(0o666)), None),
    ("a file writable by a group of others", {"repo/.git": "", "repo/pyproject.toml": ""}, "repo", None,
     ("repo/pyproject.toml", _shared_group), None),
    ("a link, not a file", {"repo/.git": "", "elsewhere.toml": ""}, "repo", None,
     ("repo/pyproject.toml", lambda p: p.symlink_to(p.parent.parent / "elsewhere.toml")), None),
]


@pytest.mark.parametrize("tree, cwd, home, change, expected", [b[1:] for b in BOUNDARIES], ids=[b[0] for b in BOUNDARIES])
def test_which_pyproject_is_the_projects(tmp_path, tree, cwd, home, change, expected):
    from envcheck.profile.project import project_file

    tmp_path.chmod(0o755)
    _tree(tmp_path, tree)
    if change is not None:
        path, how = change
        how(tmp_path / path)
    found = project_file(tmp_path / cwd, home=tmp_path / (home or "no-home"))
    assert found == (tmp_path / expected if expected else None)


def test_a_parent_folders_pyproject_never_sets_fixs_index(tmp_path):
    """The attack: [tool.envcheck.torch] index-url in /shared/pyproject.toml, fix run in /shared/job/sub."""
    import json
    import subprocess
    import sys

    tmp_path.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck]\n' + EXTENDS + 'id = "planted"\n'
                                             '[tool.envcheck.torch]\nindex-url = "https://evil.example/simple"\n')
    job = tmp_path / "job" / "sub"
    job.mkdir(parents=True)
    empty = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(empty)], check=True)
    done = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--dry-run", "--json", "--no-gpu", "--python",
                           str(empty / "bin" / "python")], capture_output=True, text=True, cwd=job,
                          env={**os.environ, "HOME": str(tmp_path / "home")})
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    assert document["policy"]["id"] in builtin_profiles() and "planted" not in done.stdout
    assert "evil.example" not in done.stdout + done.stderr


# ---------------------------------------------------------------------------------------------------------------
# An error names the key and what was expected; a value only from the file the user named, secrets masked

SECRET = "s3cr3t-t0ken-value"


@pytest.mark.parametrize("named, base, key, words", [
    # a file `extends` reaches that is not a profile (a credentials file): nothing of it is shown
    ('extends = "{base}"\n', f'[registry]\ntoken = "{SECRET}"\n', "extends", "not an envcheck profile"),
    ('extends = "{base}"\n', f'token = "{SECRET}"\n', "extends", "not an envcheck profile"),
    # a profile it reaches: the error names that file and the key, not the value
    ('extends = "{base}"\n', EXTENDS + f'[cutlass]\nbranch = "{SECRET} x"\n', "cutlass.branch", "branch name"),
    ('extends = "{base}"\n', EXTENDS + f'[cutlass]\nbranch = {{token = "{SECRET}"}}\n', "cutlass.branch", "(a table)"),
    # the file the user named: a table or an unknown key's value is never shown; a credential-like key is masked
    (EXTENDS + f'[cutlass]\nbranch = {{token = "{SECRET}"}}\n', None, "cutlass.branch", "(a table)"),
    (EXTENDS + f'api = "{SECRET}"\n', None, "api", "no such key"),
    (EXTENDS + f'[cutlass]\ntoken = "{SECRET}"\n', None, "cutlass.token", "no such key"),
    (EXTENDS + f'[cutlass]\nurl = "http://me:{SECRET}@host/cutlass"\n', None, "cutlass.url", "https, ssh or file"),
    (EXTENDS + f'[cutlass]\nurl = "ftp://host/cutlass?private_token={SECRET}"\n', None, "cutlass.url", "https, ssh or file"),
    (EXTENDS + f'[torch]\nindex-url = "http://host/simple?X-Amz-Security-Token={SECRET}"\n', None, "torch.index-url", "URL"),
])
def test_an_error_never_echoes_a_secret(tmp_path, named, base, key, words):
    if base is not None:
        (tmp_path / "base.toml").write_text(base)
    path = _write(tmp_path, named.replace("{base}", str(tmp_path / "base.toml")))
    with pytest.raises(PolicyError) as caught:
        load(path)
    message = str(caught.value)
    assert f"'{key}'" in message and words in message and SECRET not in message, message
    assert "registry" not in message  # nothing of a file that is not a profile, not even its keys
    if base is not None and key != "extends":
        assert message.startswith(str(tmp_path / "base.toml")), message  # the file that set the value


def test_the_named_files_own_plain_value_is_shown():
    with pytest.raises(PolicyError, match=r"key 'cutlass.commit' = 'e594def95': expected a full 40-character"):
        load_text(EXTENDS + '[cutlass]\ncommit = "e594def95"\n')


def load_text(text: str):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return load(_write(Path(folder), text))


@pytest.mark.parametrize("value, accepted", [
    ("1", True), ("true", False), ("1.0", False), ('"1"', False), ("2", False), ("0", False), ("false", False),
    ("[1]", False), ("{v = 1}", False),
])
def test_schema_is_only_the_integer_1(value, accepted):
    text = f"schema = {value}\n" + EXTENDS
    if accepted:
        assert load_text(text).id == DEFAULT_PROFILE
    else:
        with pytest.raises(PolicyError, match="key 'schema' .* expected the integer 1"):
            load_text(text)


# ---------------------------------------------------------------------------------------------------------------
# Merging arrays of tables under extends: by key, in order, linear; a limit on entries


@pytest.mark.parametrize("base, override, expected", [
    ([{"name": "a", "v": 1}, {"name": "b", "v": 1}], [{"name": "a", "v": 2}], [("a", 2), ("b", 1)]),  # override in place
    ([{"name": "a", "v": 1}, {"name": "b", "v": 1}], [{"name": "c", "v": 1}], [("a", 1), ("b", 1), ("c", 1)]),  # appended
    ([{"name": "a", "v": 1}, {"name": "b", "v": 1}], [{"name": "a", "remove": True}], [("b", 1)]),  # removed
    ([{"name": "a", "v": 1}], [{"name": "zzz", "remove": True}], [("a", 1)]),  # removing what is not there
    ([{"name": "Foo_Bar", "v": 1}], [{"name": "foo-bar", "v": 2}], [("foo-bar", 2)]),  # names compared canonical
    ([{"name": "a", "v": 1}, {"name": "b", "v": 1}, {"name": "c", "v": 1}],
     [{"name": "c", "v": 2}, {"name": "a", "remove": True}, {"name": "d", "v": 1}, {"name": "b", "v": 2}],
     [("b", 2), ("c", 2), ("d", 1)]),  # order kept through all three
    ([{"name": "a", "v": 1}], [{"name": "n", "v": 1}, {"name": "n", "v": 2}], [("a", 1), ("n", 2)]),  # added, then replaced
    ([{"name": "a", "v": 1}], [{"name": "n", "v": 1}, {"name": "n", "remove": True}], [("a", 1)]),  # added, then removed
    ([{"name": "a", "v": 1}, {"name": "a", "v": 9}], [{"name": "a", "v": 2}], [("a", 2), ("a", 9)]),  # the first of a name
    ([{"name": "a", "v": 1}, {"name": "a", "v": 9}], [{"name": "a", "remove": True}, {"name": "a", "v": 3}], [("a", 3)]),
    ([{"name": "a", "v": 1}], ["not a table", {"v": 5}], [("a", 1), (None, None), (None, 5)]),  # left for validation
])
def test_merge_entries_table(base, override, expected):
    from envcheck.profile.merge import merge_entries

    merged = merge_entries(base, override, ("name",), "child", {}, "packages")
    assert [(e.get("name"), e.get("v")) if isinstance(e, dict) else (None, None) for e in merged] == expected


def test_merged_entries_say_which_file_set_them(tmp_path):
    _write(tmp_path, EXTENDS + '[[packages]]\nname = "from-base"\n[torch]\nindex-url = "https://base.example/simple"\n',
           "base.toml")
    child = load(_write(tmp_path, 'extends = "base.toml"\n[[packages]]\nname = "from-child"\n[cutlass]\nbranch = "b"\n'))
    assert child.origin("packages[name=from-child]") == str(child.source)
    assert child.origin("packages[name=from-base]") == str(tmp_path / "base.toml")
    assert child.origin("packages[name=apache-tvm-ffi]") == f"built-in profile {DEFAULT_PROFILE}"
    assert child.origin("torch.index-url") == str(tmp_path / "base.toml")
    assert child.origin("cutlass.branch") == str(child.source)
    assert child.origin("cutlass.url") == f"built-in profile {DEFAULT_PROFILE}"


def _packages(count: int, prefix: str = "pkg") -> str:
    return "".join(f'[[packages]]\nname = "{prefix}-{i}"\nversion = ">=1"\n' for i in range(count))


def test_a_profile_with_too_many_entries_is_refused_naming_the_file_and_the_table(tmp_path):
    from envcheck.profile import MAX_ENTRIES

    path = _write(tmp_path, EXTENDS + _packages(16_000))  # 411 KiB of them hung envcheck before
    with pytest.raises(PolicyError) as caught:
        load(path)
    message = str(caught.value)
    assert str(path) in message and "'packages'" in message and f"at most {MAX_ENTRIES} entries" in message, message
    assert "(an array of 16000 items)" in message


def test_a_profile_at_the_limit_merges_every_entry_in_order(tmp_path):
    from envcheck.profile import MAX_ENTRIES

    base = _write(tmp_path, EXTENDS + _packages(MAX_ENTRIES - 10), "base.toml")
    child = load(_write(tmp_path, f'extends = "{base.name}"\n' + _packages(MAX_ENTRIES, "pkg")))
    names = [p.name for p in child.packages]
    assert names[:3] == ["apache-tvm-ffi", "torch-c-dlpack-ext", "nvidia-matmul-heuristics"]
    assert names[3:] == [f"pkg-{i}" for i in range(MAX_ENTRIES)]  # the base's replaced in place, the rest appended


def test_tables_nested_deeper_than_a_profiles_are_refused_before_merging(tmp_path):
    path = _write(tmp_path, EXTENDS + "[python.a.b.c.d.e.f.g.h]\nx = 1\n")
    with pytest.raises(PolicyError, match=r"key 'python.a.b.c.d.e.f.g.h' = \(a table\): expected tables nested at most 8"):
        load(path)
    assert load(_write(tmp_path, EXTENDS + '[python]\nversion = ">=3.12"\n')).python.contains("3.12")
