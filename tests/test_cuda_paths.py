"""cuda.paths (issue 25 item 3): the CUDA folders of PATH and LD_LIBRARY_PATH read from real folders made here (an nvcc
file, library files, a toolkit's version.json), judged without a GPU as a table over the boundaries, and through
doctor as a process with the variables set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from factsbuilder import driver, facts, interpreter

from envcheck.gather.paths import read_search_paths
from envcheck.judge import judge
from envcheck.model import CudaFolder, Failure, SearchPaths, Status
from envcheck.profile import load_builtin


def toolkit(root: Path, release: str, libraries=("libcudart.so.13", "libcublas.so.13"), nvcc=True,
            version_json=True) -> Path:
    """A CUDA toolkit as its installer lays it out: bin/nvcc, lib64/<libraries>, version.json."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    (root / "lib64").mkdir(parents=True, exist_ok=True)
    if nvcc:
        (root / "bin" / "nvcc").write_text("#!/bin/sh\n")
    for name in libraries:
        (root / "lib64" / name).write_text("")
    if version_json:
        (root / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": f"{release}.1"}}))
    return root


def test_the_folders_are_read_in_each_variable_s_order_with_their_release(tmp_path):
    new = toolkit(tmp_path / "cuda-13.0", "13.0")
    old = toolkit(tmp_path / "opt" / "toolkit", "12.4", libraries=("libcudart.so.12.4.127", "libnvJitLink.so.12"))
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {"PATH": os.pathsep.join([str(empty), str(new / "bin"), "", str(old / "bin"), str(tmp_path / "missing")]),
           "LD_LIBRARY_PATH": os.pathsep.join([str(old / "lib64"), str(new / "lib64"), str(new / "lib64")])}
    paths = read_search_paths(env)
    assert [(f.variable, f.position, f.version, f.nvcc) for f in paths.folders] == [
        ("PATH", 1, "13.0", True), ("PATH", 2, "12.4", True),  # the empty entry is not the working folder read
        ("LD_LIBRARY_PATH", 0, "12.4", False), ("LD_LIBRARY_PATH", 1, "13.0", False)]  # a repeated entry once
    assert paths.on("LD_LIBRARY_PATH")[0].libraries == ("libcudart.so.12.4.127", "libnvJitLink.so.12")
    assert paths.on("LD_LIBRARY_PATH")[0].soname_majors("libnvJitLink") == (12,)


def test_a_folder_without_version_json_takes_its_release_from_library_names_or_its_own_name(tmp_path):
    named = toolkit(tmp_path / "a", "0", libraries=("libnvrtc.so.13.0.88",), version_json=False)
    folder = toolkit(tmp_path / "cuda-12.8", "0", libraries=("libcudart.so.12",), version_json=False)
    bare = toolkit(tmp_path / "b", "0", libraries=("libcublas.so.13",), version_json=False)
    env = {"LD_LIBRARY_PATH": os.pathsep.join(str(p / "lib64") for p in (named, folder, bare))}
    assert [f.version for f in read_search_paths(env).folders] == ["13.0", "12.8", None]


def folder(path, variable="LD_LIBRARY_PATH", version="13.0", libraries=(), nvcc=False, position=0, libcuda=None,
           libcuda_version=None):
    return CudaFolder(path, variable, position, version, tuple(libraries), nvcc, libcuda, libcuda_version)


def paths_finding(*folders, torch="2.14.1+cu130"):
    made = facts(paths=SearchPaths(tuple(folders)), interpreter=interpreter(dists={"torch": torch}))
    return {f.id: f for f in judge(made, load_builtin("torch-2.14-operators"))}["cuda.paths"]


@pytest.mark.parametrize("folders, status, words", [
    ((), Status.PASS, "no CUDA folder on PATH or LD_LIBRARY_PATH"),
    ((folder("/usr/local/cuda-13.0/bin", "PATH", nvcc=True),), Status.PASS, "1 CUDA toolkit on PATH"),
    # two toolkits of one release: nothing differs
    ((folder("/usr/local/cuda/bin", "PATH", nvcc=True), folder("/usr/local/cuda-13.0/bin", "PATH", nvcc=True, position=1)),
     Status.PASS, "2 CUDA toolkits on PATH"),
    ((folder("/usr/local/cuda-13.0/bin", "PATH", nvcc=True),
      folder("/usr/local/cuda-12.4/bin", "PATH", version="12.4", nvcc=True, position=1)),
     Status.WARN, "PATH holds 2 CUDA toolkits: /usr/local/cuda-13.0/bin (CUDA 13.0), then /usr/local/cuda-12.4/bin"),
    ((folder("/usr/local/cuda-13.0/lib64", libraries=("libcudart.so.13",)),
      folder("/usr/local/cuda-12.4/lib64", version="12.4", libraries=("libcudart.so.12",), position=1)),
     Status.WARN, "LD_LIBRARY_PATH holds CUDA libraries of 2 releases"),
    ((folder("/usr/local/cuda-13.0/lib64", libraries=("libcudart.so.13",)),), Status.PASS, "1 CUDA library folder"),
    ((folder("/usr/local/cuda-13.0/lib64/stubs", libraries=("libcuda.so.1",)),), Status.FAIL, "stub libcuda.so.1"),
    ((folder("/usr/local/cuda-13.0/compat", libraries=("libcuda.so.1",)),), Status.PASS, "forward compatibility"),
    ((folder("/opt/old-driver/lib", version=None, libraries=("libcuda.so.1",), libcuda="/opt/old-driver/lib/libcuda.so.1"),),
     Status.WARN, "names no driver release (its file is /opt/old-driver/lib/libcuda.so.1)"),
])
def test_cuda_paths(folders, status, words):
    finding = paths_finding(*folders)
    assert finding.status is status and words in finding.found, finding.found
    assert (finding.remedy is not None) is (status is not Status.PASS)
    assert len(finding.details) >= len(folders)


def test_not_read_is_a_skip_not_a_pass():
    made = replace(facts(), paths=None)
    assert {f.id: f for f in judge(made, load_builtin("torch-2.14-operators"))}["cuda.paths"].status is Status.SKIP


def test_doctor_judges_the_environment_it_runs_in(tmp_path):
    """A real doctor process with two toolkits on PATH and a stub libcuda.so.1 on LD_LIBRARY_PATH, no GPU."""
    new = toolkit(tmp_path / "cuda-13.0", "13.0")
    old = toolkit(tmp_path / "cuda-12.4", "12.4", libraries=("libcudart.so.12",))
    stubs = new / "lib64" / "stubs"
    stubs.mkdir()
    (stubs / "libcuda.so.1").write_text("")
    env = {**os.environ, "PATH": os.pathsep.join([str(new / "bin"), str(old / "bin"), "/usr/bin", "/bin"]),
           "LD_LIBRARY_PATH": os.pathsep.join([str(stubs), str(old / "lib64")])}
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--no-gpu", "--json"], capture_output=True,
                          text=True, timeout=300, env=env)
    data = json.loads(done.stdout)
    finding = {c["id"]: c for c in data["checks"]}["cuda.paths"]
    assert finding["status"] == "fail" and "stub libcuda.so.1" in finding["found"] and "PATH holds 2" in finding["found"]
    assert [f["version"] for f in data["facts"]["paths"]["folders"]][:2] == ["13.0", "12.4"]


