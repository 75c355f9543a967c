"""lock, verify and the requirements export: tables for the pure parts, real venvs for the round trip.

The round trip is the promise of `envcheck lock`: a fresh virtual environment installed from the lock has exactly the
locked versions, and `envcheck verify` names any package that moves.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.pylock import Pylock
from packaging.version import Version

from conftest import git, python312
from wheelfactory import build_wheel, make_venv, pip

from envcheck import lock as lockmod
from envcheck.cli import main
from envcheck.errors import UsageError
from envcheck.lock import (
    Drift,
    Index,
    Wheelhouse,
    build_lock,
    parse_simple_html,
    parse_simple_json,
    read_lock,
    requirements,
    stack_roots,
    to_toml,
    verify,
    walk,
    write_lock,
)
from envcheck.model import Distribution, Interpreter
from envcheck.redact import without_credentials
from envcheck.render.lock import render_drift

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MARKERS = (
    ("implementation_name", "cpython"),
    ("platform_machine", "x86_64"),
    ("platform_system", "Linux"),
    ("python_full_version", "3.12.3"),
    ("python_version", "3.12"),
    ("sys_platform", "linux"),
)


def interpreter(*dists: Distribution) -> Interpreter:
    return Interpreter(
        executable="/opt/venv/bin/python",
        version=(3, 12, 3),
        implementation="cpython",
        prefix="/opt/venv",
        base_prefix="/usr",
        site_dirs=("/opt/venv/lib/python3.12/site-packages",),
        sys_path=(),
        distributions=tuple(dists),
        modules=(),
        torch=None,
        markers=MARKERS,
    )


def dist(name: str, version: str, *requires: str, **kw) -> Distribution:
    return Distribution(name=name, version=version, location="/opt/venv/lib/python3.12/site-packages", requires=requires, **kw)


PINNED = "e594def95e1c73ad9d5517ab28b80d691127dd1c"

STACK = (
    dist("torch", "2.11.0+cu130", "cuda-bindings>=13.0.3,<14", "triton==3.6.0; platform_machine == 'x86_64'",
         "colorama; sys_platform == 'win32'", "opt-einsum>=3.3; extra == 'opt-einsum'"),
    dist("triton", "3.6.0"),
    dist("cuda-bindings", "13.3.1", "cuda-pathfinder~=1.1"),
    dist("cuda-pathfinder", "1.3.0"),
    dist("nvidia-cutlass-dsl", "4.3.5", "cuda-python>=12.8", "numpy"),
    dist("cuda-python", "13.3.1", "cuda-bindings~=13.3.1"),
    dist("numpy", "2.3.0"),
    dist("apache-tvm-ffi", "0.1.7", "typing-extensions>=4.5"),
    dist("typing-extensions", "4.15.0"),
    dist("torch-c-dlpack-ext", "0.1.5", "torch"),
    dist("nvidia-matmul-heuristics", "0.1.0.27"),
    dist("cutlass-api", "0.1.0a1", "nvidia-cutlass-dsl", "apache-tvm-ffi==0.1.7", "torch; extra == 'torch'",
         "torch-c-dlpack-ext; extra == 'torch'", editable="/src/cutlass/python/cutlass_api"),
    dist("pip", "25.0"),
)


def commit_is_pinned(_dist: Distribution) -> str:
    return PINNED


# --------------------------------------------------------------------------------------------------------------
# Which packages


def test_stack_roots_of_the_default_profile(policy):
    roots = {r.name: r for r in stack_roots(policy)}
    assert list(roots)[:3] == ["torch", "nvidia-cutlass-dsl", "cutlass-api"]
    assert roots["cutlass-api"].extras == ("torch",)
    assert roots["apache-tvm-ffi"].specifier == "==0.1.7" and roots["apache-tvm-ffi"].required
    assert not roots["nvidia-matmul-heuristics"].required
    assert roots["nvidia-cutlass-dsl"].specifier in ("<=4.3.5,>=4.3.0", ">=4.3.0,<=4.3.5")


def test_walk_follows_requires_with_the_targets_markers_and_extras():
    found = walk(interpreter(*STACK), [("torch", ()), ("cutlass-api", ("torch",))])
    names = [w.dist.name for w in found.packages]
    assert names[:2] == ["torch", "cutlass-api"]
    assert "triton" in names  # platform_machine == 'x86_64' holds on the target
    assert "colorama" not in names and "opt-einsum" not in names  # win32 only; an extra nobody asked for
    assert "pip" not in names  # installed, but nothing in the stack needs it
    cutlass = next(w for w in found.packages if w.dist.name == "cutlass-api")
    assert cutlass.extras == ("torch",) and "torch-c-dlpack-ext" in cutlass.dependencies
    assert found.missing == ()


def test_walk_reports_a_declared_dependency_the_target_lacks():
    without_cuda_python = [d for d in STACK if d.name != "cuda-python"]
    found = walk(interpreter(*without_cuda_python), [("nvidia-cutlass-dsl", ())])
    assert found.missing == (("cuda-python>=12.8", "nvidia-cutlass-dsl 4.3.5"),)


# --------------------------------------------------------------------------------------------------------------
# Building a lock from files in a folder


@pytest.fixture
def stack_wheels(tmp_path) -> Path:
    folder = tmp_path / "wheels"
    for d in STACK:
        if d.name != "cutlass-api":
            build_wheel(folder, d.name, d.version, {f"{d.name.replace('-', '_')}/__init__.py": ""})
    build_wheel(folder, "torch", "2.10.0", {"torch/__init__.py": ""})  # another version: must not be locked
    return folder


def test_build_lock_pins_every_package_with_hashes_and_cutlass_as_vcs(policy, stack_wheels, tmp_path):
    result = build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path)
    packages = {p.name: p for p in result.pylock.packages}
    assert set(packages) == {d.name for d in STACK} - {"pip"}
    torch = packages["torch"]
    assert str(torch.version) == "2.11.0+cu130"
    assert [w.name for w in torch.wheels] == ["torch-2.11.0+cu130-py3-none-any.whl"]
    wheel_file = stack_wheels / torch.wheels[0].name
    assert torch.wheels[0].hashes == {"sha256": hashlib.sha256(wheel_file.read_bytes()).hexdigest()}
    assert torch.wheels[0].path == "wheels/torch-2.11.0+cu130-py3-none-any.whl"  # relative to the lock (PEP 751)
    cutlass = packages["cutlass-api"]
    assert cutlass.vcs.url == policy.cutlass.url and cutlass.vcs.commit_id == policy.cutlass.commit
    assert cutlass.vcs.requested_revision == "cutlass_api" and cutlass.vcs.subdirectory == "python/cutlass_api"
    tool = result.data["tool"]["envcheck"]
    assert tool["profile"] == "torch-2.11-nvgemm"
    assert tool["cuda"]["driver-floor"] == "590.44.01" and tool["cuda"]["toolkit"] == ">=13.1,<14"
    assert "9.0" in tool["compute-capabilities"] and "7.5" not in tool["compute-capabilities"]
    assert tool["cutlass"]["commit"] == PINNED
    assert result.data["environments"] == [
        'sys_platform == "linux" and platform_machine == "x86_64" and implementation_name == "cpython" and python_version == "3.12"'
    ]


@pytest.mark.parametrize(
    "change, message",
    [
        (("nvidia-cutlass-dsl", "4.4.0"), "nvidia-cutlass-dsl 4.4.0 is installed; the profile asks for"),
        (("apache-tvm-ffi", "0.1.6"), "apache-tvm-ffi 0.1.6 is installed"),
        (("torch", "2.10.0"), "torch 2.10.0 is installed"),
        (("apache-tvm-ffi", None), "apache-tvm-ffi is not installed"),
    ],
)
def test_build_lock_refuses_a_stack_the_profile_does_not_accept(policy, stack_wheels, change, message):
    name, version = change
    dists = [d for d in STACK if d.name != name] + ([dist(name, version)] if version else [])
    with pytest.raises(lockmod.StackMismatch, match=message):
        build_lock(interpreter(*dists), policy, wheelhouse=Wheelhouse([stack_wheels]))


def test_build_lock_refuses_cutlass_api_from_another_commit(policy, stack_wheels):
    dists = [d for d in STACK if d.name != "cutlass-api"] + [
        dist("cutlass-api", "0.1.0a1", url="https://github.com/NVIDIA/cutlass", commit="1" * 40)
    ]
    with pytest.raises(lockmod.StackMismatch, match="installed from commit 111111111111; the profile pins e594def95e1c"):
        build_lock(interpreter(*dists), policy, wheelhouse=Wheelhouse([stack_wheels]))


def test_cli_lock_of_a_stack_that_is_not_the_profiles_exits_1_not_2(tmp_path, capsys):
    """A mismatch is a failed check (exit 1), not bad input: this test interpreter has no torch."""
    out = tmp_path / "pylock.toml"
    assert main(["lock", "--python", sys.executable, "--no-index", "--find-links", str(tmp_path), "-o", str(out)]) == 1
    assert "does not match profile" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("name, level", [("nvidia-matmul-heuristics", "recommended"),
                                         ("torch-c-dlpack-ext", "optional")])  # doctor's word, not "recommended"
def test_build_lock_leaves_out_a_missing_package_that_is_not_required_and_says_what_it_is(policy, stack_wheels, name,
                                                                                           level):
    assert next(r.level for r in policy.packages if r.name == name) == level  # as nvgemm.deps names it
    dists = [d for d in STACK if d.name != name]
    result = build_lock(interpreter(*dists), policy, wheelhouse=Wheelhouse([stack_wheels]))
    assert name not in {p.name for p in result.pylock.packages}
    notes = [note for note in result.notes if note.startswith(name)]
    assert notes == [f"{name} is {level} in the profile (packages.{name}) but not installed: left out of the lock"]


def test_build_lock_names_every_package_it_has_no_files_for(policy, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match=r"no wheel or sdist with a hash found for torch==2.11.0\+cu130, .*triton==3.6.0"):
        build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([empty]))


# --------------------------------------------------------------------------------------------------------------
# Indexes: PEP 691 JSON and PEP 503 HTML pages, and a real (file://) simple index


def test_parse_simple_json_takes_urls_hashes_sizes_and_upload_times():
    body = json.dumps({"meta": {"api-version": "1.1"}, "name": "apache-tvm-ffi", "files": [
        {"filename": "apache_tvm_ffi-0.1.7-cp312-abi3-manylinux_2_28_x86_64.whl", "url": "../../packages/a/apache_tvm_ffi-0.1.7-cp312-abi3-manylinux_2_28_x86_64.whl",
         "hashes": {"sha256": "AB" * 32}, "size": 1234, "upload-time": "2025-10-01T12:30:45.123456Z"},
        {"filename": "apache_tvm_ffi-0.1.7.tar.gz", "url": "https://files.example/apache_tvm_ffi-0.1.7.tar.gz", "hashes": {}},
    ]}).encode()
    (record,) = parse_simple_json(body, "https://pypi.org/simple/apache-tvm-ffi/")
    assert record.url == "https://pypi.org/packages/a/apache_tvm_ffi-0.1.7-cp312-abi3-manylinux_2_28_x86_64.whl"
    assert record.hashes == (("sha256", "ab" * 32),) and record.size == 1234
    assert record.upload_time == datetime.datetime(2025, 10, 1, 12, 30, 45, tzinfo=datetime.timezone.utc)


def test_parse_simple_html_takes_hash_fragments_and_skips_unhashed_links():
    body = f"""<html><body>
    <a href="/whl/cu130/torch-2.11.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl#sha256={"00ff" * 16}">torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl</a>
    <a href="torch-2.11.0%2Bcu130-cp313-cp313-win_amd64.whl">no hash</a>
    </body></html>""".encode()
    (record,) = parse_simple_html(body, "https://download.pytorch.org/whl/cu130/torch/")
    assert record.filename == "torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert record.url == "https://download.pytorch.org/whl/cu130/torch-2.11.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    assert record.hashes == (("sha256", "00ff" * 16),)


def test_lock_from_a_file_index_records_the_index_and_urls(policy, stack_wheels, tmp_path):
    """A PEP 503 index on disk, read with the same code as a remote one: torch comes from the profile's torch index."""
    torch_index, pypi = tmp_path / "torch-index", tmp_path / "pypi"
    for wheel in stack_wheels.iterdir():
        name = wheel.name.split("-")[0].replace("_", "-")
        root = torch_index if name == "torch" else pypi
        (root / name).mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        page = root / name / "index.html"
        previous = page.read_text() if page.exists() else ""
        page.write_text(previous + f'<a href="{wheel.as_uri()}#sha256={digest}">{wheel.name}</a>\n')
    result = build_lock(
        interpreter(*STACK), policy, indexes=[Index(pypi.as_uri())], torch_index=Index(torch_index.as_uri()), lock_dir=tmp_path
    )
    packages = {p.name: p for p in result.pylock.packages}
    assert packages["torch"].index == torch_index.as_uri()
    assert packages["numpy"].index == pypi.as_uri()
    assert packages["torch"].wheels[0].url.startswith("file://")
    assert result.data["tool"]["envcheck"]["torch-index"] == torch_index.as_uri()  # torch came from it
    from_wheels = build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path)
    assert "torch-index" not in from_wheels.data["tool"]["envcheck"]  # no index searched: none named


