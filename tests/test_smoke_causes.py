"""Every failure signature maps to its cause and a remedy: real outputs captured on an H200 (tests/data/smoke), and a
table with one example for every signature."""

from __future__ import annotations

import signal
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.model import Failure, Status
from envcheck.smoke import parse_child_output
from envcheck.causes import SIGNATURES, Context, Evidence, context_from, diagnose, preflight
from envcheck.userfile import tomllib

DATA = Path(__file__).parent / "data" / "smoke"
H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")


def ctx_for(policy, facts=None, **kw) -> Context:
    facts = facts or fb.facts(driver=fb.driver(gpus=[H200]))
    return replace(context_from(facts, policy, "/opt/venv/bin/python"), **kw)


def evidence_of(name: str, **kw) -> Evidence:
    text = (DATA / name).read_text(encoding="utf-8")
    result, phase = parse_child_output(text)
    return Evidence(result=result, log=text, returncode=kw.pop("returncode", 1), last_phase=phase, **kw)


# --------------------------------------------------------------------------------------------------------------
# Real outputs


def test_cutedsl_backend_on_cc90_is_explained_as_blackwell_only(policy):
    cause = diagnose(evidence_of("cutedsl-backend-cc90.log"), ctx_for(policy, backends="CUTEDSL"))
    assert cause.id == "no-valid-choices"
    assert "10.x only" in cause.text and "9.0" in cause.text
    assert "NoValidChoicesError" in cause.evidence


def test_cuda_hidden_from_torch(policy):
    cause = diagnose(evidence_of("no-cuda-visible.log"), ctx_for(policy))
    assert cause.id == "no-cuda"
    assert "CUDA_VISIBLE_DEVICES" in cause.text and "NVIDIA H200 (9.0)" in cause.text


@pytest.mark.parametrize("log", ["no-cutlass-api.log", "no-cutlass-api-inductor.log"])
def test_cutlass_api_uninstalled(policy, log):
    """Whether the child imported it or a warm Inductor cache did: the cause is named, with the fixer's steps."""
    cause = diagnose(evidence_of(log), ctx_for(policy, cutlass_api_found=False))
    assert cause.id == "cutlass-api-missing"
    assert [s.kind for s in cause.remedy.steps] == ["cutlass-fetch", "cutlass-install"]
    assert any(policy.cutlass.commit in command for command in cause.remedy.commands)


@pytest.mark.parametrize("log", ["pth-trap.log", "pth-trap-inductor.log"])
def test_pth_trap(policy, log):
    ctx = ctx_for(policy, cutlass_found=False, cutedsl_location="/tmp/target")
    cause = diagnose(evidence_of(log), ctx)
    assert cause.id == "cutlass-not-importable"
    assert ".pth" in cause.text and "/tmp/target" in cause.text
    assert cause.remedy.commands[0][-1] == policy.cutedsl.requirement


def test_proxykind_wins_over_the_no_valid_choices_it_causes(policy):
    b200 = fb.facts()
    ctx = ctx_for(policy, b200, cutedsl_version="4.6.0")
    cause = diagnose(evidence_of("proxykind-synthesized.log"), ctx)
    assert cause.id == "dsl-too-new"
    assert "4.6.0 is too new" in cause.text and "ProxyKind" in cause.text and "4.4.x and 4.5.x still" in cause.text
    assert cause.remedy.steps[0].args == (policy.cutedsl.requirement,)


def test_a_proxykind_error_beside_a_dsl_that_still_has_it_is_not_called_too_new(policy):
    """DSL 4.4.0-4.5.x still export cute.arch.ProxyKind (the wheels): the log's error is another environment's."""
    cause = diagnose(evidence_of("proxykind-synthesized.log"), ctx_for(policy, fb.facts(), cutedsl_version="4.4.0"))
    assert cause.id == "dsl-too-new" and "is too new" not in cause.text
    assert "one that still exports it (<4.6" in cause.text and cause.remedy.steps == ()


