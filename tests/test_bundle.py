"""envcheck bundle and fix --bundle: the pure parts as tables, and the whole route for real: a 3.12 venv locked,
bundled (wheels by hash, CUTLASS as a git bundle from a real repository), cut into parts, reassembled, and installed
into a fresh 3.12 venv that holds only torch, with no index and no git remote.

torch is a small stand-in wheel of the same name and version made by tests/wheelfactory.py (torch 2.13.0, CUDA
13.0 in its version.py): the real cp312 wheel is gigabytes, and `--without torch` leaves it out of the bundle anyway.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from packaging.pylock import Pylock

from conftest import _torch_files, git, python312
from mutations import applied, mutations, spelled

from envcheck.bundle.gitbundle import cone_patterns
from envcheck.bundle.make import select_packages
from envcheck.bundle.manifest import BundleError, Platform
from envcheck.bundle.parts import parse_size, reassemble, split
from envcheck.cli import main
from wheelfactory import build_wheel, make_venv, pip

# --------------------------------------------------------------------------------------------------------------
# Pure parts


@pytest.mark.parametrize("text, size", [
    ("65536", 65536), ("1K", 1024), ("40M", 40 << 20), ("40MiB", 40 << 20), ("40mb", 40 << 20), ("1G", 1 << 30),
    (" 2 M ", 2 << 20),
])
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "M", "-1M", "1.5M", "1T", "1023", "0", "40 megabytes"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError):
        parse_size(text)


def lock_of(*packages: dict) -> Pylock:
    return Pylock.from_dict({"lock-version": "1.0", "created-by": "t", "packages": list(packages)})


def pkg(name, version="1.0", deps=(), marker=None, vcs=False):
    entry = {"name": name, "version": version}
    if deps:
        entry["dependencies"] = [{"name": d} for d in deps]
    if marker:
        entry["marker"] = marker
    if vcs:
        entry["vcs"] = {"type": "git", "url": "https://example.com/r", "commit-id": "a" * 40}
    else:
        entry["wheels"] = [{"name": f"{name.replace('-', '_')}-{version}-py3-none-any.whl", "url": "https://x/y.whl", "hashes": {"sha256": "0" * 64}}]
    return entry


STACK = lock_of(
    pkg("torch", "2.13.0", deps=("triton", "cuda-bindings", "typing-extensions")),
    pkg("triton", "3.6.0"),
    pkg("cuda-bindings", "13.3.1"),
    pkg("nvidia-cutlass-dsl", "4.3.5", deps=("cuda-python", "typing-extensions")),
    pkg("cuda-python", "13.3.1", deps=("cuda-bindings",)),
    pkg("typing-extensions", "4.15.0"),
    pkg("torch-c-dlpack-ext", "0.1.5", deps=("torch",)),
    pkg("pywin", "1", marker="sys_platform == 'win32'"),
    pkg("cutlass-api", "0.1.0a1", deps=("nvidia-cutlass-dsl", "torch", "torch-c-dlpack-ext"), vcs=True),
)
LINUX = Platform.linux().environment()


@pytest.mark.parametrize("without, present, kept", [
    ((), {}, ["torch", "triton", "cuda-bindings", "nvidia-cutlass-dsl", "cuda-python", "typing-extensions",
              "torch-c-dlpack-ext", "cutlass-api"]),
    (("torch",), {}, ["cuda-bindings", "nvidia-cutlass-dsl", "cuda-python", "typing-extensions", "torch-c-dlpack-ext",
                      "cutlass-api"]),  # triton goes with torch; cuda-bindings stays, cuda-python needs it
    (("Torch",), {"typing-extensions", "cuda_bindings"},
     ["nvidia-cutlass-dsl", "cuda-python", "torch-c-dlpack-ext", "cutlass-api"]),
    (("torch", "cutlass-api"), {}, []),  # dlpack is needed only by cutlass_api: it goes too, and so does the rest
])
def test_select_packages(without, present, kept):
    packages, notes = select_packages(STACK.packages, LINUX, without, present)
    assert [p.name for p in packages] == kept
    assert any("pywin: its marker excludes" in n for n in notes)


@pytest.mark.parametrize("markers, problem", [
    ({"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "linux", "platform_machine": "x86_64"}, None),
    ({"implementation_name": "cpython", "python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}, "python_version"),
    ({"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "linux", "platform_machine": "aarch64"}, "platform_machine"),
    ({"implementation_name": "cpython", "python_version": "3.12", "sys_platform": "darwin", "platform_machine": "x86_64"}, "sys_platform"),
    ({"implementation_name": "pypy", "python_version": "3.12", "sys_platform": "linux", "platform_machine": "x86_64"}, "implementation_name"),
])
def test_platform_mismatch(markers, problem):
    why = Platform.linux("3.12").mismatch(markers)
    assert (why.split(" ")[0] if why else None) == problem


@pytest.mark.parametrize("subdir, patterns", [
    ("python/cutlass_api", "/*\n!/*/\n/python/\n!/python/*/\n/python/cutlass_api/\n"),
    ("operators", "/*\n!/*/\n/operators/\n"),
])
def test_cone_patterns(subdir, patterns):
    assert cone_patterns(subdir) == patterns


# --------------------------------------------------------------------------------------------------------------
# Parts


@pytest.fixture
def whole(tmp_path) -> Path:
    path = tmp_path / "b.tar"
    path.write_bytes(os.urandom(10_000))
    return path


def test_parts_reassemble_with_their_checksums(whole, tmp_path):
    data = whole.read_bytes()
    index = split(whole, 4096)
    assert [p.size for p in index.parts] == [4096, 4096, 1808] and not whole.exists()
    assert [p.name for p in index.parts] == ["b.tar.part01-of-03", "b.tar.part02-of-03", "b.tar.part03-of-03"]
    out = reassemble(tmp_path / "b.tar.parts.json", tmp_path / "again" / "b.tar")
    assert out.read_bytes() == data


@pytest.mark.parametrize("damage, named", [
    (lambda d: (d / "b.tar.part02-of-03").unlink(), "part 2 of 3 is missing"),
    (lambda d: (d / "b.tar.part02-of-03").write_bytes(b"x" * 4096), "b.tar.part02-of-03: does not match its sha256"),
    (lambda d: (d / "b.tar.part03-of-03").write_bytes(b"x"), "b.tar.part03-of-03: 1 bytes, the index says 1808"),
    (lambda d: (d / "b.tar.parts.json").write_text("{"), "b.tar.parts.json: not valid JSON"),
    (lambda d: ((d / "b.tar.parts.json").unlink(), os.mkfifo(d / "b.tar.parts.json")), "not a regular file (a FIFO)"),
    (lambda d: (d / "b.tar.parts.json").write_text('{"kind": "envcheck-bundle-parts", "file": "b.tar", "size": 1,'
                                                  ' "sha256": "", "parts": [{"name": "../x", "size": 1, "sha256": ""}]}'),
     "part name '../x'"),
])
def test_a_damaged_part_is_named(whole, tmp_path, damage, named):
    split(whole, 4096)
    damage(tmp_path)
    with pytest.raises(BundleError, match=named.replace("(", r"\(").replace(")", r"\)")):
        reassemble(tmp_path / "b.tar.parts.json", tmp_path / "again" / "b.tar")
    assert not (tmp_path / "again" / "b.tar").exists()


# --------------------------------------------------------------------------------------------------------------
# The whole route, for real


NO_NETWORK = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
              "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "GIT_ALLOW_PROTOCOL": "file"}


@pytest.fixture
def route(tmp_path, wheelhouse, cutlass_repo, build_backend):
    """A locked 3.12 stack (torch 2.13 stand-in), and its bundle cut into parts of 8 KiB."""
    python = python312()
    if python is None:
        pytest.skip("cutlass_api needs Python >= 3.12 and none is on this machine")
    build_wheel(wheelhouse, "torch", "2.13.0+cu130", _torch_files("2.13.0+cu130", "13.0"), requires=["cuda-bindings>=13.0.3,<14"])
    source = make_venv(tmp_path / "source", python)
    pip(source, "install", "--no-index", "--find-links", str(wheelhouse), "torch==2.13.0+cu130", "nvidia-cutlass-dsl==4.3.5",
        "apache-tvm-ffi==0.1.7", "torch-c-dlpack-ext==0.1.5", "nvidia-matmul-heuristics==0.1.0.27", "cuda-python==13.3.1")
    pip(source, "install", "--no-deps", "--no-index", "--find-links", str(build_backend), "-e", str(cutlass_repo / "python" / "cutlass_api"))
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    lock = tmp_path / "lock" / "pylock.toml"
    lock.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["lock", "--python", str(source), "--policy", str(profile), "--no-index", "--find-links", str(wheelhouse), "-o", str(lock)]) == 0
    out = tmp_path / "out" / "recipe.tar"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    assert main(["bundle", "--profile", str(profile), "--lock", str(lock), "--without", "torch", "--no-index",
                 "--find-links", str(wheelhouse), "--find-links", str(build_backend), "-o", str(out), "--split", "64K"]) == 0
    return python, profile, lock, out


def installed(python: Path) -> dict[str, str]:
    from envcheck.gather.interpreter import gather_interpreter

    return {d.name: d.version for d in gather_interpreter(str(python)).distributions}


@pytest.mark.slow
@pytest.mark.slow
def test_bundle_route(route, wheelhouse, tmp_path, monkeypatch, capsys):
    python, profile, lock, out = route
    index = json.loads(out.with_name("recipe.tar.parts.json").read_text())
    assert len(index["parts"]) >= 2 and all(p["size"] <= 64 << 10 for p in index["parts"]) and not out.exists()

    # Reassembled here, the tar holds the manifest, the lock, the wheels and the git bundle.
    whole = reassemble(out.with_name("recipe.tar.parts.json"), tmp_path / "check" / "recipe.tar")
    with tarfile.open(whole) as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("manifest.json"))
    assert names[0] == "manifest.json" and "pylock.toml" in names and "cutlass.bundle" in names
    wheels = sorted(n.split("/")[1].split("-")[0] for n in names if n.startswith("wheels/"))
    assert "torch" not in wheels and "nvidia_cutlass_dsl" in wheels and "setuptools" in wheels
    assert manifest["platform"]["python_version"] == "3.12" and manifest["without"] == ["torch"]
    assert {f["role"] for f in manifest["files"]} == {"wheel", "build", "lock", "git-bundle"}

    # Only the parts and their index travel to a target that holds torch alone (installed --no-deps).
    moved = tmp_path / "moved"
    moved.mkdir()
    for part in [p["name"] for p in index["parts"]] + ["recipe.tar.parts.json"]:
        shutil.copy(out.parent / part, moved / part)
    target = make_venv(tmp_path / "target", python)
    pip(target, "install", "--no-deps", "--no-index", "--find-links", str(wheelhouse), "torch==2.13.0+cu130")
    for key, value in NO_NETWORK.items():  # any attempt to reach an index or a remote fails
        monkeypatch.setenv(key, value)
    capsys.readouterr()
    argv = ["fix", "--python", str(target), "--policy", str(profile), "--bundle", str(moved / "recipe.tar.parts.json"),
            "--no-gpu", "--cutlass-dir", str(tmp_path / "cutlass"), "--yes", "--json"]
    main(argv)
    document = json.loads(capsys.readouterr().out)
    assert document["outcome"]["ok"], [(s["what"], s["why"]) for s in document["plan"]["steps"]]
    kinds = [s["kind"] for s in document["plan"]["steps"]]
    assert kinds == ["pip-install", "cutlass-fetch", "cutlass-install"]
    assert all("--no-index" in argv for s in document["plan"]["steps"] if s["kind"] != "cutlass-fetch" for argv in s["commands"])

    # Exactly the locked stack: every locked package at its locked version, torch as it was, nothing else.
    locked = {p.name: str(p.version) for p in __import__("envcheck.lock", fromlist=["read_lock"]).read_lock(lock).packages}
    assert installed(target) == locked
    checkout = tmp_path / "cutlass"
    assert git("rev-parse", "HEAD", cwd=checkout) == manifest["cutlass"]["commit"]
    assert (checkout / "python" / "cutlass_api" / "pyproject.toml").is_file()

    # Again: nothing left to do.
    main(argv)
    again = json.loads(capsys.readouterr().out)
    assert again["plan"]["steps"] == []

    # A corrupted part: exit 2, the part named, nothing changed.
    damaged = tmp_path / "damaged"
    shutil.copytree(moved, damaged)
    part = damaged / index["parts"][-1]["name"]
    part.write_bytes(part.read_bytes()[:-1] + b"!")
    assert main(argv[:5] + ["--bundle", str(damaged / "recipe.tar.parts.json")] + argv[7:]) == 2
    assert f"{part}: does not match its sha256" in capsys.readouterr().err
    assert installed(target) == locked

    # Undo gives back what the bundle changed: torch alone again, the checkout it fetched gone.
    assert main(["fix", "--python", str(target), "--policy", str(profile), "--undo", "--yes"]) == 0
    assert installed(target) == {"torch": "2.13.0+cu130"} and not checkout.exists()


@pytest.mark.slow
def test_a_bundle_for_another_python_is_refused_naming_the_manifest(route, wheelhouse, build_backend, tmp_path, capsys):
    python, profile, lock, _ = route
    other = tmp_path / "py311"
    assert main(["bundle", "--profile", str(profile), "--lock", str(lock), "--without", "torch", "--python-version", "3.11",
                 "--no-index", "--find-links", str(wheelhouse), "--find-links", str(build_backend), "-o", str(other)]) == 0
    target = make_venv(tmp_path / "target", python)
    capsys.readouterr()
    assert main(["fix", "--python", str(target), "--policy", str(profile), "--bundle", str(other), "--no-gpu", "--yes"]) == 2
    err = capsys.readouterr().err
    assert "manifest.json says the bundle is for CPython 3.11 on linux x86_64" in err and "python_version is '3.12'" in err
    assert installed(target) == {}


# --------------------------------------------------------------------------------------------------------------
# Opening a bundle: every way it can be wrong is exit 2 naming the part, before anything is planned


def hand_bundle(folder: Path, lock_digest: str | None = None, lock_extra: str = "") -> Path:
    """A small bundle folder written by hand: one wheel, its lock entry, the manifest."""
    from envcheck.bundle.manifest import BundleFile, Manifest, sha256_of, write_manifest

    wheel = build_wheel(folder / "wheels", "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    digest = sha256_of(wheel)
    (folder / "pylock.toml").write_text(
        'lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
        f'wheels = [{{ name = "{wheel.name}", url = "https://x/{wheel.name}", hashes = {{ sha256 = "{lock_digest or digest}" }} }}]\n'
        + lock_extra
    )
    files = (
        BundleFile(f"wheels/{wheel.name}", wheel.stat().st_size, digest, "wheel"),
        BundleFile("pylock.toml", (folder / "pylock.toml").stat().st_size, sha256_of(folder / "pylock.toml"), "lock"),
    )
    write_manifest(Manifest("torch-2.11-nvgemm", Platform.linux(), files), folder)
    return wheel


def test_a_good_hand_made_bundle_opens(tmp_path):
    from envcheck.bundle import open_bundle

    hand_bundle(tmp_path / "b")
    opened = open_bundle(tmp_path / "b", tmp_path / "cache")
    assert opened.manifest.profile == "torch-2.11-nvgemm" and len(opened.manifest.of("wheel")) == 1


@pytest.mark.parametrize("damage, message", [
    (lambda b, w: (b / "extra.txt").write_text("x"), "extra.txt is not in the manifest"),
    (lambda b, w: w.write_bytes(w.read_bytes() + b"x"), "bytes, the manifest says"),
    (lambda b, w: w.write_bytes(w.read_bytes()[:-1] + b"x"), "does not match its sha256 in the manifest"),
    (lambda b, w: w.unlink(), "apache_tvm_ffi-0.1.7-py3-none-any.whl is missing"),
    (lambda b, w: (b / "manifest.json").unlink(), "manifest.json: missing"),
    (lambda b, w: (b / "manifest.json").write_text("{"), "not valid JSON"),
    (lambda b, w: (b / "manifest.json").write_text((b / "manifest.json").read_text().replace("wheels/apache", "../apache")),
     "expected a relative path inside the bundle"),
])
def test_a_damaged_bundle_folder_is_named(tmp_path, damage, message):
    from envcheck.bundle import open_bundle

    wheel = hand_bundle(tmp_path / "b")
    damage(tmp_path / "b", wheel)
    with pytest.raises(BundleError, match=message.replace(".", r"\.")):
        open_bundle(tmp_path / "b", tmp_path / "cache")


# --------------------------------------------------------------------------------------------------------------
# What fix installs from a bundle is what was checked (issue 24): a private copy, read through no link


def _planted_wheel(folder: Path, marker: Path, build: str = "") -> Path:
    """apache-tvm-ffi 0.1.7 whose .pth writes `marker` when the environment starts: code that must never run."""
    made = build_wheel(folder / ".planted", "apache-tvm-ffi", "0.1.7", {
        "tvm_ffi/__init__.py": "", "zz_owned.pth": f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"})
    return made.rename(folder / made.name.replace("-0.1.7-", f"-0.1.7-{build}-" if build else "-0.1.7-"))


def test_a_folder_bundle_whose_wheels_folder_is_a_link_is_refused(tmp_path):
    """os.walk does not enter a linked wheels/: a build-tagged wheel beside the real one there, which pip prefers,
    went unchecked. A bundle is read through no link."""
    from envcheck.bundle import open_bundle

    bundle = tmp_path / "b"
    wheel = hand_bundle(bundle)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(bundle / "wheels", elsewhere)
    _planted_wheel(elsewhere, tmp_path / "owned", build="1")
    (bundle / "wheels").symlink_to(elsewhere, target_is_directory=True)
    assert (bundle / "wheels" / wheel.name).is_file()  # the listed wheel is there, through the link
    with pytest.raises(BundleError, match=r"wheels is a symbolic link: a bundle is read through no link"):
        open_bundle(bundle, tmp_path / "cache")


@pytest.mark.parametrize("link", ["wheel", "manifest", "lock"])
def test_a_listed_file_that_is_a_link_is_refused(tmp_path, link):
    from envcheck.bundle import open_bundle

    bundle = tmp_path / "b"
    wheel = hand_bundle(bundle)
    path = {"wheel": wheel, "manifest": bundle / "manifest.json", "lock": bundle / "pylock.toml"}[link]
    moved = tmp_path / path.name
    shutil.move(path, moved)
    path.symlink_to(moved)
    with pytest.raises(BundleError, match=rf"{path.name} is a symbolic link|{path.name}: a symbolic link"):
        open_bundle(bundle, tmp_path / "cache")


def test_pip_sees_exactly_the_checked_files_and_a_wheel_swapped_after_the_check_is_not_installed(tmp_path):
    """The folder is copied as it is checked, and pip installs from the copy: a wheel replaced in the user's folder
    between the check and pip's install (with one whose .pth runs code) is not the one installed."""
    from envcheck.bundle import open_bundle

    bundle = tmp_path / "b"
    wheel = hand_bundle(bundle)
    opened = open_bundle(bundle, tmp_path / "cache")
    marker = tmp_path / "owned"
    swapped = _planted_wheel(tmp_path / "evil", marker)
    shutil.copyfile(swapped, wheel)  # after the check, before the install
    target = make_venv(tmp_path / "venv")
    pip(target, "install", "--no-index", "--find-links", str(opened.wheels), "--no-deps", "apache-tvm-ffi==0.1.7")
    subprocess.run([str(target), "-c", "pass"], check=True)
    assert not marker.exists(), "the wheel swapped in after the check was installed, and its .pth ran"
    assert installed(target) == {"apache-tvm-ffi": "0.1.7"}
    copied = sorted(p.relative_to(opened.folder).as_posix() for p in opened.folder.rglob("*") if p.is_file())
    assert copied == sorted([f.path for f in opened.manifest.files] + ["manifest.json"])
    assert not (opened.folder.stat().st_mode & 0o077) and not (opened.folder.parent.stat().st_mode & 0o077)