# ---------------------------------------------------------------------------------------------------------------
# libcuda.so.1 on LD_LIBRARY_PATH against the running driver (issue 29 item 2): NVIDIA's CUDA images set
# LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64 and the container runtime mounts the driver's own
# libcuda.so.1 there (the H200, 2026-12-03: a link to libcuda.so.580.159.04 on driver 580.159.04).

RUNNING = "580.159.04"
FAKE_NVML = Path(__file__).parent / "data" / "fake_nvml"


def driver_library(root: Path, target: str, real: bool = True) -> Path:
    """A folder holding libcuda.so.1 as a link to `target` (a file made there unless real is False)."""
    root.mkdir(parents=True, exist_ok=True)
    if real:
        (root / target).write_bytes(b"\x7fELF")
    (root / "libcuda.so.1").symlink_to(target)
    return root


def test_libcuda_is_read_as_the_file_its_link_names_and_the_release_that_name_carries(tmp_path):
    own = driver_library(tmp_path / "nvidia" / "lib64", f"libcuda.so.{RUNNING}")
    chained = tmp_path / "chained"  # libcuda.so.1 -> libcuda.so -> libcuda.so.575.57.08
    driver_library(chained, "libcuda.so", real=False)
    (chained / "libcuda.so").symlink_to("libcuda.so.575.57.08")
    (chained / "libcuda.so.575.57.08").write_bytes(b"")
    elsewhere = tmp_path / "elsewhere"  # a link into another folder, by absolute path
    elsewhere.mkdir()
    (elsewhere / "libcuda.so.1").symlink_to(own / f"libcuda.so.{RUNNING}")
    dangling = driver_library(tmp_path / "dangling", "libcuda.so.590.48.01", real=False)
    copied = tmp_path / "copied"  # a file of that name, no link: its name carries no release
    copied.mkdir()
    (copied / "libcuda.so.1").write_bytes(b"")
    bare = tmp_path / "bare"  # the driver's file without the soname link: not what the loader looks for
    bare.mkdir()
    (bare / f"libcuda.so.{RUNNING}").write_bytes(b"")
    (bare / "libcudart.so.13").write_bytes(b"")
    env = {"LD_LIBRARY_PATH": os.pathsep.join(map(str, (own, chained, elsewhere, dangling, copied, bare)))}
    read = [(Path(f.path).name, f.libcuda and os.path.relpath(f.libcuda, tmp_path), f.libcuda_version)
            for f in read_search_paths(env).folders]
    assert read == [("lib64", f"nvidia/lib64/libcuda.so.{RUNNING}", RUNNING),
                    ("chained", "chained/libcuda.so.575.57.08", "575.57.08"),
                    ("elsewhere", f"nvidia/lib64/libcuda.so.{RUNNING}", RUNNING),
                    ("dangling", None, None),
                    ("copied", "copied/libcuda.so.1", None),
                    ("bare", None, None)]