def test_an_unreachable_index_is_a_usage_error_naming_it(policy):
    def refuse(url: str):
        raise OSError("connection refused")

    with pytest.raises(UsageError, match="--index-url https://index.invalid/simple: cannot read"):
        build_lock(interpreter(*STACK), policy, indexes=[Index("https://index.invalid/simple", fetch=refuse)])


# --------------------------------------------------------------------------------------------------------------
# TOML out, read back


def test_written_lock_reads_back_as_the_same_lock(policy, stack_wheels, tmp_path):
    result = build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path)
    text = write_lock(result, tmp_path / "pylock.toml")
    assert text.startswith("# PEP 751 lock for profile torch-2.11-nvgemm")
    assert read_lock(tmp_path / "pylock.toml") == result.pylock
    assert Pylock.from_dict(tomllib.loads(text)).to_dict() == result.pylock.to_dict()


def test_the_header_says_how_to_install_a_lock_that_pip_cannot_install_itself(policy, stack_wheels, tmp_path):
    result = build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path)
    header = write_lock(result, tmp_path / "pylock.toml").split("lock-version")[0]
    assert "refuses this file" in header and "pip 26.1 and later" not in header  # cutlass_api is a VCS package
    assert "--format requirements" in header and "`pip install --no-deps -e` it" in header
    import pip as installed_pip

    target = python312()  # the lock is for the stack's Python, 3.12
    if target is not None and Version(installed_pip.__version__) >= Version("26.1"):  # the header's reason, for real
        with pytest.raises(RuntimeError, match="Can't verify hashes"):
            pip(target, "install", "--dry-run", "--no-deps", "--no-index", "-r", str(tmp_path / "pylock.toml"))


