"""doctor over real environments made from the real upstream wheels (torch 2.13.0 and 2.14.1, nvidia-cutlass-dsl
4.8.1 and its -libs-*, nvidia-cutlass-operators 0.3.0): the profile chosen, the DSL verdict, and the cu12/cu13
finding with its [cu13] remedy. Slow: torch 2.14.1's wheel alone is 555 MB (from the package index; skipped
without one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from wheelfactory import make_venv, pip

from envcheck.cli import main

pytestmark = pytest.mark.slow

DSL = ("nvidia-cutlass-dsl==4.8.1", "nvidia-cutlass-dsl-libs-base==4.8.1", "nvidia-cutlass-dsl-libs-core==4.8.1")
OPERATORS = ("nvidia-cutlass-operators==0.3.0", "apache-tvm-ffi==0.1.15.post2", "torch-c-dlpack-ext==0.1.5",
             "nvidia-matmul-heuristics==0.1.0.27", "networkx")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """The real wheels, downloaded once with the machine's own pip configuration (its package index)."""
    folder = tmp_path_factory.mktemp("upstream")
    wanted = ("torch==2.14.1", "torch==2.13.0", *DSL, "nvidia-cutlass-dsl-libs-cu12==4.8.1",
              "nvidia-cutlass-dsl-libs-cu13==4.8.1", *OPERATORS)
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
    assert finding["status"] == "fail" and "nvidia-cutlass-dsl-libs-cu12" in finding["found"]
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