def test_timeout_names_the_phase_it_was_in(policy):
    cause = diagnose(evidence_of("timeout-12s.log", returncode=None, timed_out=True, timeout_s=12), ctx_for(policy))
    assert cause.id == "timeout"
    assert "12 s" in cause.text and "compile" in cause.text
    assert "--timeout" in cause.remedy.commands[0]


# --------------------------------------------------------------------------------------------------------------
# One example per signature


EXAMPLES = [
    ("AttributeError: module 'cutlass.cute.arch' has no attribute 'ProxyKind'", "dsl-too-new"),
    ("TypeError: make_kwargs_wrapper() got an unexpected keyword argument 'map_dataclass_to_tuple'", "tvm-ffi-too-old"),
    ("RuntimeError: No CTK flavor installed: expected one or more of /venv/lib/python3.12/site-packages/"
     "nvidia_cutlass_dsl/lib/_cutlass_ir.cu{N}.cpython-312-x86_64-linux-gnu.so", "dsl-libs-missing"),
    ("ModuleNotFoundError: No module named 'torch'", "torch-missing"),
    ("ModuleNotFoundError: No module named 'cutlass_api'", "cutlass-api-missing"),
    ("ModuleNotFoundError: No module named 'cutlass_api.providers'", "cutlass-api-missing"),
    ("ModuleNotFoundError: No module named 'cutlass'", "cutlass-not-importable"),
    ("ModuleNotFoundError: No module named 'cutlass.cute'", "cutlass-not-importable"),
    ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain", "cuda-driver"),
    ("cudaErrorUnsupportedPtxVersion", "cuda-driver"),
    ("RuntimeError: CUDA driver version is insufficient for CUDA runtime version", "cuda-driver"),
    ("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW", "cuda-driver"),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 12020)", "cuda-driver"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB", "cuda-out-of-memory"),
    ("SmokeNoCuda: torch 2.11.0+cu130 (CUDA build 13.0) sees no CUDA device", "no-cuda"),
    ("AssertionError: Torch not compiled with CUDA enabled", "no-cuda"),
    ("NoValidChoicesError: No choices to select. Provided reason: No choices exist for backend.", "no-valid-choices"),
    # an op NVGEMM has no kernel for on any stack (LoweringException names it on the next line)
    ("InductorError: LoweringException: NoValidChoicesError: No choices to select. Provided reason: No choices exist "
     "for backend.\n  target: aten.baddbmm.default", "nvgemm-no-kernel-for-op"),
    ("SmokeFellBack: Inductor's generated code has no async_compile.nv_universal_gemm call: the GEMM ran on Triton", "fell-back"),
    ("SmokeWrongResult: max |out - ref| = 12 exceeds bfloat16's tolerance", "wrong-result"),
    # The operators stack's own messages, exactly as their wheels write them (tests/test_explain_stack.py has the
    # sources, real logs and variants).
    ("ValueError: TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer", "target-sm-invalid"),
    ("cutlass.base_dsl.common.DSLUserCodeError: error: expects arch to be sm_90a, but got sm_100a", "dsl-arch-mismatch"),
    ("ModuleNotFoundError: No module named 'cutlass.operators'", "cutlass-operators-missing"),
    ("ModuleNotFoundError: No module named 'cutlass.operators.providers.cutedsl.evt.common_efc'", "common-efc"),
    ("DSLRuntimeError: TVM FFI function is not initialized. Was this function compiled for a different architecture?",
     "tvm-ffi-not-initialized"),
    ("DSLRuntimeError: install apache-tvm-ffi>=0.1.11 to enable kwargs / defaults / top-level dataclass argument support",
     "tvm-ffi-needed"),
    ("ValueError: Conflicting environment variables: CUTLASS_OPERATORS_USE_TVM_FFI=True (enables TVM FFI) with "
     "CUTE_DSL_ENABLE_TVM_FFI=False (disables TVM FFI). Set both to consistent values, or unset one to avoid confusing "
     "behavior.", "operators-tvm-ffi-conflict"),
    ("ImportError: nvmatmul heuristic requires 'nvidia-matmul-heuristics>=0.1.0.27'. Install it (e.g. pip install "
     "'nvidia-cutlass-operators[heuristics]'), or omit heuristic= / do not pass NvMatmulHeuristics().", "nvmmh-missing"),
    ("RuntimeError: None of the installed toolkit flavors (cu13) are compatible with the CUDA driver (driver supports up "
     "to CUDA 12.8). Install a compatible flavor (e.g. `pip install nvidia-cutlass-dsl` for cu12) or update the driver.",
     "dsl-flavor-incompatible"),
    ("RuntimeError: cu13 install is incomplete: /venv/lib/python3.12/site-packages/nvidia_cutlass_dsl/dsl_packages/"
     "cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so present but libcute_dsl_runtime.so is "
     "missing from cu13/lib under /venv/lib/python3.12/site-packages/nvidia_cutlass_dsl. Reinstall the cu13 flavor.",
     "dsl-install-incomplete"),
    ("ModuleNotFoundError: No module named 'cutlass._mlir'", "cutlass-mlir-missing"),
    ("CudaDriverDependencyError: CUDA Driver Dependency Error", "dsl-driver-dependency"),
    ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory", "no-libcuda"),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", "no-kernel-image"),
]