@pytest.mark.parametrize("value", ['quote " and \\ backslash', "tab\tnewline\n", "ünïcödé", "key = value # not a comment"])
def test_toml_writer_round_trips_awkward_strings(value):
    data = {"a": value, "odd key": [value], "t": {"x.y": value, "when": datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)}}
    assert tomllib.loads(to_toml(data)) == data


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read it"),
        ("lock-version = ", "not valid TOML"),
        ('lock-version = "1.0"\ncreated-by = "x"\n', "not a valid PEP 751 lock: Missing required value in 'packages'"),
        ('lock-version = "2.0"\ncreated-by = "x"\npackages = []\n', "not supported"),
        ('lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "torch"\nversion = "2.11.0"\n', "Exactly one of vcs, directory, archive"),
    ],
)
def test_an_unusable_lock_is_a_usage_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "pylock.toml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=message) as caught:
        read_lock(path)
    assert str(path) in str(caught.value)


def test_cli_verify_with_a_bad_lock_exits_2_naming_the_flag(tmp_path, capsys):
    assert main(["verify", "--lock", str(tmp_path / "nope.toml")]) == 2
    assert "--lock" in capsys.readouterr().err


def test_cli_lock_format_must_be_known(tmp_path, capsys):
    assert main(["lock", "--format", "yaml", "-o", str(tmp_path / "x")]) == 2
    assert "--format 'yaml'" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# Verify, table-driven


