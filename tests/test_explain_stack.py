"""explain (and the smoke's diagnosis, one table) on the operators stack's messages (issue 17 item 5): each on a real
log or on the message exactly as its wheel writes it (the file and line are named beside it; facts-17 section 10), and
on variants no source writes: another path, another version number, a line wrapped by a terminal or prefixed by a
test runner or a launcher. `No module named 'cutlass.operators'` is no DSL problem."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.causes import Context, Evidence, context_from, diagnose
from envcheck.causes.log import LogReader, scan
from envcheck.profile import load_builtin

H200_LOG = Path(__file__).parent / "data" / "h200-2026-12-01" / "e.log"  # ../shared/h200/2026-12-01/e.log, E4


@pytest.fixture(scope="module")
def operators():
    return load_builtin("torch-2.14-operators")


def found_in(text: str, policy, **known) -> tuple:
    ctx = replace(Context("/venv/bin/python", policy, known=False), **known) if known else Context("python3", policy,
                                                                                                     known=False)
    return scan(LogReader(io.BytesIO(text.encode())), ctx)


def main_cause(text: str, policy, **known):
    found = found_in(text, policy, **known)
    assert found, text
    return found[0].cause


# Each message as its source writes it (the wheel, the file:line), and the cause it is.
EXACT = [
    # nvidia_cutlass_operators-0.3.0 · cutlass/operators/arch.py:92
    ("ValueError: TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer", "target-sm-invalid"),
    # nvidia_cutlass_dsl_libs_core-4.8.1 · cutlass/cute/nvgpu/warpgroup/mma.py:156, as torch 2.14.1's precompile worker
    # logs it (../shared/h200/2026-12-01-s4/model-nv16-arch-errors.log line 54, colour codes removed)
    ("E1201 20:20:43.815000 3303 torch/_inductor/select_algorithm.py:4866] [0/0] error: expects arch to be sm_90a, but "
     "got sm_100a", "dsl-arch-mismatch"),
    # standard Python, raised by `import cutlass.operators` (pytorch/pytorch#191130; DSL 4.3.5 + operators 0.3.0 run)
    ("ModuleNotFoundError: No module named 'cutlass.operators'", "cutlass-operators-missing"),
    # torch-2.14.1 · torch/_inductor/codegen/nv_universal_gemm/nv_universal_gemm_kernel.py:574 with operators >= 0.2.0
    ("ModuleNotFoundError: No module named 'cutlass.operators.providers.cutedsl.evt.common_efc'", "common-efc"),
    # nvidia_cutlass_dsl_libs_core-4.8.1 · cutlass/cutlass_dsl/tvm_ffi_provider.py:1020-1023
    ("cutlass.base_dsl.common.DSLRuntimeError: TVM FFI function is not initialized. Was this function compiled for a "
     "different architecture?", "tvm-ffi-not-initialized"),
    # nvidia_cutlass_dsl_libs_core-4.8.1 · cutlass/cutlass_dsl/tvm_ffi_provider.py:1066-1070
    ("DSLRuntimeError: install apache-tvm-ffi>=0.1.11 to enable kwargs / defaults / top-level dataclass argument "
     "support", "tvm-ffi-needed"),
    # nvidia_cutlass_dsl_libs_base-4.8.1 · cutlass/_mlir/_mlir_libs/__init__.py:162-170
    ("RuntimeError: None of the installed toolkit flavors (cu13) are compatible with the CUDA driver (driver supports "
     "up to CUDA 12.8). Install a compatible flavor (e.g. `pip install nvidia-cutlass-dsl` for cu12) or update the "
     "driver.", "dsl-flavor-incompatible"),
    # the same file :125-130
    ("RuntimeError: cu13 install is incomplete: /usr/lib/python3/dist-packages/nvidia_cutlass_dsl/dsl_packages/cutlass/"
     "_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so present but libcute_dsl_runtime.so is missing "
     "from cu13/lib under /usr/lib/python3/dist-packages/nvidia_cutlass_dsl. Reinstall the cu13 flavor.",
     "dsl-install-incomplete"),
    # nvidia_cutlass_operators-0.3.0 · cutlass/operators/config.py:128-139
    ("ValueError: Conflicting environment variables: CUTLASS_OPERATORS_USE_TVM_FFI=True (enables TVM FFI) with "
     "CUTE_DSL_ENABLE_TVM_FFI=False (disables TVM FFI). Set both to consistent values, or unset one to avoid "
     "confusing behavior.", "operators-tvm-ffi-conflict"),
    # nvidia_cutlass_operators-0.3.0 · cutlass/operators/heuristics/nvmatmul/ranker.py:61-68
    ("ImportError: nvmatmul heuristic requires 'nvidia-matmul-heuristics>=0.1.0.27'. Install it (e.g. pip install "
     "'nvidia-cutlass-operators[heuristics]'), or omit heuristic= / do not pass NvMatmulHeuristics().",
     "nvmmh-missing"),
    # NVIDIA/cutlass#3083; nvidia_cutlass_dsl_libs_base-4.4.0 · cutlass/base_dsl/common.py:289-320, compiler.py:207-220
    ("cutlass.base_dsl.common.CudaDriverDependencyError: CUDA Driver Dependency Error", "dsl-driver-dependency"),
    # NVIDIA/cutlass#3110 (the traceback's last line)
    ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", "no-libcuda"),
    # NVIDIA/cutlass#3416 / #3417
    ("ModuleNotFoundError: No module named 'cutlass._mlir'", "cutlass-mlir-missing"),
    # CUDA error 209 as torch prints it; the DSL's alias (nvidia_cutlass_dsl_libs_core-4.8.1 · base_dsl/common.py:41)
    ("torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device",
     "no-kernel-image"),
    ("cudaErrorNoKernelImageForDevice", "no-kernel-image"),
]

# What no source writes: another path, version, capability, flavour list; a line wrapped by a terminal (the message
# goes on on the next line); a prefix of pytest (E   ), torchrun ([rank0]:) or Inductor's wrapping exception.
VARIANTS = [
    ("torch._inductor.exc.InductorError: LoweringException: ValueError: TargetSm 86a is invalid. ArchConditional "
     "targets must be\n  Hopper (sm90) or newer\n  target: aten.mm.default", "target-sm-invalid"),
    ("[rank0]: ValueError: TargetSm 89a is invalid. ArchConditional targets must be Hopper (sm90) or newer",
     "target-sm-invalid"),
    ("E   ModuleNotFoundError: No module named 'cutlass.operators'", "cutlass-operators-missing"),
    ("    from cutlass.operators import ScaleMode, ScaleSwizzleMode\nModuleNotFoundError: No module named "
     "'cutlass.operators.providers'", "cutlass-operators-missing"),
    ("DSLRuntimeError: TVM FFI function is not initialized.\n Was this function compiled for a different "
     "architecture?", "tvm-ffi-not-initialized"),
    ("DSLRuntimeError: install apache-tvm-ffi>=0.1.5 to enable kwargs/defaults", "tvm-ffi-needed"),  # DSL 4.3.5-4.5
    ("RuntimeError: None of the installed toolkit flavors (cu12, cu13) are compatible with the CUDA driver (driver\n"
     "supports up to CUDA 11.8).", "dsl-flavor-incompatible"),
    ("RuntimeError: cu12 install is incomplete: /opt/conda/lib/python3.11/site-packages/nvidia_cutlass_dsl/"
     "_cutlass_ir.cu12.so present but /opt/conda/lib/python3.11/site-packages/nvidia_cutlass_dsl/cu12/lib/"
     "libcute_dsl_runtime.so is missing. Reinstall the cu12 flavor.", "dsl-install-incomplete"),  # 4.6.0's wording
    ("Conflicting environment variables: CUTLASS_OPERATORS_USE_TVM_FFI=False (disables TVM FFI) with\n"
     "CUTE_DSL_ENABLE_TVM_FFI=True (enables TVM FFI).", "operators-tvm-ffi-conflict"),
    ("ImportError: nvmatmul heuristic requires 'nvidia-matmul-heuristics>=0.1.0.31' with the 0.1.0.31 API shape "
     "(found 0.1.0.20).", "nvmmh-missing"),
    ("CUDA runtime initialization failed during dependency check.", "dsl-driver-dependency"),
    ("OSError: /lib/aarch64-linux-gnu/libcuda.so.1: cannot open shared object file: No such file or directory",
     "no-libcuda"),
    ("ModuleNotFoundError: No module named 'cutlass._mlir._mlir_libs._cutlass_ir'", "cutlass-mlir-missing"),
    ("DSLCudaRuntimeError: CUDA_ERROR_NO_BINARY_FOR_GPU (error code: 209)", "no-kernel-image"),
    ("  File \"/srv/app/model.py\", line 12, in <module>\nModuleNotFoundError: No module named "
     "'cutlass.operators.providers.cutedsl.evt.common_efc'", "common-efc"),
]


@pytest.mark.parametrize("text, cause_id", EXACT + VARIANTS)
def test_explain_names_the_cause(policy, text, cause_id):
    cause = main_cause(f"step 1 ok\n{text}\nstep 2\n", policy)
    assert cause.id == cause_id and cause.text and cause.remedy is not None and cause.remedy.text


@pytest.mark.parametrize("text, cause_id", EXACT)
def test_the_smoke_diagnosis_names_the_same_cause_from_a_result_line(operators, text, cause_id):
    kind, _, message = text.partition(": ")
    result = {"ok": False, "error": {"type": kind, "message": message, "traceback": ""}}
    ctx = context_from(fb.facts(driver=fb.driver(gpus=[fb.gpu(capability=(9, 0), name="NVIDIA H200")])), operators,
                       "/venv/bin/python")
    assert diagnose(Evidence(result=result, log="", returncode=1), ctx).id == cause_id


@pytest.mark.parametrize("module", ["cutlass.operators", "cutlass.operators.providers", "cutlass._mlir",
                                    "cutlass._mlir_helpers"])
def test_cutlass_operators_and_mlir_are_not_read_as_the_dsl_missing(policy, module):
    found = found_in(f"ModuleNotFoundError: No module named '{module}'\n", policy)
    assert "cutlass-not-importable" not in [f.cause.id for f in found]


def test_the_dsls_own_modules_still_are(policy):
    for module in ("cutlass", "cutlass.cute", "cutlass.base_dsl.dsl", "cutlass.cutlass_dsl"):
        assert main_cause(f"No module named '{module}'\n", policy).id == "cutlass-not-importable"


# --------------------------------------------------------------------------------------------------------------
# What each says


def test_the_h200s_targetsm_log_says_what_doctor_says_with_the_way_out(operators):
    """The real log of the H200 made to read 8.0 (E4): the words of the operators profile's [gpu-below] row."""
    cause = main_cause(H200_LOG.read_text(encoding="utf-8"), operators)
    assert cause.id == "target-sm-invalid"
    assert cause.text.startswith("NVGEMM breaks torch.compile on this GPU with torch >= 2.14 (TargetSm 80a)")
    assert "compute capability 8.0" in cause.text
    assert cause.remedy.text == operators.gpu_below.remedy and "torch-2.11-nvgemm" in cause.remedy.text
    assert "TargetSm 80a is invalid" in cause.evidence