# The rows of issue 25: a message of each failing one from tests/data/upstream-messages.toml (the warning rows explain
# no failure: the smoke's diagnosis passes over them, below).
_UPSTREAM = [(m["text"].strip("\n"), m["cause"]) for m in tomllib.loads(
    (Path(__file__).parent / "data" / "upstream-messages.toml").read_text(encoding="utf-8"))["message"]]
_WARN_ONLY = {s.id for s in SIGNATURES if not s.row.status.is_problem}
_ROWS = {s.id: s for s in SIGNATURES}
EXAMPLES += [next((line.strip(), cause) for text, cause in _UPSTREAM if cause == id_
                  for line in text.splitlines() if _ROWS[id_].search(line))
             for id_ in dict.fromkeys(c for _, c in _UPSTREAM)
             if id_ not in {c for _, c in EXAMPLES} and id_ not in _WARN_ONLY]


def test_the_examples_cover_every_signature():
    assert {s.id for s in SIGNATURES} - _WARN_ONLY == {cause for _, cause in EXAMPLES}


@pytest.mark.parametrize("text, cause_id", [(t, c) for t, c in _UPSTREAM if c in _WARN_ONLY])
def test_a_warning_s_message_is_never_the_smoke_s_failure(policy, text, cause_id):
    cause = diagnose(Evidence(result=None, log=text + "\n", returncode=1), ctx_for(policy))
    assert cause.id == "no-result" and cause_id not in cause.text


@pytest.mark.parametrize("message, cause_id", EXAMPLES)
def test_signature_table(policy, message, cause_id):
    kind, _, text = message.partition(": ")
    result = {"ok": False, "error": {"type": kind, "message": text, "traceback": ""}}
    cause = diagnose(Evidence(result=result, log="", returncode=1), ctx_for(policy))
    assert cause.id == cause_id
    assert cause.text and cause.remedy is not None and cause.remedy.text
    assert cause.status is Status.FAIL


@pytest.mark.parametrize("message, cause_id", EXAMPLES)
def test_signature_found_in_the_log_alone(policy, message, cause_id):
    """A child that died before its result line: the log is the only evidence."""
    cause = diagnose(Evidence(result=None, log=f"some output\n{message}\nmore\n", returncode=1), ctx_for(policy))
    # the evidence line is cut at 300 characters; an op's (nvgemm-no-kernel-for-op) is the `target:` line after the error
    assert cause.id == cause_id and cause.evidence == message.splitlines()[-1].strip()[:300]