@pytest.fixture
def stack_lock(policy, stack_wheels, tmp_path) -> Pylock:
    return build_lock(interpreter(*STACK), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path).pylock


def replaced(name: str, new: Distribution | None) -> list[Distribution]:
    return [d for d in STACK if d.name != name] + ([new] if new else [])


@pytest.mark.parametrize(
    "dists, expected",
    [
        (list(STACK), []),
        (replaced("apache-tvm-ffi", dist("apache-tvm-ffi", "0.1.6")), [Drift("apache-tvm-ffi", "version", "0.1.7", "0.1.6")]),
        (replaced("numpy", None), [Drift("numpy", "missing", "2.3.0", "not installed")]),
        (replaced("torch", dist("torch", "2.11.0")), [Drift("torch", "version", "2.11.0+cu130", "2.11.0")]),
        (list(STACK) + [dist("requests", "2.32.0")], [Drift("requests", "unlocked", "not in the lock", "2.32.0")]),
    ],
)
def test_verify_lists_the_drift_per_package(stack_lock, dists, expected):
    drift = [d for d in verify(stack_lock, interpreter(*dists), commit_of=commit_is_pinned) if d.name != "pip"]
    assert drift == expected


def test_verify_names_a_cutlass_api_from_another_commit(stack_lock):
    drift = verify(stack_lock, interpreter(*STACK), commit_of=lambda d: "2" * 40)
    (moved,) = [d for d in drift if d.fails]
    assert moved.name == "cutlass-api" and moved.kind == "source" and "222222222222" in moved.installed


