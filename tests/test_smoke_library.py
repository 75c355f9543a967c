"""`envcheck smoke --library`: the profile's kernel library called directly, without Inductor.

There is no GPU here, so the child runs for real in a real interpreter: without torch, and with a test-built torch
stand-in whose CUDA sees no device (the only fake: the GPU). Each must fail fast with one result line naming the
cause, and exit non-zero. The GPU run itself is done on the H200 (the command is in the report of this change).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import factsbuilder as fb
from wheelfactory import build_wheel, install, make_venv

from envcheck.model import Status
from envcheck.inside import library as library_module
from envcheck.inside.protocol import SMOKE_RESULT
from envcheck.smoke.run import library_module as profile_library, parse_child_output, run_smoke, write_child
from envcheck.render.smoke import render_text

H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")
GOOD = fb.facts(driver=fb.driver(gpus=[H200]))

# A torch whose CUDA sees no device: what a GPU-less machine with a real CUDA build of torch says.
NO_DEVICE_TORCH = {
    "torch/__init__.py": (
        "__version__ = '2.14.1+cu130'\n"
        "from . import version, cuda\n"
    ),
    "torch/version.py": "__version__ = '2.14.1+cu130'\ncuda = '13.0'\n",
    "torch/cuda.py": "def is_available():\n    return False\n",
}


@pytest.fixture(scope="module")
def no_device_python(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("no-device")
    wheels = folder / "wheels"
    build_wheel(wheels, "torch", "2.14.1", NO_DEVICE_TORCH)
    python = make_venv(folder / "venv")
    install(python, wheels, "torch")
    return python


def run_library_child(python: Path, run_dir: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict, float]:
    script = write_child(run_dir)
    began = time.monotonic()
    done = subprocess.run(
        [str(python), str(script), "--library", "cutlass.operators", "--modules", "", *args],
        capture_output=True, text=True, timeout=60, cwd=run_dir,
    )
    result, _ = parse_child_output(done.stdout)
    return done, result, time.monotonic() - began


def test_the_run_directory_holds_the_child_and_the_library_adapters(tmp_path):
    script = write_child(tmp_path)
    assert script.name == "smoke_child.py"
    assert (tmp_path / "envcheck_library.py").read_text() == Path(library_module.__file__).read_text()
    assert {p.name for p in tmp_path.iterdir()} == {"smoke_child.py", "envcheck_protocol.py", "envcheck_gemm.py",
                                                    "envcheck_lookup.py", "envcheck_loaded.py", "envcheck_library.py"}


def test_library_child_without_a_gpu_fails_fast_naming_the_cause(no_device_python, tmp_path):
    done, result, seconds = run_library_child(no_device_python, tmp_path)
    assert done.returncode == 1
    assert seconds < 10
    assert done.stdout.count(SMOKE_RESULT) == 1
    assert result["ok"] is False and result["library"] == "cutlass.operators"
    assert result["phase"] == "cuda"
    assert result["error"]["type"] == "SmokeNoCuda"
    assert "sees no CUDA device" in result["error"]["message"]
    assert result["versions"]["torch"] == "2.14.1" and result["versions"]["torch_cuda"] == "13.0"


def test_library_child_without_torch_fails_fast_naming_the_import(tmp_path):
    python = make_venv(tmp_path / "bare")
    done, result, _ = run_library_child(python, tmp_path)
    assert done.returncode == 1
    assert result["phase"] == "import-torch" and result["error"]["type"] == "ModuleNotFoundError"
    assert "torch" in result["error"]["message"]


def test_the_smoke_result_of_a_library_run_names_the_library(no_device_python, tmp_path, policy):
    result = run_smoke(str(no_device_python), GOOD, policy, cache_dir=tmp_path / "cache", library=True, timeout=60)
    assert result.status is Status.FAIL and result.exit_code == 1
    assert result.library == profile_library(policy)
    log = Path(result.log).read_text()
    assert f"--library {profile_library(policy)}" in log and "--code-out" not in log
    assert json.loads(json.dumps(result.to_dict()))["library"]["module"] == profile_library(policy)
    assert "smoke failed" in render_text(result)


@pytest.mark.parametrize("library", ["cutlass", "cutlass_api.kernels", "", "triton"])
def test_a_library_envcheck_cannot_call_is_refused_by_name(library):
    with pytest.raises(library_module.UnknownLibrary, match="cutlass.operators and cutlass_api"):
        library_module.candidates(library, None, None, None, (9, 0))


def test_every_known_library_names_a_distribution_for_its_version():
    assert set(library_module.LIBRARIES) == {"cutlass_api", "cutlass.operators"}
    assert library_module.library_version("nope") is None
    assert library_module.library_version("cutlass.operators") is None  # not installed in envcheck's own venv


def test_a_library_kernel_compiles_then_runs_what_it_compiled():
    calls = []
    kernel = library_module.LibraryKernel("k", lambda: calls.append("compile") or "artifact", calls.append)
    kernel.run(kernel.compile())
    assert calls == ["compile", "artifact"] and kernel.name == "k" and "k" in repr(kernel)


def test_library_adapters_import_only_the_standard_library_at_module_level():
    code = (
        "import sys; before = set(sys.modules); import importlib.util as u;"
        f"spec = u.spec_from_file_location('smoke_library', {library_module.__file__!r});"
        "m = u.module_from_spec(spec); spec.loader.exec_module(m);"
        "print(sorted(n for n in set(sys.modules) - before if n.split('.')[0] in ('torch', 'cutlass', 'cutlass_api', 'envcheck')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def operators_policy():
    from envcheck.profile import load_builtin

    return load_builtin("torch-2.14-operators")


def operators_facts():
    modules = {"cutlass.operators": f"{fb.SITE}/nvidia_cutlass_dsl/dsl_packages/cutlass/operators/__init__.py",
               "cutlass_api": None}
    return fb.facts(driver=fb.driver(gpus=[H200]), interpreter=fb.interpreter(modules=modules))


def test_the_operators_profile_runs_its_library_with_its_own_modules(no_device_python, tmp_path, operators_policy):
    result = run_smoke(str(no_device_python), operators_facts(), operators_policy, cache_dir=tmp_path / "c", library=True,
                       timeout=60)
    log = Path(result.log).read_text()
    assert "--library cutlass.operators" in log and "--modules cutlass,cutlass.operators" in log
    assert result.library == "cutlass.operators" and result.status is Status.FAIL and "SmokeNoCuda" in log


def test_the_inductor_smoke_of_the_operators_profile_looks_for_its_patterns(no_device_python, tmp_path, operators_policy):
    result = run_smoke(str(no_device_python), operators_facts(), operators_policy, cache_dir=tmp_path / "c", timeout=60)
    log = Path(result.log).read_text()
    assert "--call-pattern" in log and "--kernel-pattern" in log and "--backends NVGEMM" in log
    assert "--library" not in log


def test_a_missing_operators_library_is_named_with_its_wheel(tmp_path, operators_policy):
    facts = fb.facts(driver=fb.driver(gpus=[H200]), interpreter=fb.interpreter(modules={"cutlass.operators": None}))
    result = run_smoke(sys.executable, facts, operators_policy, cache_dir=tmp_path / "c", library=True, timeout=60)
    assert result.cause_id == "cutlass-operators-missing"
    assert "cutlass.operators is not importable" in result.cause
    assert [s.args for s in result.remedy.steps] == [("nvidia-cutlass-operators>=0.3.0",)]


# What torch 2.14.1's Inductor writes (codegen/nv_universal_gemm/nv_universal_gemm_scheduling.py and
# nv_universal_gemm_kernel.py): the call, and the operator's name in the kernel module.
CODE_2_14 = '''
_KERNEL_NAME = 'cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster1x1x1_tile128x128x64'
nv_universal_gemm_fused_mm_0 = async_compile.nv_universal_gemm('nv_universal_gemm_fused_mm_0', r\'\'\'
import cutlass
\'\'\')
'''


def test_the_operators_profiles_patterns_find_the_kernel_in_torch_2_14_code(operators_policy):
    from envcheck.inside.gemm import find_kernel

    call, kernel, fallbacks = find_kernel(CODE_2_14, operators_policy.smoke.call_pattern, operators_policy.smoke.kernel_pattern)
    assert call == "nv_universal_gemm_fused_mm_0" and kernel.startswith("cutedsl.Sm90StaticPersistentGemmOperator_")
    assert fallbacks == []
    assert find_kernel("extern_kernels.mm(a, b)", operators_policy.smoke.call_pattern, operators_policy.smoke.kernel_pattern) == (
        None, None, ["cuBLAS (extern_kernels.mm)"])


def test_a_profile_without_a_library_refuses_library_and_leaves_the_caches_alone(tmp_path, policy):
    from dataclasses import replace

    no_library = replace(policy, smoke=replace(policy.smoke, library=""))
    kept = tmp_path / "cache" / "inductor" / "fxgraph" / "entry"
    kept.parent.mkdir(parents=True)
    kept.write_text("a warm cache")
    result = run_smoke(sys.executable, GOOD, no_library, timeout=30, cache_dir=tmp_path / "cache", library=True, fresh=True)
    assert result.status is Status.FAIL and result.cause_id == "no-library"
    assert kept.read_text() == "a warm cache"  # --fresh did not empty it for a run that was refused