def own(path="/usr/local/nvidia/lib64", release=RUNNING, **kw):
    """A folder with libcuda.so.1 -> libcuda.so.<release> in it."""
    return folder(path, version=None, libraries=("libcuda.so.1", f"libcuda.so.{release}"),
                  libcuda=f"{path}/libcuda.so.{release}", libcuda_version=release, **kw)


NVML_MISSING = Failure("driver", "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver is installed here")


@pytest.mark.parametrize("folders, running, no_gpu, status, words", [
    # the running driver's own, as NVIDIA's images and the container runtime lay it out
    ((own(),), RUNNING, False, Status.PASS,
     f"libcuda.so.1 in /usr/local/nvidia/lib64 is the running driver's own (libcuda.so.{RUNNING}, driver {RUNNING})"),
    ((own("/usr/local/nvidia/lib"), own(position=1)), RUNNING, False, Status.PASS,
     "libcuda.so.1 in /usr/local/nvidia/lib and /usr/local/nvidia/lib64 is the running driver's own"),
    ((own("/a"), own("/b", position=1), own("/c", position=2)), RUNNING, False, Status.PASS, "in /a, /b and /c is the running"),
    ((own(release="580.159.4"),), RUNNING, False, Status.PASS, "is the running driver's own"),  # the same numbers
    # another release, one step either side and far off
    ((own(release="580.159.03"),), RUNNING, False, Status.WARN,
     f"is driver 580.159.03's (libcuda.so.580.159.03), older than the running driver {RUNNING}, and is loaded before"),
    ((own(release="580.159.05"),), RUNNING, False, Status.WARN, "newer than the running driver 580.159.04"),
    ((own(release="575.57.08"),), RUNNING, False, Status.WARN, "older than the running driver"),
    ((own(release="590.48.01"),), RUNNING, False, Status.WARN, "newer than the running driver"),
    ((own(release="580.159"),), RUNNING, False, Status.WARN, "older than the running driver"),
    # the driver's own first, another's after it: the other is said, the own one is not blamed
    ((own("/usr/local/nvidia/lib64"), own("/opt/old", release="575.57.08", position=1)), RUNNING, False, Status.WARN,
     "libcuda.so.1 in /opt/old, on LD_LIBRARY_PATH, is driver 575.57.08's"),
    # CUDA's stub fails and forward compatibility passes, whatever the driver
    ((folder("/usr/local/cuda-13.0/lib64/stubs", libraries=("libcuda.so.1",), libcuda="/x/libcuda.so.1"),), RUNNING,
     False, Status.FAIL, "stub libcuda.so.1"),
    ((folder("/usr/local/cuda-13.0/lib64/stubs", libraries=("libcuda.so.1",)),), None, True, Status.FAIL, "stub"),
    ((own("/usr/local/cuda-13.1/compat", release="590.48.01"),), RUNNING, False, Status.PASS, "forward compatibility"),
    # what cannot be told
    ((folder("/x", libraries=("libcuda.so.1",)),), RUNNING, False, Status.PASS,
     "libcuda.so.1 in /x is a link that leads to no file: the loader passes over it"),
    ((folder("/x", libraries=("libcuda.so.1",), libcuda="/x/libcuda.so.1"),), RUNNING, False, Status.WARN,
     "names no driver release (its file is /x/libcuda.so.1), so it could not be told from the driver's own"),
    ((own(),), RUNNING, True, Status.PASS,
     f"libcuda.so.1 in /usr/local/nvidia/lib64 is driver {RUNNING}'s (libcuda.so.{RUNNING}), not compared with the "
     "running driver (--no-gpu)"),
    ((own(release="575.57.08"),), NVML_MISSING, False, Status.PASS,
     "is driver 575.57.08's (libcuda.so.575.57.08), not compared with the running driver (no driver read: NVML library "
     "not found"),
    ((own(),), "unknown", False, Status.PASS, "not compared with the running driver (the driver's version, 'unknown',"),
])
def test_libcuda_against_the_running_driver(folders, running, no_gpu, status, words):
    known = running if isinstance(running, Failure) else driver(version=running or "590.48.01")
    made = facts(paths=SearchPaths(tuple(folders)), driver=known)
    finding = {f.id: f for f in judge(made, load_builtin("torch-2.14-operators"), no_gpu=no_gpu)}["cuda.paths"]
    assert finding.status is status and words in finding.found, finding.found
    assert (finding.remedy is not None) is (status is not Status.PASS)
    if status is Status.PASS:
        assert "loaded before the driver's own" not in finding.found