def test_unlocked_packages_are_listed_but_do_not_fail():
    assert not Drift("pip", "unlocked", "not in the lock", "25.0").fails
    text = render_drift([Drift("pip", "unlocked", "not in the lock", "25.0")], "pylock.toml", "/v/bin/python", 12)
    assert "matches pylock.toml: all 12 locked packages" in text and "pip 25.0" in text


# --------------------------------------------------------------------------------------------------------------
# Requirements export


def test_requirements_pins_every_index_package_by_hash_and_leaves_vcs_to_its_own_step(stack_lock, tmp_path):
    text = requirements(stack_lock, tmp_path)
    assert f"--find-links {(tmp_path / 'wheels').resolve().as_posix()}" in text
    assert "torch==2.11.0+cu130 \\\n    --hash=sha256:" in text
    assert "cutlass-api==" not in text and "# cutlass-api: not installed from this file" in text
    assert text.count("==") == len(stack_lock.packages) - 1


def test_requirements_adds_the_torch_index():
    lock = Pylock.from_dict({
        "lock-version": "1.0", "created-by": "t",
        "packages": [{"name": "torch", "version": "2.11.0+cu130", "index": "https://download.pytorch.org/whl/cu130",
                      "wheels": [{"url": "https://download.pytorch.org/whl/cu130/torch-2.11.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl",
                                  "hashes": {"sha256": "ab"}}]},
                     {"name": "numpy", "version": "2.3.0", "index": "https://pypi.org/simple",
                      "wheels": [{"name": "numpy-2.3.0-cp312-cp312-manylinux_2_28_x86_64.whl", "url": "https://files/x.whl", "hashes": {"sha256": "cd"}}]}],
    })
    text = requirements(lock, Path("."))
    assert "--extra-index-url https://download.pytorch.org/whl/cu130\n" in text
    assert "pypi.org" not in text
    assert "numpy==2.3.0 \\\n    --hash=sha256:cd\n" in text


# --------------------------------------------------------------------------------------------------------------
# The round trip, for real: lock a venv, install a fresh one from the lock, verify, move a package, verify again


@pytest.fixture
def stack_venv(venv_factory, cutlass_repo, build_backend, tmp_path):
    python = python312()
    if python is None:
        pytest.skip("cutlass_api needs Python >= 3.12 and none is on this machine")
    target = venv_factory(
        "torch==2.11.0+cu130", "nvidia-cutlass-dsl==4.3.5", "apache-tvm-ffi==0.1.7", "torch-c-dlpack-ext==0.1.5",
        "nvidia-matmul-heuristics==0.1.0.27", "cuda-python==13.3.1", python=python,
    )
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(build_backend), "-e", str(cutlass_repo / "python" / "cutlass_api"))
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    return target, profile, python


def installed_versions(python: Path) -> dict[str, str]:
    from envcheck.gather.interpreter import gather_interpreter

    return {d.name: d.version for d in gather_interpreter(str(python)).distributions}


