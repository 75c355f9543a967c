"""doctor over real environments made from the real upstream wheels (torch 2.13.0 and 2.14.1, nvidia-cutlass-dsl
4.3.5, 4.4.0 and 4.8.1 with their -libs-*, nvidia-cutlass-operators 0.3.0, apache-tvm-ffi 0.1.7 and 0.1.15.post2):
the profile chosen, and the verdicts of issue 17 through the real CLI for GPUs given with --gpu-capability (8.0, 8.6,
8.9, 9.0, 10.0, 12.0; 10.7 where it differs), none of them one that the H200 runs contradict. torch 2.15.0 (about
1 GB, above this machine's pip cap) is a small wheel with 2.15.0's METADATA and version.py. Slow: torch 2.14.1's
wheel alone is 555 MB (from the package index; skipped without one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from wheelfactory import build_wheel, make_venv, pip

from envcheck.cli import main

pytestmark = pytest.mark.slow

DSL = ("nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1", "nvidia-cutlass-dsl-libs-core==4.8.1")
OPERATORS = ("nvidia-cutlass-operators==0.3.0", "apache-tvm-ffi==0.1.15.post2", "torch-c-dlpack-ext==0.1.5",
             "nvidia-matmul-heuristics==0.1.0.27", "networkx")
DSL_435 = ("nvidia-cutlass-dsl==4.3.5",)
DSL_440 = ("nvidia-cutlass-dsl==4.4.0", "nvidia-cutlass-dsl-libs-base==4.4.0")
RECIPE_COMPANIONS = ("apache-tvm-ffi==0.1.7", "nvidia-matmul-heuristics==0.1.0.27")
CAPABILITIES = ("8.0", "8.6", "8.9", "9.0", "10.0", "12.0")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """The real wheels, downloaded once with the machine's own pip configuration (its package index)."""
    folder = tmp_path_factory.mktemp("upstream")
    wanted = ("torch==2.14.1", "torch==2.13.0", *DSL, "nvidia-cutlass-dsl-libs-cu12==4.8.1",
              "nvidia-cutlass-dsl-libs-cu13==4.8.1", *OPERATORS, *DSL_435, *DSL_440, *RECIPE_COMPANIONS)
    for requirement in wanted:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), requirement],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.skip(f"the package index has no {requirement} here: {done.stderr.strip()[-200:]}")
    return folder


def _venv(tmp_path, upstream, *requirements):
    python = make_venv(tmp_path / "venv")
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(upstream), *requirements)
    return python


def _doctor(capsys, python, *flags):
    main(["doctor", "--python", str(python), "--no-gpu", "--json", *flags])
    data = json.loads(capsys.readouterr().out)
    return data, {c["id"]: c for c in data["checks"]}


def test_torch_2_14_with_a_plain_dsl_install_is_judged_by_the_operators_profile(tmp_path, upstream, capsys):
    python = _venv(tmp_path, upstream, "torch==2.14.1", *DSL, "nvidia-cutlass-dsl-libs-cu12==4.8.1", *OPERATORS)
    data, checks = _doctor(capsys, python)
    assert data["profile"]["id"] == "torch-2.14-operators" and "2.14.1" in data["profile"]["reason"]
    assert checks["torch.version"]["status"] == "pass"
    assert checks["cutedsl.version"]["status"] == "pass" and "4.8.1" in checks["cutedsl.version"]["found"]
    finding = checks["cutedsl.importable"]
    assert finding["status"] == "warn" and "nvidia-cutlass-dsl-libs-cu12" in finding["found"]  # it ran on the H200
    assert [s["args"] for s in finding["remedy"]["steps"]] == [["nvidia-cutlass-dsl[cu13]>=4.8.0"]]
    assert checks["nvgemm.deps"]["status"] == "pass"
    assert checks["cutlass.checkout"]["status"] == "skip" and "not needed" in checks["cutlass.checkout"]["found"]
    modules = {m["name"]: m["origin"] for m in data["facts"]["interpreter"]["modules"]}
    assert modules["cutlass"].endswith("nvidia_cutlass_dsl/dsl_packages/cutlass/__init__.py")
    assert modules["cutlass.operators"].endswith(os.path.join("cutlass", "operators", "__init__.py"))

    # with the [cu13] libraries beside, the finding is gone
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(upstream), "nvidia-cutlass-dsl-libs-cu13==4.8.1")
    data, checks = _doctor(capsys, python)
    assert checks["cutedsl.importable"]["status"] == "pass", checks["cutedsl.importable"]
    assert "CUDA majors" not in checks["packages.consistency"]["found"]