def test_a_profile_without_that_way_out_still_gives_it(policy):
    cause = main_cause("ValueError: TargetSm 86a is invalid. ArchConditional targets must be Hopper (sm90) or newer",
                       policy)
    assert "compute capability 8.6" in cause.text and "torch 2.11 to 2.13" in cause.remedy.text
    assert "max_autotune_gemm_backends" in cause.remedy.text


def test_a_family_target_below_blackwell_is_named_for_what_it_is(policy):
    cause = main_cause("ValueError: TargetSm 90f is invalid. FamilyPortable targets must be Blackwell (sm100) or newer",
                       policy)
    assert cause.id == "target-sm-invalid" and "family-portable" in cause.text and "NVGEMM breaks" not in cause.text


@pytest.mark.parametrize("dsl, words", [("4.3.5", "older than 4.6"), ("4.5.3", "older than 4.6"),
                                        ("4.8.1", "is not installed"), (None, "is not installed")])
def test_cutlass_operators_missing_says_which_of_its_causes(policy, dsl, words):
    cause = main_cause("No module named 'cutlass.operators'", policy, cutedsl_version=dsl, known=dsl is not None)
    assert cause.id == "cutlass-operators-missing" and words in cause.text
    assert cause.remedy.steps[0].args == ("nvidia-cutlass-operators", "nvidia-cutlass-dsl[cu13]>=4.8.0")