@pytest.mark.slow
def test_a_fresh_venv_installed_from_the_lock_reproduces_it_and_verify_catches_a_change(
    stack_venv, wheelhouse, cutlass_repo, build_backend, tmp_path, capsys
):
    source, profile, python = stack_venv
    lock_path = tmp_path / "out" / "pylock.toml"
    lock_path.parent.mkdir()  # envcheck makes no folder for -o
    assert main(["lock", "--python", str(source), "--policy", str(profile), "--no-index", "--find-links", str(wheelhouse), "-o", str(lock_path)]) == 0
    lock = read_lock(lock_path)
    locked = {p.name: str(p.version) for p in lock.packages}
    assert locked == {
        "torch": "2.11.0+cu130", "cuda-bindings": "13.3.1", "nvidia-cutlass-dsl": "4.3.5", "cuda-python": "13.3.1",
        "cutlass-api": "0.1.0a1", "apache-tvm-ffi": "0.1.7", "torch-c-dlpack-ext": "0.1.5", "nvidia-matmul-heuristics": "0.1.0.27",
    }
    assert main(["verify", "--lock", str(lock_path), "--python", str(source)]) == 0

    # A fresh venv, installed from the lock alone: the requirements export by hash, then cutlass_api from its commit.
    fresh = make_venv(tmp_path / "fresh", python)
    requirements_path = tmp_path / "requirements.txt"
    assert main(["lock", "--from", str(lock_path), "--format", "requirements", "-o", str(requirements_path)]) == 0
    pip(fresh, "install", "--no-deps", "--require-hashes", "--no-index", "-r", str(requirements_path))
    pip(fresh, "install", "--no-deps", "--no-index", "--find-links", str(build_backend), "-e", str(cutlass_repo / "python" / "cutlass_api"))
    assert installed_versions(fresh) == installed_versions(source) == locked
    capsys.readouterr()
    assert main(["verify", "--lock", str(lock_path), "--python", str(fresh)]) == 0
    assert "all 8 locked packages at their locked versions" in capsys.readouterr().out

    pip(fresh, "install", "--no-deps", "--no-index", "--find-links", str(wheelhouse), "apache-tvm-ffi==0.1.6")
    assert main(["verify", "--lock", str(lock_path), "--python", str(fresh)]) == 1
    out = capsys.readouterr().out
    assert "1 of 8 locked packages differ" in out
    assert "apache-tvm-ffi  version  locked 0.1.7, installed 0.1.6" in out


def test_an_unreachable_torch_index_falls_back_to_the_next_index_with_a_note(policy, stack_wheels):
    def refuse(url: str):
        raise OSError("Name or service not known")

    local = [d for d in STACK]
    result = build_lock(
        interpreter(*local), policy, wheelhouse=None,
        indexes=[Index("https://pypi.example/simple", fetch=lambda url: _page_from(stack_wheels, url))],
        torch_index=Index("https://download.pytorch.org/whl/cu130", fetch=refuse, optional=True),
    )
    torch = next(p for p in result.pylock.packages if p.name == "torch")
    assert torch.index == "https://pypi.example/simple"
    assert any("download.pytorch.org/whl/cu130 could not be read" in note for note in result.notes)