def test_torch_2_13_is_judged_by_the_recipe_and_a_new_dsl_is_a_recipe_deviation(tmp_path, upstream, capsys):
    python = _venv(tmp_path, upstream, "torch==2.13.0", *DSL, "nvidia-cutlass-dsl-libs-cu13==4.8.1")
    data, checks = _doctor(capsys, python)
    assert data["profile"]["id"] == "torch-2.11-nvgemm" and "2.13.0" in data["profile"]["reason"]
    finding = checks["cutedsl.version"]
    assert finding["status"] == "warn" and "recipe" in finding["found"] and ">=10.0" in finding["found"]
    data, checks = _doctor(capsys, python, "--strict")
    assert checks["cutedsl.version"]["status"] == "fail"
    data, checks = _doctor(capsys, python, "--profile", "torch-2.14-operators")
    assert data["profile"]["id"] == "torch-2.14-operators" and "--profile" in data["profile"]["reason"]
    assert checks["torch.version"]["status"] == "fail" and "predates" in checks["torch.version"]["found"]


# ---------------------------------------------------------------------------------------------------------------
# The verdicts of issue 17 for GPUs that are not here: --no-gpu --gpu-capability X.Y through the real CLI


def _judged(capsys, python, capability, *flags):
    code = main(["doctor", "--python", str(python), "--no-gpu", "--gpu-capability", capability, "--json", *flags])
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == code and data["facts"]["given_gpus"][0]["source"] == "given"
    return code, {c["id"]: c for c in data["checks"]}


# The operators stack on torch 2.14.1 as a plain install leaves it: only -libs-cu12, no torch-c-dlpack-ext (the state
# in which the H200 smoke passed, e.log E2). gpu.compute-capability per capability, and the exit code. On 10.0 torch
# 2.14.1 beside operators 0.3.0 fails: its reload of an SM100 EFC kernel imports evt.common_efc, cold addmm compiles
# too (issue 25 item 2, the common-efc caveat).
OPERATORS_ROWS = {"8.0": ("fail", "TargetSm 80a", 1), "8.6": ("fail", "TargetSm 80a", 1), "8.9": ("fail", "TargetSm 80a", 1),
                  "9.0": ("pass", "Sm90StaticPersistentGemmOperator", 0), "10.0": ("fail", "common_efc", 1),
                  "12.0": ("warn", "Sm80TensorOpGemmOperator only", 0)}


def test_the_operators_stack_on_torch_2_14_1_for_each_gpu(tmp_path, upstream, capsys):
    python = _venv(tmp_path, upstream, "torch==2.14.1", *DSL, "nvidia-cutlass-dsl-libs-cu12==4.8.1",
                   *(r for r in OPERATORS if not r.startswith("torch-c-dlpack-ext")))
    for capability in CAPABILITIES:
        code, checks = _judged(capsys, python, capability)
        status, words, exit_code = OPERATORS_ROWS[capability]
        gpu = checks["gpu.compute-capability"]
        assert gpu["status"] == status and words in gpu["found"], (capability, gpu["found"])
        assert f"compute capability {capability} (given with --gpu-capability, not seen here)" in gpu["found"]
        assert code == exit_code, {i: c["status"] for i, c in checks.items()}
        # what the H200 runs contradicted, made true: the cu12-only DSL warns, torch-c-dlpack-ext is optional
        assert checks["cutedsl.importable"]["status"] == "warn" and "[cu13]" in checks["cutedsl.importable"]["found"]
        assert checks["nvgemm.deps"]["status"] == "pass" and "optional" in checks["nvgemm.deps"]["found"]
        assert checks["python.version"]["status"] == "pass"
        assert not [i for i, c in checks.items() if c["status"] in ("fail", "error") and i != "gpu.compute-capability"]
    hopper = _judged(capsys, python, "9.0")[1]["gpu.compute-capability"]
    assert hopper["evidence"]["runs"] and "smoke ran on an NVIDIA H200, driver 580, 2026-12-01" in hopper["details"][-1]
    cu12 = _judged(capsys, python, "9.0")[1]["cutedsl.importable"]
    assert [r["dsl_flavour"] for r in cu12["evidence"]["runs"]] == ["cu12"]  # the E2 run
    # Rubin: the CUDA 12.9 build refuses sm_107a, so there it is a failure
    code, checks = _judged(capsys, python, "10.7")
    assert checks["cutedsl.importable"]["status"] == "fail" and code == 1
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(upstream), "nvidia-cutlass-dsl-libs-cu13==4.8.1")
    for capability in ("9.0", "10.7"):
        assert _judged(capsys, python, capability)[1]["cutedsl.importable"]["status"] == "pass"