def test_a_copy_made_before_is_used_only_when_it_checks_again(tmp_path):
    from envcheck.bundle import open_bundle

    bundle = tmp_path / "b"
    hand_bundle(bundle)
    first = open_bundle(bundle, tmp_path / "cache")
    copy = next(first.wheels.iterdir())
    copy.write_bytes(copy.read_bytes()[:-1] + b"x")  # the cached copy changed
    again = open_bundle(bundle, tmp_path / "cache")
    assert again.folder == first.folder and copy.read_bytes() == next((bundle / "wheels").iterdir()).read_bytes()


@pytest.mark.parametrize("extra, key", [("size = " + "9" * 5000 + "\n", "key packages.size"),
                                        ("size = inf\n", "key packages[0].size"), ("[a]\nb = 0x" + "f" * 40 + "\n", "key a.b")])
def test_a_bundles_lock_with_a_number_no_one_computes_with_is_exit_2_naming_it(tmp_path, capsys, extra, key):
    hand_bundle(tmp_path / "b", lock_extra=extra)
    assert main(["fix", "--bundle", str(tmp_path / "b"), "--yes", "--no-gpu"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'b'}: pylock.toml: {key}" in err and "Traceback" not in err


def test_a_tar_member_with_a_nul_byte_is_refused_naming_it(tmp_path, capsys):
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("wheels/a.whl")
        info.pax_headers = {"path": "wheels/a\0b.whl"}  # the path as a PAX record: a NUL byte survives there
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    assert main(["fix", "--bundle", str(evil), "--yes", "--no-gpu"]) == 2
    err = capsys.readouterr().err
    assert "'wheels/a\\x00b.whl' is not a plain file inside the bundle: refused" in err and "Traceback" not in err


@pytest.mark.parametrize("field, value, message", [
    ("commit", "e594def95", "not a full commit id: 'e594def95'"),
    ("branch", "--upload-pack=evil", "not a branch name"),
    ("subdir", "../outside", "not a relative path"),
    ("subdir", "python/$(id)", "not a relative path"),  # what a profile's subdir may not hold either (gitsafe)
])
def test_a_manifests_cutlass_entry_is_checked_before_git_sees_it(tmp_path, field, value, message):
    import json

    from envcheck.bundle.manifest import read_manifest

    hand_bundle(tmp_path / "b")
    data = json.loads((tmp_path / "b" / "manifest.json").read_text())
    data["cutlass"] = {"file": "cutlass.bundle", "url": "https://github.com/NVIDIA/cutlass", "branch": "cutlass_api",
                       "commit": "e594def95e1c73ad9d5517ab28b80d691127dd1c", "subdir": "python/cutlass_api", field: value}
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(BundleError, match=f"cutlass: {message}"):
        read_manifest(tmp_path / "b")


def test_a_wheel_the_lock_hashes_otherwise_is_refused(tmp_path):
    from envcheck.bundle import open_bundle

    hand_bundle(tmp_path / "b", lock_digest="1" * 64)
    with pytest.raises(BundleError, match="does not match the lock's sha256"):
        open_bundle(tmp_path / "b", tmp_path / "cache")


def test_a_hostile_tar_is_refused_and_writes_nothing_outside(tmp_path, capsys):
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        data = b"owned"
        info = tarfile.TarInfo("../../escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert main(["fix", "--bundle", str(evil), "--yes", "--no-gpu"]) == 2
    assert "'../../escaped.txt' is not a plain file inside the bundle" in capsys.readouterr().err
    assert not list(tmp_path.parent.parent.glob("escaped.txt")) and not list(tmp_path.rglob("escaped.txt"))


@pytest.mark.parametrize("argv, message", [
    (["bundle", "-o", "x", "--split", "40M", "--lock", "l"], "--split needs -o FILE.tar"),
    (["bundle", "-o", "x.tar", "--split", "lots"], "--split 'lots'"),
    (["bundle", "-o", "x", "--only-missing"], "--only-missing needs --python"),
    (["bundle", "-o", "x", "--python-version", "three"], "--python-version 'three'"),
    (["bundle", "-o", "x", "--index-url", "ftp://x"], "--index-url"),
    (["bundle", "-o", "x", "--without", "-r /etc/passwd"], "--without '-r /etc/passwd'"),
    (["fix", "--bundle", "/no/such/bundle", "--yes"], "--bundle /no/such/bundle: no such file or folder"),
    (["fix", "--bundle", ".", "--find-links", ".", "--yes"], "--bundle brings its own packages"),
    (["fix", "--bundle", "/no/such.tar.part01-of-02", "--yes"], "such.tar.parts.json: missing"),
])
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_fix_refuses_a_bundle_of_another_profile(tmp_path, capsys):
    hand_bundle(tmp_path / "b")
    manifest = tmp_path / "b" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"torch-2.11-nvgemm"', '"other-profile"'))
    assert main(["fix", "--bundle", str(tmp_path / "b"), "--yes", "--no-gpu"]) == 2
    assert "made for profile 'other-profile'" in capsys.readouterr().err


def test_a_bundle_from_the_profile_alone(tmp_path, wheelhouse, cutlass_repo, build_backend):
    """No lock given: the profile is resolved for the target (uv, from --find-links here), and --without torch keeps
    torch, and what only torch would bring, out of the resolution and the bundle."""
    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    out = tmp_path / "b"
    assert main(["bundle", "--profile", str(profile), "--without", "torch", "--no-index", "--find-links", str(wheelhouse),
                 "--find-links", str(build_backend), "-o", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    wheels = sorted(f["path"].split("/")[1].split("-")[0] for f in manifest["files"] if f["role"] == "wheel")
    assert wheels == ["apache_tvm_ffi", "cuda_bindings", "cuda_python", "nvidia_cutlass_dsl", "nvidia_matmul_heuristics",
                      "torch_c_dlpack_ext"]
    assert manifest["cutlass"]["commit"] == commit and (out / "cutlass.bundle").is_file()
    from envcheck.lock import read_lock

    assert "torch" not in {p.name for p in read_lock(out / "pylock.toml").packages}


@pytest.mark.parametrize("right_hash", [True, False])
def test_every_wheel_is_downloaded_by_its_locked_hash_and_a_failure_leaves_nothing(tmp_path, capsys, right_hash):
    from envcheck.bundle.manifest import sha256_of

    wheel = build_wheel(tmp_path / "lock" / "wh", "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": ""})
    digest = sha256_of(wheel) if right_hash else "1" * 64
    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
                    f'wheels = [{{ name = "{wheel.name}", path = "wh/{wheel.name}", hashes = {{ sha256 = "{digest}" }} }}]\n')
    out = tmp_path / "out"
    code = main(["bundle", "--profile", "torch-2.11-nvgemm", "--lock", str(lock), "--no-index", "-o", str(out)])
    if right_hash:
        assert code == 0 and (out / "wheels" / wheel.name).read_bytes() == wheel.read_bytes()
    else:
        assert code == 1 and "THESE PACKAGES DO NOT MATCH THE HASHES" in capsys.readouterr().err
        assert not out.exists() and not list(tmp_path.glob(".out.*"))


def _small_lock(tmp_path: Path) -> Path:
    wheel = build_wheel(tmp_path / "lock" / "wh", "apache-tvm-ffi", "0.1.7", {"tvm_ffi/__init__.py": "x" * 5000})
    from envcheck.bundle.manifest import sha256_of

    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
                    f'wheels = [{{ name = "{wheel.name}", path = "wh/{wheel.name}", hashes = {{ sha256 = "{sha256_of(wheel)}" }} }}]\n')
    return lock


def test_bundle_writes_its_tar_parts_and_index_through_no_link_planted_beside_them(tmp_path):
    """-o B.tar --split: B.tar.partial, each part and the index are new files renamed into place; links planted at
    those names beforehand (to the user's files) are replaced, and what they point to is untouched."""
    lock = _small_lock(tmp_path)
    out = tmp_path / "out" / "b.tar"
    out.parent.mkdir(exist_ok=True)  # envcheck makes no folder for -o
    argv = ["bundle", "--profile", "torch-2.11-nvgemm", "--lock", str(lock), "--no-index", "-o", str(out), "--split", "2K"]
    assert main(argv) == 0
    names = sorted(p.name for p in out.parent.iterdir())
    assert names[-1] == "b.tar.parts.json" and len(names) > 2
    shutil.rmtree(out.parent)
    out.parent.mkdir()
    victims = {}
    for name in [*names, "b.tar", "b.tar.partial"]:
        victim = tmp_path / "mine" / f"{name}.txt"
        victim.parent.mkdir(exist_ok=True)
        victim.write_text(f"my {name}\n")
        (out.parent / name).symlink_to(victim)
        victims[victim] = victim.read_bytes()
    (out.parent / "b.tar").unlink()  # -o itself a link is refused (below); the links beside it are the attack
    assert main(argv) == 0
    assert {v: v.read_bytes() for v in victims} == victims, "a file was written through a link envcheck found there"
    for name in names:
        assert (out.parent / name).is_file() and not (out.parent / name).is_symlink()
    assert reassemble(out.parent / "b.tar.parts.json", tmp_path / "whole.tar").stat().st_size > 2048


@pytest.mark.parametrize("name, words", [
    ("b.tar", "a symbolic link: expected a new folder, or FILE.tar"),
    ("b", "a symbolic link: expected a new folder, or FILE.tar"),
])
def test_bundle_o_naming_a_link_to_a_folder_exits_2_naming_it(tmp_path, capsys, name, words):
    (tmp_path / "folder").mkdir()
    (tmp_path / name).symlink_to(tmp_path / "folder", target_is_directory=True)
    assert main(["bundle", "--profile", "torch-2.11-nvgemm", "--lock", str(_small_lock(tmp_path)), "--no-index",
                 "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert f"-o {tmp_path / name}: {words}" in err and not any((tmp_path / "folder").iterdir())


def test_bundle_o_naming_a_folder_as_its_tar_exits_2(tmp_path, capsys):
    (tmp_path / "b.tar").mkdir()
    assert main(["bundle", "--profile", "torch-2.11-nvgemm", "--lock", str(_small_lock(tmp_path)), "--no-index",
                 "-o", str(tmp_path / "b.tar")]) == 2
    assert "a folder: expected FILE.tar" in capsys.readouterr().err


def test_only_missing_downloads_for_the_target_s_python_not_envcheck_s(tmp_path, capsys):
    """`--only-missing --python T` takes T's Python (a 3.11 target got cp312 wheels, which fix then refused): of a
    package locked with a cp311 and a cp312 wheel, the bundle carries the target's; a --python-version other than the
    target's is refused naming both, before anything is written."""
    from envcheck.bundle.manifest import sha256_of

    own = f"{sys.version_info.major}.{sys.version_info.minor}"
    other = "3.12" if own != "3.12" else "3.11"
    tags = {version: f"cp{version.replace('.', '')}-cp{version.replace('.', '')}-manylinux_2_28_x86_64"
            for version in (own, other)}
    wheels = {v: build_wheel(tmp_path / "lock" / "wh", "nvidia-matmul-heuristics", "0.1.0.27", {"m.py": ""}, tag=t)
              for v, t in tags.items()}
    entries = ", ".join(f'{{ name = "{w.name}", path = "wh/{w.name}", hashes = {{ sha256 = "{sha256_of(w)}" }} }}'
                        for w in wheels.values())
    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "nvidia-matmul-heuristics"\n'
                    f'version = "0.1.0.27"\nwheels = [{entries}]\n\n[tool.envcheck]\nprofile = "torch-2.11-nvgemm"\n')
    out = tmp_path / "out"
    args = ["bundle", "--only-missing", "--python", sys.executable, "--lock", str(lock), "--no-index",
            "--profile", "torch-2.11-nvgemm", "-o"]  # a recipe's lock; this venv has no torch
    assert main([*args, str(out), "--python-version", other]) == 2
    assert (f"--python-version {other}: the target --python {sys.executable} is Python {own}"
            in capsys.readouterr().err) and not out.exists()
    assert main([*args, str(out)]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in (out / "wheels").iterdir()) == [wheels[own].name]
    assert json.loads((out / "manifest.json").read_text())["platform"]["python_version"] == own


@pytest.fixture
def machine_lock(tmp_path) -> tuple[Path, dict]:
    """A lock of one package with a wheel per machine and glibc (x86_64 2.28; aarch64 2.28 and 2.34), by tag."""
    from envcheck.bundle.manifest import sha256_of

    tags = ("py3-none-manylinux_2_28_x86_64", "py3-none-manylinux_2_28_aarch64", "py3-none-manylinux_2_34_aarch64")
    wheels = {t: build_wheel(tmp_path / "lock" / "wh", "nvidia-matmul-heuristics", "0.1.0.27", {"m.py": ""}, tag=t)
              for t in tags}
    entries = ", ".join(f'{{ name = "{w.name}", path = "wh/{w.name}", hashes = {{ sha256 = "{sha256_of(w)}" }} }}'
                        for w in wheels.values())
    lock = tmp_path / "lock" / "pylock.toml"
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "nvidia-matmul-heuristics"\n'
                    f'version = "0.1.0.27"\nwheels = [{entries}]\n\n[tool.envcheck]\nprofile = "torch-2.11-nvgemm"\n')
    return lock, {tag.split("-", 2)[2]: wheel.name for tag, wheel in wheels.items()}


@pytest.mark.parametrize("platform, wheel, machine", [
    (None, "manylinux_2_28_x86_64", "x86_64"),  # as before: x86_64, any glibc
    ("x86_64-manylinux_2_28", "manylinux_2_28_x86_64", "x86_64"),
    ("aarch64-manylinux_2_28", "manylinux_2_28_aarch64", "aarch64"),  # not 2.34's: it would not run there
    ("aarch64-unknown-linux-gnu", "manylinux_2_28_aarch64", "aarch64"),  # uv's name for the same
    ("aarch64-manylinux_2_40", "manylinux_2_34_aarch64", "aarch64"),  # the newest that runs there
])
def test_bundle_platform_downloads_that_platform_s_wheels(machine_lock, tmp_path, platform, wheel, machine, capsys):
    """bundle --platform NAME, as lock takes it (issue 26): pip downloads the wheel for that machine and glibc, and the
    manifest names the platform, which fix --bundle holds a target against."""
    lock, by_tag = machine_lock
    out = tmp_path / "out"
    argv = ["bundle", "--lock", str(lock), "--no-index", "--profile", "torch-2.11-nvgemm", "-o", str(out)] + (
        ["--platform", platform] if platform else [])
    assert main(argv) == 0, capsys.readouterr().err
    assert [p.name for p in (out / "wheels").iterdir()] == [by_tag[wheel]]
    manifest = json.loads((out / "manifest.json").read_text())["platform"]
    assert manifest["machine"] == machine and manifest["tags"][-1] == f"manylinux2014_{machine}"
    assert manifest["tags"][0] == (f"manylinux_2_{platform.rsplit('_', 1)[-1]}_{machine}"
                                   if platform and "manylinux_2_" in platform else
                                   f"manylinux_2_28_{machine}" if platform else f"manylinux_2_39_{machine}")


@pytest.mark.parametrize("platform, words", [
    ("aarch64-apple-darwin", "a bundle is for glibc Linux"),
    ("x86_64-pc-windows-msvc", "a bundle is for glibc Linux"),
    ("x86_64-unknown-linux-musl", "a bundle is for glibc Linux"),
    ("x86_64 manylinux", "expected a uv platform such as x86_64-manylinux_2_28"),  # lock's own words
    ("--index-url=x", "expected a uv platform"),
])
def test_bundle_refuses_a_platform_it_cannot_build_for(machine_lock, tmp_path, platform, words, capsys):
    out = tmp_path / "out"
    assert main(["bundle", "--lock", str(machine_lock[0]), "--no-index", "-o", str(out), f"--platform={platform}"]) == 2
    assert f"--platform {platform!r}: {words}" in capsys.readouterr().err and not out.exists()


def test_bundle_platform_of_another_machine_than_the_target_s_is_refused(machine_lock, tmp_path, capsys):
    import platform as host

    other = "aarch64" if host.machine() != "aarch64" else "x86_64"
    out = tmp_path / "out"
    assert main(["bundle", "--only-missing", "--python", sys.executable, "--lock", str(machine_lock[0]), "--no-index",
                 "-o", str(out), "--platform", f"{other}-manylinux_2_28"]) == 2
    assert f"--platform {other}-manylinux_2_28: the target --python {sys.executable} runs on {host.machine()}" \
        in capsys.readouterr().err and not out.exists()


def test_bundle_platform_resolves_the_lock_for_it(wheelhouse, cutlass_repo, build_backend, tmp_path, capsys):
    """Without --lock, the profile is resolved by uv for --platform, as `envcheck lock --platform` does: the bundle's
    lock says so, and its environments marker holds on that machine."""
    from envcheck.lock import read_lock

    commit = git("rev-parse", "HEAD", cwd=cutlass_repo)
    profile = tmp_path / "profile.toml"
    profile.write_text(f'extends = "torch-2.11-nvgemm"\n\n[cutlass]\nurl = "{cutlass_repo.as_uri()}"\ncommit = "{commit}"\n')
    out = tmp_path / "out"
    assert main(["bundle", "--profile", str(profile), "--without", "torch", "--no-index", "--find-links", str(wheelhouse),
                 "--find-links", str(build_backend), "--platform", "aarch64-manylinux_2_28", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    assert "for CPython 3.12 on aarch64-manylinux_2_28" in capsys.readouterr().err
    lock = read_lock(out / "pylock.toml")
    assert lock.tool["envcheck"]["resolved"]["platform"] == "aarch64-manylinux_2_28"
    aarch64 = {"sys_platform": "linux", "platform_machine": "aarch64", "implementation_name": "cpython", "python_version": "3.12"}
    assert lock.environments[0].evaluate(aarch64)
    assert not lock.environments[0].evaluate({**aarch64, "platform_machine": "x86_64"})
    assert json.loads((out / "manifest.json").read_text())["platform"]["machine"] == "aarch64"


# --------------------------------------------------------------------------------------------------------------
# Reading a bundle is strict (issue 15): every key of its type and no other, at every level; never a traceback


def _rewrite(folder: Path, change) -> None:
    """Change the manifest (a function of its JSON), keeping every other file's size and sha256 in it true."""
    from envcheck.bundle.manifest import sha256_of

    path = folder / "manifest.json"
    data = json.loads(path.read_text())
    for entry in data["files"]:
        if (folder / entry["path"]).is_file():
            entry["size"], entry["sha256"] = (folder / entry["path"]).stat().st_size, sha256_of(folder / entry["path"])
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _with_cutlass(folder: Path) -> None:
    """The hand bundle with a CUTLASS entry and its git-bundle file (not a real git bundle: reading stops before)."""
    (folder / "cutlass.bundle").write_bytes(b"not read by the manifest's checks")

    def add(data):
        data["cutlass"] = {"file": "cutlass.bundle", "url": "https://github.com/NVIDIA/cutlass", "branch": "cutlass_api",
                           "commit": "e594def95e1c73ad9d5517ab28b80d691127dd1c", "subdir": "python/cutlass_api"}
        data["files"].append({"path": "cutlass.bundle", "size": 0, "sha256": "0" * 64, "role": "git-bundle"})
    _rewrite(folder, add)
    _rewrite(folder, lambda data: None)  # the new file's size and sha256


def _fix_bundle(folder: Path) -> subprocess.CompletedProcess:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "envcheck", "fix", "--bundle", str(folder), "--dry-run", "--no-gpu"],
                          capture_output=True, text=True, timeout=120)


def _rename_wheel(folder: Path, new: str) -> None:
    old = next((folder / "wheels").iterdir())
    old.rename(folder / "wheels" / new)
    lock = folder / "pylock.toml"
    lock.write_text(lock.read_text().replace(old.name, new))
    _rewrite(folder, lambda data: data["files"][0].update(path=f"wheels/{new}"))


def _lock_hashes_as_array(folder: Path) -> None:
    lock = folder / "pylock.toml"
    text = lock.read_text()
    digest = text.split('sha256 = "')[1].split('"')[0]
    lock.write_text(text.replace(f'hashes = {{ sha256 = "{digest}" }}', f'hashes = ["{digest}"]'))
    _rewrite(folder, lambda data: None)


@pytest.mark.parametrize("damage, message", [
    (lambda b: (_with_cutlass(b), _rewrite(b, lambda d: d["cutlass"].update(file="other.bundle"))),
     "manifest.json: cutlass: file 'other.bundle' is not among the files[] as a git-bundle"),  # was StopIteration
    (_lock_hashes_as_array, "pylock.toml: key packages[0].wheels[0].hashes expected a table, got an array"),  # AttributeError
    (lambda b: _rename_wheel(b, "evil.whl"), "manifest.json: files[0]: 'wheels/evil.whl' is not a wheel's file name"),
    (lambda b: _rewrite(b, lambda d: d.update(surprise=True)), "manifest.json: unknown key 'surprise'"),  # was accepted
    (lambda b: _rewrite(b, lambda d: d["platform"].update(surprise=1)), "unknown key 'platform.surprise'"),
    (lambda b: _rewrite(b, lambda d: d.update(schema=1.0)), "expected kind 'envcheck-bundle' and schema 1"),
    (lambda b: (b / "manifest.json").write_text("[" * 100_000), "nested too deeply"),
])
def test_a_bad_bundle_through_the_cli_exits_2_naming_it(tmp_path, damage, message):
    hand_bundle(tmp_path / "b")
    damage(tmp_path / "b")
    done = _fix_bundle(tmp_path / "b")
    assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_every_mutation_of_a_real_manifest_is_refused_naming_its_key(tmp_path, policy):
    """Fuzz, a little: the manifest write_manifest wrote for a bundle with a CUTLASS entry, each key and item of it
    given every other JSON type, removed, or joined by an unknown key. Each is a BundleError naming the manifest and
    the key, through what `fix --bundle` runs (open_for_fix), never another exception."""
    from envcheck.bundle.offline import open_for_fix

    good = tmp_path / "good"
    hand_bundle(good)
    _with_cutlass(good)
    data = json.loads((good / "manifest.json").read_text())
    cases = list(mutations(data, unknown=True, items=2))
    assert len(cases) > 150
    unchanged = []
    for number, (path, how, value) in enumerate(cases):
        folder = tmp_path / f"m{number}"
        shutil.copytree(good, folder)
        (folder / "manifest.json").write_text(json.dumps(applied(data, path, how, value)))
        if (path, how) == (("cutlass",), "as null"):  # a bundle without CUTLASS: valid (its file is one more file)
            assert open_for_fix(folder, policy, tmp_path / "cache").cutlass_url is None
            continue
        with pytest.raises(BundleError) as refused:
            open_for_fix(folder, policy, tmp_path / "cache")
        text = str(refused.value)
        assert "manifest.json" in text, (path, how, text)
        named = {"kind", "schema"} & set(map(str, path))
        if named:
            assert "expected kind 'envcheck-bundle' and schema 1" in text, (path, how, text)
        elif spelled(path) not in text and spelled(path[:-1]) + ("." if isinstance(path[-1], str) else "") not in text:
            unchanged.append((spelled(path), how, text))
        shutil.rmtree(folder)
    assert unchanged == []


@pytest.mark.slow
@pytest.mark.parametrize("where, applies", [("PIP_CONFIG_FILE", False), ("~/.config", False), ("XDG_CONFIG_DIRS", True)])
def test_bundles_pip_download_reads_the_machine_wide_pip_configuration_only(tmp_path, monkeypatch, where, applies):
    """bundle's pip follows fix's rule (envcheck/piprun): a global file's constraint caps the download, a file
    PIP_CONFIG_FILE names or the user's does not."""
    from envcheck.bundle.make import _run, pip_download_argv

    wheels = tmp_path / "wheels"
    for version in ("1.0", "2.0"):
        build_wheel(wheels, "alpha", version, {"alpha/__init__.py": ""})
    (tmp_path / "c.txt").write_text("alpha<2\n")
    conf = {"PIP_CONFIG_FILE": tmp_path / "named.conf", "~/.config": tmp_path / "home" / ".config" / "pip" / "pip.conf",
            "XDG_CONFIG_DIRS": tmp_path / "xdg" / "pip" / "pip.conf"}[where]
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(f"[global]\nconstraint = {tmp_path / 'c.txt'}\n")
    for name in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / ("xdg" if where == "XDG_CONFIG_DIRS" else "none")))
    if where == "PIP_CONFIG_FILE":
        monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    argv = pip_download_argv(sys.executable, ["alpha==2"], tmp_path / "out", Platform.linux("3.12"),
                             index_url=None, no_index=True, find_links=[str(wheels)])
    done = _run(argv)
    said = done.stdout + done.stderr
    assert (done.returncode != 0 and "(constraint) alpha<2" in said) if applies else done.returncode == 0, said
    assert [p.name for p in (tmp_path / "out").glob("*.whl")] == ([] if applies else ["alpha-2.0-py3-none-any.whl"])


