"""`envcheck lock --profile`: the profile's stack resolved by uv for a target platform, on a machine without it.

Offline tests resolve the stack's shape from the small real wheels of conftest's wheelhouse (--no-index
--find-links) and install a fresh Python 3.12 venv from the lock with pip; the `network` tests resolve the real
stack from PyPI (skipped where PyPI cannot be reached).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from packaging.pylock import Pylock
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conftest import git, pypi_reachable, python312
from wheelfactory import make_venv, pip

from envcheck.cli import main
from envcheck.errors import UsageError
from envcheck.lock import Target, read_lock, resolve
from envcheck.lock.build import torch_cuda
from envcheck.lock.resolve import requirements_for

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def network(test):
    return pytest.mark.network(pytest.mark.skipif(not pypi_reachable(), reason="PyPI cannot be reached")(test))


@pytest.fixture
def local_profile(cutlass_repo, tmp_path) -> Path:
    """The default profile with its CUTLASS source at a real local repository's commit."""
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    return profile


# --------------------------------------------------------------------------------------------------------------
# Pure parts


@pytest.mark.parametrize(
    "target, markers",
    [
        (Target(), {"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "linux", "platform_machine": "x86_64"}),
        (Target("3.13", "aarch64-manylinux_2_28"), {"implementation_name": "cpython", "python_version": "3.13", "sys_platform": "linux", "platform_machine": "aarch64"}),
        (Target("3.12.4", "linux"), {"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "linux"}),
        (Target("3.12", "aarch64-apple-darwin"), {"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "darwin", "platform_machine": "arm64"}),
        (Target("3.12", "x86_64-pc-windows-msvc"), {"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "win32", "platform_machine": "AMD64"}),
    ],
)
def test_a_target_fixes_the_markers_its_platform_names(target, markers):
    assert target.markers == markers
    assert target.environment.count(" and ") == len(markers) - 1


@pytest.mark.parametrize(
    "target, flag", [(Target("3"), "--python-version"), (Target("python3.12"), "--python-version"),
                     (Target("3.12", "x86 64"), "--platform"), (Target("3.12", "--index-url=x"), "--platform")],
)
def test_a_bad_target_is_a_usage_error_naming_the_flag(policy, target, flag):
    with pytest.raises(UsageError, match=flag):
        resolve(policy, target, uv="/nonexistent/uv")


def test_a_python_the_profile_does_not_support_is_refused(policy):
    with pytest.raises(UsageError, match=r"--python-version 3.11: profile torch-2.11-nvgemm needs Python >=3.12"):
        resolve(policy, Target("3.11"), uv="/nonexistent/uv")


def test_requirements_are_the_profiles_roots_without_the_checkout(policy):
    asked = requirements_for(policy)
    assert asked[0] == "torch<2.14,>=2.11"
    assert "nvidia-cutlass-dsl<=4.3.5,>=4.3.0" in asked and "apache-tvm-ffi==0.1.7" in asked
    assert "nvidia-matmul-heuristics" in asked  # recommended packages are locked too
    assert not any(a.startswith("cutlass") for a in asked)  # a VCS package, added by build_resolved_lock
    assert requirements_for(policy, ["torch", "Torch_C_DLPack_Ext"]) == tuple(a for a in asked if not a.startswith("torch"))
    with pytest.raises(UsageError, match="--without numpy: not a package of profile torch-2.11-nvgemm"):
        requirements_for(policy, ["numpy"])


@pytest.mark.parametrize("version, cuda", [("2.11.0+cu130", "13.0"), ("2.15.0+cu132", "13.2"), ("2.11.0", ""), ("2.13.0+cpu", ""), (None, "")])
def test_torch_cuda_from_the_local_version(version, cuda):
    assert torch_cuda(version) == cuda


# --------------------------------------------------------------------------------------------------------------
# Real resolutions from local wheels (uv, offline)


def test_lock_profile_resolves_offline_pins_within_the_profile_and_locks_cutlass_as_vcs(local_profile, wheelhouse, cutlass_repo, tmp_path, capsys):
    out = tmp_path / "lock" / "pylock.toml"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["lock", "--profile", str(local_profile), "--no-index", "--find-links", str(wheelhouse), "-o", str(out)]) == 0
    lock = read_lock(out)
    versions = {p.name: str(p.version) for p in lock.packages}
    # The newest torch in range that resolves with the DSL's cuda-python (2.13.0+cpu has no cuda-bindings pin):
    assert Version(versions["torch"]) in SpecifierSet(">=2.11") and versions["nvidia-cutlass-dsl"] == "4.3.5"
    assert versions["apache-tvm-ffi"] == "0.1.7"  # 0.1.6 is in the wheelhouse too
    for package in lock.packages:
        if package.vcs is None:
            assert package.wheels and all(w.hashes.get("sha256") for w in package.wheels), package.name
    cutlass = next(p for p in lock.packages if p.vcs is not None)
    assert (cutlass.name, cutlass.vcs.url, cutlass.vcs.subdirectory) == ("cutlass-api", cutlass_repo.as_uri(), "python/cutlass_api")
    assert cutlass.vcs.commit_id == git("rev-parse", "HEAD", cwd=cutlass_repo)
    tool = tomllib.loads(out.read_text())["tool"]["envcheck"]
    assert tool["profile"] == "torch-2.11-nvgemm" and tool["python"] == "3.12"
    assert tool["resolved"]["platform"] == "x86_64-manylinux_2_28" and tool["resolved"]["resolver"].startswith("uv ")
    assert lock.environments[0].evaluate({"sys_platform": "linux", "platform_machine": "x86_64", "implementation_name": "cpython", "python_version": "3.12"})
    assert "wrote" in capsys.readouterr().err


def test_resolution_wheels_give_name_version_url_sha256_and_size(policy, wheelhouse):
    resolution = resolve(policy, no_index=True, find_links=[wheelhouse], without=["torch", "torch-c-dlpack-ext", "nvidia-cutlass-dsl"])
    assert {w.name for w in resolution.wheels} == {"apache-tvm-ffi", "nvidia-matmul-heuristics"}
    for wheel in resolution.wheels:
        assert len(wheel.sha256) == 64 and wheel.url.endswith(".whl") and wheel.filename.endswith(".whl")
        assert wheel.size is None or wheel.size > 0


def test_an_unresolvable_profile_is_a_usage_error_with_uvs_reason(local_profile, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["lock", "--profile", str(local_profile), "--no-index", "--find-links", str(empty), "-o", str(tmp_path / "pylock.toml")]) == 2
    err = capsys.readouterr().err
    assert "profile torch-2.11-nvgemm cannot be resolved for CPython 3.12 on x86_64-manylinux_2_28" in err
    assert "torch" in err and not (tmp_path / "pylock.toml").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--from-env", "--python-version", "3.12"], "apply to a resolved lock only"),
        (["--python", sys.executable, "--without", "torch"], "apply to a resolved lock only"),
        (["--no-index"], "--no-index leaves nowhere to find wheels"),
        (["--torch-index-url", "ftp://x"], "--torch-index-url 'ftp://x'"),
    ],
)
def test_lock_flags_that_do_not_fit_are_usage_errors(args, message, tmp_path, capsys):
    assert main(["lock", *args, "-o", str(tmp_path / "pylock.toml")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_a_fresh_python312_venv_installed_from_a_resolved_lock_passes_verify(local_profile, wheelhouse, build_backend, tmp_path, capsys):
    python = python312()
    if python is None:
        pytest.skip("cutlass_api needs Python >= 3.12 and none is on this machine")
    out = tmp_path / "pylock.toml"
    assert main(["lock", "--profile", str(local_profile), "--no-index", "--find-links", str(wheelhouse), "-o", str(out)]) == 0
    fresh = make_venv(tmp_path / "fresh", python)
    # Any pip: the hash-pinned export, then cutlass_api from the locked commit. (pip 26.1's own pylock support
    # refuses a lock that mixes hashes with a VCS package.)
    requirements_path = tmp_path / "requirements.txt"
    assert main(["lock", "--from", str(out), "--format", "requirements", "-o", str(requirements_path)]) == 0
    pip(fresh, "install", "--no-deps", "--require-hashes", "--no-index", "-r", str(requirements_path))
    vcs = next(p.vcs for p in read_lock(out).packages if p.vcs is not None)
    pip(fresh, "install", "--no-deps", "--no-index", "--find-links", str(build_backend),
        f"cutlass-api @ git+{vcs.url}@{vcs.commit_id}#subdirectory={vcs.subdirectory}")
    capsys.readouterr()
    assert main(["verify", "--lock", str(out), "--python", str(fresh)]) == 0
    assert "matches" in capsys.readouterr().out
    pip(fresh, "uninstall", "-y", "apache-tvm-ffi")
    assert main(["verify", "--lock", str(out), "--python", str(fresh)]) == 1
    assert "apache-tvm-ffi  missing" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------------------------
# The real stack, from PyPI


@network
def test_the_real_stack_resolves_from_pypi_with_hashes_for_every_wheel(policy, tmp_path):
    """No torch, GPU or CUTLASS here: the lock pins a torch and a DSL in the profile's ranges (about 15 s cold)."""
    out = tmp_path / "pylock.toml"
    assert main(["lock", "--profile", "torch-2.11-nvgemm", "--torch-index-url", "", "-o", str(out)]) == 0
    lock = Pylock.from_dict(tomllib.loads(out.read_text()))
    versions = {p.name: p.version for p in lock.packages if p.version is not None}
    assert versions["torch"] in policy.torch and versions["nvidia-cutlass-dsl"] in policy.cutedsl.specifier
    wheels = [w for p in lock.packages for w in (p.wheels or ())]
    assert len(wheels) > 20 and all(w.url.startswith("https://") and w.hashes.get("sha256") and w.size for w in wheels)
    assert any(p.vcs is not None and p.vcs.commit_id == policy.cutlass.commit for p in lock.packages)


def _file_index(root: Path, wheels: list[Path]) -> str:
    """A PEP 503 index on disk holding `wheels`: its file:// URL."""
    for wheel in wheels:
        project = root / wheel.name.split("-")[0].replace("_", "-").lower()
        project.mkdir(parents=True, exist_ok=True)
        page = project / "index.html"
        previous = page.read_text() if page.exists() else ""
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        page.write_text(previous + f'<a href="{wheel.as_uri()}#sha256={digest}">{wheel.name}</a>\n')
    return root.as_uri()


@pytest.mark.parametrize("torch_flag, recorded", [("torch", True), ("", False), (None, False)])
def test_the_lock_records_the_torch_index_only_where_torch_came_from_it(local_profile, wheelhouse, tmp_path, capsys,
                                                                       torch_flag, recorded):
    """--torch-index-url URL: torch is taken from it and the lock says so; '' (torch from the default index) or
    --no-index: the lock names no torch index (it said the profile's, which nothing had searched)."""
    wheels = sorted(wheelhouse.glob("*.whl"))
    everything = _file_index(tmp_path / "pypi", wheels)
    torch_only = _file_index(tmp_path / "torch-index", [w for w in wheels if w.name.startswith("torch-")])
    out = tmp_path / "pylock.toml"
    args = ["lock", "--profile", str(local_profile), "-o", str(out)]
    if torch_flag is None:
        args += ["--no-index", "--find-links", str(wheelhouse)]
    else:
        args += ["--index-url", everything, "--torch-index-url", torch_only if torch_flag else ""]
    assert main(args) == 0, capsys.readouterr().err
    tool = tomllib.loads(out.read_text())["tool"]["envcheck"]
    torch = next(p for p in read_lock(out).packages if p.name == "torch")
    if recorded:
        assert tool["torch-index"] == torch_only and torch.index == torch_only
    else:
        assert "torch-index" not in tool, tool
        assert torch.index in (everything, None)