def test_cpu_build_of_torch_is_told_apart_from_a_hidden_gpu(policy):
    result = {"error": {"type": "SmokeNoCuda", "message": "torch 2.11.0+cpu (CUDA build None) sees no CUDA device"}}
    cause = diagnose(Evidence(result=result, log="", returncode=1), ctx_for(policy))
    assert "CPU-only" in cause.text and cause.remedy.steps[0].reinstall


@pytest.mark.parametrize(
    "number, words",
    [(signal.SIGSEGV, "SIGSEGV"), (signal.SIGABRT, "native code"), (signal.SIGKILL, "out-of-memory killer"), (signal.SIGTERM, "SIGTERM")],
)
def test_killed_by_signal(policy, number, words):
    evidence = Evidence(result=None, log="envcheck-smoke: phase compile +7.1\n", returncode=-number, last_phase="compile")
    cause = diagnose(evidence, ctx_for(policy))
    assert cause.id == "killed-by-signal" and words in cause.text and "during compile" in cause.text


def test_no_result_and_no_signature(policy):
    cause = diagnose(Evidence(result=None, log="Segmentation fault (core dumped)\n", returncode=139), ctx_for(policy))
    assert cause.id == "no-result" and "139" in cause.text and "Segmentation fault" in cause.evidence


def test_unknown_error_is_said_as_it_is(policy):
    result = {"error": {"type": "ValueError", "message": "something new", "traceback": ""}}
    cause = diagnose(Evidence(result=result, log="", returncode=1), ctx_for(policy))
    assert cause.id == "unexplained" and "ValueError: something new" in cause.text


# --------------------------------------------------------------------------------------------------------------
# NoValidChoicesError and `import cutlass`: one signature, several causes, told apart by the facts


NO_CHOICES = {"error": {"type": "NoValidChoicesError", "message": "No choices to select.", "traceback": ""}}


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"cutlass_api_found": False}, "cutlass_api is not importable"),
        ({"backends": "CUTEDSL", "capability": (12, 0)}, "10.x only"),
        ({"capability": (7, 5)}, "compute capability 7.5"),
        ({"dtype": "float32"}, "no float32 GEMM"),
        ({}, "every candidate failed"),
    ],
)
def test_no_valid_choices_causes(policy, changes, words):
    cause = diagnose(Evidence(result=NO_CHOICES, log="", returncode=1), ctx_for(policy, **changes))
    assert cause.id == "no-valid-choices"
    assert words in cause.text


NO_CUTLASS = {"error": {"type": "ModuleNotFoundError", "message": "No module named 'cutlass'", "traceback": ""}}


@pytest.mark.parametrize(
    "changes, words, first_step",
    [
        ({"split_packages": ("nvidia-cutlass-dsl-libs-base",)}, "split packages", "pip-uninstall"),
        ({"cutedsl_location": "/tmp/target"}, "not a site directory", "pip-install"),
        ({"cutedsl_location": fb.SITE}, "damaged or shadowed", "pip-install"),
        ({"cutedsl_version": None}, "not installed", "pip-install"),
    ],
)
def test_cutlass_import_causes(policy, changes, words, first_step):
    cause = diagnose(Evidence(result=NO_CUTLASS, log="", returncode=1), ctx_for(policy, **changes))
    assert cause.id == "cutlass-not-importable" and words in cause.text
    assert cause.remedy.steps[0].kind == first_step


# --------------------------------------------------------------------------------------------------------------
# Preflight: what the facts say before any compile


