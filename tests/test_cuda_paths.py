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
from factsbuilder import facts, interpreter

from envcheck.gather.paths import read_search_paths
from envcheck.judge import judge
from envcheck.model import CudaFolder, SearchPaths, Status
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


def folder(path, variable="LD_LIBRARY_PATH", version="13.0", libraries=(), nvcc=False, position=0):
    return CudaFolder(path, variable, position, version, tuple(libraries), nvcc)


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
    ((folder("/opt/old-driver/lib", version=None, libraries=("libcuda.so.1",)),), Status.WARN,
     "loaded before the driver's own"),
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