def test_cutlass_operators_missing_installs_the_profiles_requirement(operators):
    cause = main_cause("No module named 'cutlass.operators'", operators)
    assert cause.remedy.steps[0].args == ("nvidia-cutlass-operators>=0.3.0", "nvidia-cutlass-dsl[cu13]>=4.8.0")


@pytest.mark.parametrize("text, requirement", [
    ("install apache-tvm-ffi>=0.1.11 to enable kwargs / defaults", "apache-tvm-ffi>=0.1.11"),
    ("install apache-tvm-ffi>=0.1.5 to enable kwargs/defaults", "apache-tvm-ffi>=0.1.5"),
])
def test_the_dsls_tvm_ffi_request_is_installed_as_asked(policy, text, requirement):
    cause = main_cause(text, policy)
    assert cause.remedy.steps[0].args == (requirement,) and "0.1.11" in cause.text and "0.1.15.post2" in cause.text


@pytest.mark.parametrize("text, requirement", [
    ("None of the installed toolkit flavors (cu13) are compatible with the CUDA driver (x)",
     "nvidia-cutlass-dsl-libs-cu12==4.8.1"),
    ("cu13 install is incomplete: a present but b is missing. Reinstall the cu13 flavor.",
     "nvidia-cutlass-dsl-libs-cu13==4.8.1"),
    ("cu12 install is incomplete: a present but b is missing. Reinstall the cu12 flavor.",
     "nvidia-cutlass-dsl-libs-cu12==4.8.1"),
])
def test_the_dsl_flavour_remedies_name_the_installed_version(policy, text, requirement):
    cause = main_cause(text, policy, cutedsl_version="4.8.1", known=True)
    assert cause.remedy.steps[0].args == (requirement,)
    # from the log alone the DSL's version is unknown: no command, which would pull the newest flavour (another
    # version than -libs-base, the very mismatch of the cause), but the words that say what to install
    blind = main_cause(text, policy).remedy
    assert not blind.commands and not blind.steps
    assert requirement.split("==")[0] in blind.text and "the DSL's own" in blind.text and "{" not in blind.text


def test_the_conflict_says_envchecks_runs_clear_both(policy):
    from envcheck.runner import variable_rule

    cause = main_cause("Conflicting environment variables: CUTLASS_OPERATORS_USE_TVM_FFI=True (enables", policy)
    assert "clear both" in cause.text
    assert variable_rule("CUTLASS_OPERATORS_USE_TVM_FFI").clear and variable_rule("CUTE_DSL_ENABLE_TVM_FFI").clear


def test_the_cli_reads_the_h200_log(tmp_path):
    done = subprocess.run([sys.executable, "-m", "envcheck", "explain", str(H200_LOG), "--json", "--policy",
                           "torch-2.14-operators"], capture_output=True, text=True, timeout=120)
    data = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr
    assert data["causes"][0]["id"] == "target-sm-invalid"
    assert "(TargetSm 80a)" in data["causes"][0]["text"]