@pytest.mark.parametrize(
    "facts, cause_id, status",
    [
        (fb.facts(driver=Failure("driver", "NVML library not found")), "no-gpu", Status.SKIP),
        (fb.facts(driver=fb.driver(gpus=[])), "no-gpu", Status.SKIP),
        (fb.facts(interpreter=Failure("interpreter", "no interpreter at /nope")), "interpreter", Status.FAIL),
        (fb.facts(interpreter=fb.interpreter(torch=None)), "torch-missing", Status.FAIL),
        (fb.facts(interpreter=fb.interpreter(torch=fb.TorchBuild("2.11.0+cpu", None))), "torch-cpu-build", Status.FAIL),
        (fb.facts(driver=fb.driver(gpus=[fb.gpu((7, 5), "Tesla T4")])), "gpu-unsupported", Status.FAIL),
        (fb.facts(interpreter=fb.interpreter(modules={"cutlass": None})), "cutlass-not-importable", Status.FAIL),
        (fb.facts(interpreter=fb.interpreter(modules={"cutlass_api": None})), "cutlass-api-missing", Status.FAIL),
    ],
)
def test_preflight_table(policy, facts, cause_id, status):
    cause = preflight(facts, policy, context_from(facts, policy, "/opt/venv/bin/python"))
    assert (cause.id, cause.status) == (cause_id, status)
    assert cause.text
    if status is Status.FAIL:
        assert cause.remedy is not None


def test_preflight_lets_a_good_stack_through(policy):
    facts = fb.facts(driver=fb.driver(gpus=[H200]))
    assert preflight(facts, policy, context_from(facts, policy, "/opt/venv/bin/python")) is None


def test_preflight_names_the_pth_trap_from_the_facts(policy):
    """The captured H200 state: the DSL in /tmp/target on PYTHONPATH, `cutlass` not findable."""
    interpreter = fb.interpreter(modules={"cutlass": None})
    dsl = fb.dist("nvidia-cutlass-dsl", "4.3.5", location="/tmp/target")
    interpreter = replace(interpreter, distributions=(dsl,) + tuple(d for d in interpreter.distributions if d.name != dsl.name))
    facts = fb.facts(interpreter=interpreter, driver=fb.driver(gpus=[H200]))
    cause = preflight(facts, policy, context_from(facts, policy, "/opt/venv/bin/python"))
    assert cause.id == "cutlass-not-importable" and "/tmp/target" in cause.text and ".pth" in cause.text


def test_context_from_facts(policy):
    facts = fb.facts(driver=fb.driver(gpus=[H200]), interpreter=fb.interpreter(
        extra=(fb.dist("nvidia-cutlass-dsl-libs-base", "4.4.0"),)))
    ctx = context_from(facts, policy, "/p")
    assert ctx.capability == (9, 0) and ctx.gpu == "NVIDIA H200 (9.0)"
    assert ctx.cutedsl_version == "4.3.5" and ctx.split_packages == ("nvidia-cutlass-dsl-libs-base",)
    assert ctx.backends == policy.backend


def test_tvm_ffi_too_old_names_the_version_that_works(policy):
    ctx = ctx_for(policy, cutedsl_version="4.8.1")
    result = {"ok": False, "error": {"type": "TypeError", "message": EXAMPLES[1][0].split(": ", 1)[1], "traceback": ""}}
    cause = diagnose(Evidence(result=result, log="", returncode=1), ctx)
    assert cause.id == "tvm-ffi-too-old" and "4.8.1" in cause.text and "map_dataclass_to_tuple" in cause.text
    assert cause.remedy.steps[0].args == ("apache-tvm-ffi>=0.1.11",)  # the floor (0.1.15.post2 is what ran)
    assert "0.1.15.post2" in cause.text and ">= 0.1.11" in cause.text


@pytest.mark.parametrize("torch_cuda, flavor", [("13.0", "cu13"), ("12.8", "cu12"), (None, "cu13")])
def test_dsl_libs_missing_picks_the_flavour_of_torch(policy, torch_cuda, flavor):
    ctx = ctx_for(policy, cutedsl_version="4.8.1", torch_cuda=torch_cuda)
    result = {"ok": False, "error": {"type": "RuntimeError", "message": "No CTK flavor installed: expected ...", "traceback": ""}}
    cause = diagnose(Evidence(result=result, log="", returncode=1), ctx)
    assert cause.id == "dsl-libs-missing"
    assert cause.remedy.steps[0].args == (f"nvidia-cutlass-dsl[{flavor}]==4.8.1",)