def test_bundle_masks_the_secrets_of_an_index_url_a_pip_file_it_reads_sets(tmp_path):
    """pip prints an index URL's path and query apart from the URL when it cannot reach it; bundle's pip reads the
    machine-wide pip files (piprun), so the secrets of the URLs those files set are masked in what bundle prints, as
    fix masks them (a global file under XDG_CONFIG_DIRS names a closed port, with a secret in its user info and
    query)."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mirror = f"https://me:secret@127.0.0.1:{port}/mirror?k=S3cretValue42"
    conf = tmp_path / "xdg" / "pip" / "pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nindex-url = {mirror}\nretries = 1\ntimeout = 2\n")
    lock = tmp_path / "lock" / "pylock.toml"
    lock.parent.mkdir()
    lock.write_text('lock-version = "1.0"\ncreated-by = "t"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "0.1.7"\n'
                    'wheels = [{ name = "apache_tvm_ffi-0.1.7-py3-none-any.whl", '
                    'url = "https://files.example/apache_tvm_ffi-0.1.7-py3-none-any.whl", '
                    f'hashes = {{ sha256 = "{"1" * 64}" }} }}]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_DIRS=str(tmp_path / "xdg"), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    done = subprocess.run([sys.executable, "-m", "envcheck", "bundle", "--profile", "torch-2.11-nvgemm", "--lock",
                           str(lock), "-o", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    said = done.stdout + done.stderr
    # pip's words are shown, with the path it could not reach ("Retrying ... /mirror?k=.../apache-tvm-ffi/"; pip 26
    # names the host too, pip 23 does not)
    assert done.returncode == 1 and "pip download failed" in said and "/mirror" in said, said
    assert "S3cretValue42" not in said and "secret" not in said, said