# The recipe on torch 2.13.0 (CPU build here), each DSL layout in turn: 4.3.5 (one wheel, python_packages), 4.4.0
# (meta and -libs-base, python_packages), 4.8.1 (meta, -libs-base, -libs-core, -libs-cu12, dsl_packages).
RECIPE_ROWS = {"8.0": "warn", "8.6": "warn", "8.9": "warn", "9.0": "warn", "10.0": "pass", "12.0": "warn"}


def test_the_recipe_on_torch_2_13_with_each_dsl_layout_for_each_gpu(tmp_path, upstream, capsys):
    python = _venv(tmp_path, upstream, "torch==2.13.0", *DSL_435, *RECIPE_COMPANIONS)
    for capability in CAPABILITIES:
        checks = _judged(capsys, python, capability)[1]
        assert checks["gpu.compute-capability"]["status"] == RECIPE_ROWS[capability], capability
        assert checks["cutedsl.version"]["status"] == "pass" and checks["cutedsl.importable"]["status"] == "pass"
        assert checks["nvgemm.deps"]["status"] == "pass", checks["nvgemm.deps"]["found"]
        assert checks["python.version"]["status"] == "fail"  # cutlass_api needs 3.12; these torch wheels are cp311
    # 4.4.0: the compiler under python_packages, -libs-base without -libs-cu12; it still exports ProxyKind (gone in
    # 4.6), so the recipe's cap is a recipe deviation on every GPU (issue 25 item 2)
    pip(python, "uninstall", "-y", "nvidia-cutlass-dsl")
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(upstream), *DSL_440)
    for capability in CAPABILITIES:
        checks = _judged(capsys, python, capability)[1]
        assert checks["cutedsl.importable"]["status"] == "pass", checks["cutedsl.importable"]["found"]
        assert checks["cutedsl.version"]["status"] == "warn", capability
        assert checks["nvgemm.deps"]["status"] == "pass"  # DSL 4.4 never passes map_dataclass_to_tuple
    # 4.8.1: dsl_packages; beside it cutlass_api's apache-tvm-ffi 0.1.7 breaks (TypeError on the H200)
    pip(python, "install", "--no-deps", "--no-index", "--find-links", str(upstream), *DSL,
        "nvidia-cutlass-dsl-libs-cu12==4.8.1", "nvidia-cutlass-dsl-libs-cu13==4.8.1")
    for capability in CAPABILITIES:
        checks = _judged(capsys, python, capability)[1]
        assert checks["cutedsl.importable"]["status"] == "pass", checks["cutedsl.importable"]["found"]
        deps = checks["nvgemm.deps"]
        assert deps["status"] == "fail" and "beside nvidia-cutlass-dsl 4.8.1" in deps["found"], deps["found"]
        assert "CUDA majors" not in checks["packages.consistency"]["found"]
    # the H200's run of this break was torch 2.11 with cutlass_api: not this exact combination, and doctor says so
    evidence = _judged(capsys, python, "9.0")[1]["nvgemm.deps"]["evidence"]
    assert evidence["runs"] == [] and ["torch", "2.13"] in evidence["combination"] and ["cutlass-api", "not installed"] in evidence["combination"]


@pytest.mark.parametrize("python_version, status", [("3.10", "fail"), ("3.11", "pass")])
def test_torch_2_15_needs_python_3_11(tmp_path, capsys, python_version, status):
    """torch 2.15.0 as a small wheel with its METADATA (Requires-Python: >=3.11) and version.py (2.15.0+cu132, CUDA
    13.2), installed past pip's own refusal the way a --no-deps or stale environment gets there."""
    import glob

    interpreters = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{python_version}*/bin/python{python_version}")))
    if not interpreters:
        pytest.skip(f"no Python {python_version} here")
    torch = build_wheel(tmp_path / "wheels", "torch", "2.15.0+cu132", {
        "torch/__init__.py": "", "torch/version.py": "__version__ = '2.15.0+cu132'\ncuda = '13.2'\ngit_version = 'x'\n"},
        requires_python=">=3.11")
    python = make_venv(tmp_path / "venv", interpreters[-1])
    pip(python, "install", "--no-deps", "--no-index", "--ignore-requires-python", str(torch))
    for capability in ("9.0", "10.0"):
        checks = _judged(capsys, python, capability)[1]
        finding = checks["python.version"]
        assert finding["status"] == status, finding["found"]
        if status == "fail":
            assert "torch 2.15.0 requires Python >=3.11" in finding["found"]
        assert "common_efc" not in checks["gpu.compute-capability"]["found"]  # fixed in 2.15.0