def _page_from(folder: Path, url: str) -> tuple[str, bytes]:
    """A PEP 691 JSON page for a project, made from the wheels in a folder."""
    name = url.rstrip("/").rsplit("/", 1)[-1]
    files = [
        {"filename": w.name, "url": f"https://files.example/{w.name}", "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()}}
        for w in sorted(folder.iterdir())
        if w.name.split("-")[0].replace("_", "-").lower() == name
    ]
    if not files:
        raise LookupError(url)
    return "application/vnd.pypi.simple.v1+json", json.dumps({"files": files}).encode()


@pytest.mark.parametrize(
    "url, public",
    [
        ("https://user:s3cret@pypi.example/simple", "https://pypi.example/simple"),
        ("https://__token__:pypi-AgEIcHlwaS5vcmc@host:8443/simple/", "https://host:8443/simple/"),
        ("https://pypi.org/simple", "https://pypi.org/simple"),
    ],
)
def test_credentials_never_reach_the_lock(url, public):
    assert without_credentials(url) == public


def test_pypi_json_api_gives_hashes_when_reachable():
    """The one test that asks the network; skipped where PyPI cannot be reached."""
    try:
        files = Index(lockmod.PYPI).files("nvidia-matmul-heuristics", "0.1.0.27")
    except UsageError as exc:
        pytest.skip(f"PyPI not reachable: {exc}")
    assert files and all(f.url.startswith("https://") and dict(f.hashes).get("sha256") for f in files)
    assert all(f.size and f.upload_time for f in files)  # PEP 700 fields from the JSON API


def test_an_index_url_with_credentials_sends_them_as_a_header_and_keeps_them_out_of_the_lock():
    """`https://user:pass@host/simple` as pip takes it: urllib would read `user:pass@host` as the host name."""
    import base64
    import http.server
    import threading

    seen: list = []
    page = json.dumps({"files": [{"filename": "foo-1.0-py3-none-any.whl", "url": "foo-1.0-py3-none-any.whl",
                                  "hashes": {"sha256": "ab" * 32, "md5": "not-hex"}}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the stdlib's name
            seen.append(self.headers.get("Authorization"))
            if self.headers.get("Authorization") != "Basic " + base64.b64encode(b"me:p@ss word").decode():
                self.send_response(401)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        index = Index(f"http://me:p%40ss%20word@127.0.0.1:{server.server_port}/simple")
        (record,) = index.files("foo", "1.0")
        refused = Index(f"http://me:wrong-pass@127.0.0.1:{server.server_port}/simple")
        with pytest.raises(UsageError) as caught:
            refused.files("foo", "1.0")
    finally:
        server.shutdown()
    assert seen[0] is not None and record.hashes == (("sha256", "ab" * 32),)  # the unusable md5 is left out
    assert record.url == f"http://127.0.0.1:{server.server_port}/simple/foo/foo-1.0-py3-none-any.whl"
    assert "p@ss" not in index.url and "wrong-pass" not in str(caught.value) and "HTTP 401" in str(caught.value)


# --------------------------------------------------------------------------------------------------------------
# Nothing in a lock becomes a live line of a requirements file (issue 15 item 1)

DIGEST = "a" * 64
INJECTED = "--extra-index-url https://evil.example/simple"


def crafted_lock(folder: Path, **change) -> Path:
    """A small lock: one wheel from an index, one VCS package; `change` sets values by dotted key."""
    data = {
        "lock-version": "1.0", "created-by": "a test",
        "packages": [
            {"name": "demo", "version": "1.0", "index": "https://download.pytorch.org/whl/cu130",
             "marker": 'sys_platform == "linux"',
             "wheels": [{"name": "demo-1.0-py3-none-any.whl", "url": "https://files.example/demo-1.0-py3-none-any.whl",
                         "hashes": {"sha256": DIGEST}}]},
            {"name": "cutlass-api", "vcs": {"type": "git", "url": "https://github.com/NVIDIA/cutlass",
                                            "commit-id": PINNED, "subdirectory": "python/cutlass_api"}},
        ],
        "tool": {"envcheck": {"profile": "torch-2.11-nvgemm"}},
    }
    for key, value in change.items():
        *parents, last = key.replace("]", "").replace("[", ".").split(".")
        place = data
        for part in parents:
            place = place[int(part)] if part.isdigit() else place[part]
        place[last] = value
    path = folder / "pylock.toml"
    path.write_text(to_toml(data))
    return path


def export(lock: Path, out: Path) -> int:
    return main(["lock", "--from", str(lock), "--format", "requirements", "-o", str(out)])


def test_the_crafted_lock_exports_as_it_should(tmp_path):
    out = tmp_path / "requirements.txt"
    assert export(crafted_lock(tmp_path), out) == 0
    lines = out.read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cu130" in lines
    assert 'demo==1.0 ; sys_platform == "linux" \\' in lines
    assert [line for line in lines if line.startswith("-")] == ["--extra-index-url https://download.pytorch.org/whl/cu130"]


BREAKS = ["\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x00", "\x1b"]


@pytest.mark.parametrize("key", ["packages[1].vcs.url", "packages[1].vcs.commit-id", "packages[0].wheels[0].url",
                                 "packages[0].wheels[0].name", "packages[0].index", "packages[0].marker",
                                 "tool.envcheck.profile", "created-by"])
@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_a_line_break_in_any_lock_value_is_refused_naming_the_lock_and_key(tmp_path, capsys, key, brk):
    original = {"packages[1].vcs.url": "https://github.com/NVIDIA/cutlass", "packages[1].vcs.commit-id": PINNED,
                "packages[0].wheels[0].url": "https://files.example/demo-1.0-py3-none-any.whl",
                "packages[0].wheels[0].name": "demo-1.0-py3-none-any.whl",
                "packages[0].index": "https://download.pytorch.org/whl/cu130", "packages[0].marker": 'sys_platform == "linux"',
                "tool.envcheck.profile": "torch-2.11-nvgemm", "created-by": "a test"}[key]
    lock = crafted_lock(tmp_path, **{key: f"{original}{brk}{INJECTED}"})
    out = tmp_path / "requirements.txt"
    assert export(lock, out) == 2
    err = capsys.readouterr().err
    assert f"--from {lock}" in err and f"'{key}'" in err and "line break" in err, err
    assert not out.exists() and "evil.example" not in err
    assert main(["verify", "--lock", str(lock)]) == 2  # every reader of a lock refuses it


def test_a_plain_http_index_is_refused_as_pip_itself_would(tmp_path, capsys):
    lock = crafted_lock(tmp_path, **{"packages[0].index": "http://mirror.example/simple"})
    out = tmp_path / "requirements.txt"
    assert export(lock, out) == 2
    err = capsys.readouterr().err
    assert f"--from {lock}" in err and "packages[0] (demo)" in err and "'index'" in err and "https://" in err
    assert not out.exists()


@pytest.mark.parametrize("key, value", [
    ("packages[0].index", "https://mirror.example/${HOME}/simple"),  # pip expands ${NAME} in a requirements file
    ("packages[0].index", "ftp://mirror.example/simple"),
    ("packages[0].index", "-https://x"),
    ("packages[0].marker", 'sys_platform == "linux #x"'),  # pip ends the line at ' #'
    ("packages[0].marker", 'extra == "a --index-url=https://evil.example/simple"'),  # an option of the line
    ("packages[0].marker", 'extra == "${HOME}"'),
])
def test_a_value_pip_would_read_more_into_is_refused(tmp_path, capsys, key, value):
    lock = crafted_lock(tmp_path, **{key: value})
    assert export(lock, tmp_path / "requirements.txt") == 2
    err = capsys.readouterr().err
    assert f"--from {lock}" in err and "packages[0] (demo)" in err, err


def local_wheel_lock(folder: Path) -> Path:
    wheel = build_wheel(folder / "wheels", "demo", "1.0", {"demo/__init__.py": ""})
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return crafted_lock(folder, **{"packages[0].wheels": [{"name": wheel.name, "path": f"wheels/{wheel.name}",
                                                              "hashes": {"sha256": digest}}],
                                   "packages[0].index": "https://pypi.org/simple"})


def test_a_wheel_folder_no_shell_word_survives_unquoted_reaches_pip_as_one_word(tmp_path):
    folder = tmp_path / "lock dir $x 'q' `id` ;"
    folder.mkdir()
    out = tmp_path / "requirements.txt"
    assert export(local_wheel_lock(folder), out) == 0
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-index", "--require-hashes",
                           "-r", str(out), "-d", str(tmp_path / "got")], capture_output=True, text=True,
                          env={**os.environ, "PIP_CONFIG_FILE": os.devnull}, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in (tmp_path / "got").iterdir()] == ["demo-1.0-py3-none-any.whl"]


def test_a_wheel_folder_pip_would_cut_at_a_comment_is_refused(tmp_path, capsys):
    folder = tmp_path / "wheels #1"
    folder.mkdir()
    lock = local_wheel_lock(folder)
    assert export(lock, tmp_path / "requirements.txt") == 2
    assert "the folder of demo-1.0-py3-none-any.whl" in capsys.readouterr().err


def test_a_lock_is_never_written_with_a_line_break_in_a_value(policy, stack_wheels, tmp_path):
    """`envcheck lock --from-env` takes paths from the target's metadata: an editable source at a path with a line
    break stops the lock instead of reaching it."""
    stack = [d for d in STACK if d.name != "numpy"] + [dist("numpy", "2.3.0", editable="/src/num\n--index-url x/py")]
    with pytest.raises(UsageError, match=r"key 'packages\[\d+\]\.directory\.path' holds U\+000A"):
        build_lock(interpreter(*stack), policy, wheelhouse=Wheelhouse([stack_wheels]), lock_dir=tmp_path)


def test_a_torch_index_the_lock_names_keeps_no_secret(policy):
    """Where torch came from the torch index, the lock names it without user info or query (a lock is shared)."""
    from envcheck.lock.build import _tool_table

    tool = _tool_table(policy, "3.12", "13.0", "https://me:hunter2@h.example/simple?private_token=hunter2")
    assert tool["torch-index"] == "https://h.example/simple"
    assert "torch-index" not in _tool_table(policy, "3.12", "13.0")