def test_the_remedy_keeps_the_driver_s_own_folder_and_takes_another_release_s_off():
    made = facts(paths=SearchPaths((own("/opt/old", release="575.57.08"), own(position=1))), driver=driver(RUNNING))
    finding = {f.id: f for f in judge(made, load_builtin("torch-2.14-operators"))}["cuda.paths"]
    assert finding.status is Status.WARN and "/opt/old" in finding.found and "nvidia" not in finding.found
    assert finding.remedy.text.endswith("For example: export LD_LIBRARY_PATH=/usr/local/nvidia/lib64")


def nvidia_container(tmp_path: Path, release: str) -> dict:
    """The environment of a job in NVIDIA's CUDA image on a GPU node: LD_LIBRARY_PATH as the image sets it, the driver's
    libcuda.so.1 (of `release`) and NVML mounted into both folders, the stand-in NVML (one H200 on 580.159.04)."""
    folders = [driver_library(tmp_path / "usr" / "local" / "nvidia" / name, f"libcuda.so.{release}")
               for name in ("lib", "lib64")]
    libm = next(p for p in (Path("/lib/x86_64-linux-gnu/libm.so.6"), Path("/usr/lib64/libm.so.6"),
                            Path("/lib/aarch64-linux-gnu/libm.so.6")) if p.exists())
    (folders[1] / "libnvidia-ml.so.1").symlink_to(libm)  # envcheck only loads it to see that a driver is there
    return {**os.environ, "PATH": os.pathsep.join(["/usr/bin", "/bin"]), "PYTHONPATH": str(FAKE_NVML),
            "LD_LIBRARY_PATH": os.pathsep.join(map(str, folders)), "ENVCHECK_CACHE_DIR": str(tmp_path / "cache")}


@pytest.mark.parametrize("release, flags, status, words", [
    (RUNNING, (), "pass", f"lib64 is the running driver's own (libcuda.so.{RUNNING}, driver {RUNNING})"),
    (RUNNING, ("--no-gpu",), "pass", "not compared with the running driver (--no-gpu)"),
    ("575.57.08", (), "warn", f"older than the running driver {RUNNING}, and is loaded before the driver's own"),
])
def test_doctor_in_an_nvidia_container(tmp_path, release, flags, status, words):
    """doctor as a process where NVIDIA's images put it: the driver's own libcuda.so.1 is no warning."""
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--json", *flags], capture_output=True,
                          text=True, timeout=300, env=nvidia_container(tmp_path, release))
    data = json.loads(done.stdout)
    finding = {c["id"]: c for c in data["checks"]}["cuda.paths"]
    assert finding["status"] == status and words in finding["found"], finding["found"]
    assert "/usr/local/nvidia/lib and " in finding["found"]  # both folders, said once
    if not flags:
        assert data["facts"]["driver"]["version"] == RUNNING
    assert [f["libcuda_version"] for f in data["facts"]["paths"]["folders"]] == [release, release]
