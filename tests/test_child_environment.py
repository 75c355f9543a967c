"""What the smoke and bench children get of the caller's environment (runner.ENVIRONMENT, issue 17 item 2): every
NVGEMM-related variable cleared or kept, each present one recorded in the result, checked with real child processes
that print what they see; the kernel-lookup marker only for the library whose lookup it seeds; `smoke --library` and
the smoke's preflight on a GPU below 9.0 say what doctor says."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.bench import run_bench
from envcheck.bench.result import BenchOptions
from envcheck.bench.shapes import Shape
from envcheck.inside.library import inductor_target_sm
from envcheck.model import Status, gpus_given
from envcheck.profile import load_builtin
from envcheck.redact import Redactor
from envcheck.runner import ENVIRONMENT, LOOKUP_MARKER, child_environment, variable_rule
from envcheck.smoke import run_smoke

FAKE_GPU = Path(__file__).parent / "data" / "bench" / "fake_gpu"
H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")
GOOD = fb.facts(driver=fb.driver(gpus=[H200]))
# Both kernel libraries found, so that the preflight of either profile lets the child start.
BOTH = fb.facts(driver=fb.driver(gpus=[H200]), interpreter=fb.interpreter(modules={
    "cutlass.operators": f"{fb.SITE}/nvidia_cutlass_dsl/dsl_packages/cutlass/operators/__init__.py",
    "cutlass_api": f"{fb.SITE}/cutlass_api/__init__.py"}))
PY = sys.executable

# Every variable facts-17 section 7 found read by torch 2.13-2.15, nvidia-cutlass-operators 0.3.0, the DSL 4.8.1
# and apache-tvm-ffi 0.1.15.post2 that changes what an NVGEMM run does or how it is measured.
CLEARED = (
    "TORCHINDUCTOR_MAX_AUTOTUNE",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS",
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_SEARCH_SPACE", "TORCHINDUCTOR_AUTOTUNE_IN_SUBPROC",
    "TORCHINDUCTOR_AUTOTUNE_CHOICE_NAME_REGEX", "TORCHINDUCTOR_AUTOTUNE_CHOICE_DESC_REGEX",
    "TORCHINDUCTOR_AUTOTUNE_FALLBACK_TO_ATEN", "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE", "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE",
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_COMPILE_THREADS",
    "TORCH_COMPILE_DISABLE", "TORCHDYNAMO_DISABLE", "CUTEDSL_ENABLE_AUTOTUNING", "CUTE_DSL_ARCH", "CUTE_DSL_LIBS",
    "CUTE_DSL_ENABLE_TVM_FFI", "CUTE_DSL_COMPILER_BACKEND", "CUTE_DSL_NO_CACHE", "CUTE_DSL_DRYRUN",
    "CUTE_DSL_COMPILER_OPT", "CUTE_DSL_KEEP_PTX", "CUTE_DSL_DISABLE_FILE_CACHING", "CUTLASS_OPERATORS_USE_TVM_FFI",
    "DISABLE_ARGUMENT_FILTERING", "TVM_FFI_DISABLE_TORCH_C_DLPACK", "TVM_FFI_CUDA_ARCH_LIST", "PYTHONDONTWRITEBYTECODE",
)
KEPT = ("TVM_FFI_CACHE_DIR", "CUTLASS_NVMMH_SO_PATH", "CUDA_VISIBLE_DEVICES")
# Inductor's NVGEMM settings (issue 29): how many NVGEMM choices a GEMM gets, and so whether torch sends them to its
# compile workers: passed on, so the children compile as the user's process does, and named in the result.
SETTINGS = ("TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS", "TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS",
            "TORCHINDUCTOR_NVGEMM_SWAP_AB", "TORCHINDUCTOR_NVGEMM_PDL", "TORCHINDUCTOR_NVGEMM_PREFETCH",
            "TORCHINDUCTOR_NVGEMM_OF_A_NEWER_TORCH")
UNRELATED = ("PATH", "HOME", "TORCH_HOME", "CUTLASS_PATH", "TORCHINDUCTOR_UNRELATED", "LANG")


@pytest.mark.parametrize("name", CLEARED)
def test_every_nvgemm_variable_is_cleared(name):
    rule = variable_rule(name)
    assert rule is not None and rule.clear and rule.why


@pytest.mark.parametrize("name", KEPT)
def test_a_sites_own_locations_are_kept_and_recorded(name):
    rule = variable_rule(name)
    assert rule is not None and not rule.clear and rule.why


@pytest.mark.parametrize("name", SETTINGS)
def test_inductors_nvgemm_settings_are_passed_on_and_named(name):
    rule = variable_rule(name)
    assert rule is not None and not rule.clear and rule.setting and rule.why


@pytest.mark.parametrize("name", UNRELATED)
def test_what_bears_on_no_nvgemm_run_is_neither_cleared_nor_recorded(name):
    assert variable_rule(name) is None


def test_the_record_names_each_present_one_with_its_value_redacted():
    base = {"PATH": "/bin", "CUTE_DSL_ARCH": "sm_80a", "TVM_FFI_CACHE_DIR": "/scratch/tvm",
            "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "redis://me:hunter2@cache:6379", "TORCHINDUCTOR_CACHE_DIR": "/mine",
            "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "1"}
    env = child_environment(base, Path("/c"), {"TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "1"})
    record = env.record.to_dict()
    assert set(record["cleared"]) == {"CUTE_DSL_ARCH", "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE", "TORCHINDUCTOR_CACHE_DIR"}
    assert record["cleared"]["CUTE_DSL_ARCH"] == "sm_80a" and "hunter2" not in json.dumps(record)
    assert record["kept"] == {"TVM_FFI_CACHE_DIR": "/scratch/tvm"}
    assert record["set"]["TORCHINDUCTOR_CACHE_DIR"] == "/c/inductor"  # envcheck's, in place of the caller's
    assert "PATH" not in json.dumps(record) and env.variables["PATH"] == "/bin"
    assert "CUTE_DSL_ARCH" not in env.variables and env.variables["TVM_FFI_CACHE_DIR"] == "/scratch/tvm"
    # the caller's value equal to envcheck's own is no clearing
    assert "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS" not in record["cleared"]
    # a setting passed on is kept and named
    passed = child_environment({**base, "TORCHINDUCTOR_NVGEMM_SWAP_AB": "1"}, Path("/c"), {})
    assert passed.record.to_dict()["settings"] == {"TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "1",
                                                   "TORCHINDUCTOR_NVGEMM_SWAP_AB": "1"}
    assert passed.variables["TORCHINDUCTOR_NVGEMM_SWAP_AB"] == "1"
    assert set(passed.record.to_dict()["settings"]) <= set(passed.record.to_dict()["kept"])


def test_the_first_row_decides_and_every_row_says_why():
    assert all(rule.why for rule in ENVIRONMENT)
    assert variable_rule("TVM_FFI_CACHE_DIR").clear is False  # before TVM_FFI_*, which clears


# --------------------------------------------------------------------------------------------------------------
# Real children

SEEN = "import json, os, sys\nprint('CHILD-ENV ' + json.dumps(dict(os.environ)))\nprint('CHILD-ARGV ' + json.dumps(sys.argv[1:]))\n"
CALLER = {"CUTE_DSL_ARCH": "sm_100a", "CUTLASS_OPERATORS_USE_TVM_FFI": "1", "TORCHINDUCTOR_NVGEMM_SWAP_AB": "1",
          "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "all",
          "TORCHINDUCTOR_AUTOTUNE_CHOICE_NAME_REGEX": "triton", "DISABLE_ARGUMENT_FILTERING": "1",
          "TVM_FFI_CACHE_DIR": "/scratch/tvm", "CUDA_VISIBLE_DEVICES": "0"}
PASSED = {"TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS": "all", "TORCHINDUCTOR_NVGEMM_SWAP_AB": "1"}


def seen_by(log: str) -> tuple[dict, list]:
    lines = Path(log).read_text(encoding="utf-8").splitlines()
    env = next(json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("CHILD-ENV "))
    argv = next(json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("CHILD-ARGV "))
    return env, argv


def check_record(record: dict, env: dict) -> None:
    assert set(record["cleared"]) >= {"CUTE_DSL_ARCH", "CUTLASS_OPERATORS_USE_TVM_FFI",
                                      "TORCHINDUCTOR_AUTOTUNE_CHOICE_NAME_REGEX", "DISABLE_ARGUMENT_FILTERING"}
    assert record["kept"] == {"TVM_FFI_CACHE_DIR": "/scratch/tvm", "CUDA_VISIBLE_DEVICES": "0", **PASSED}
    assert record["settings"] == PASSED and all(env[name] == value for name, value in PASSED.items())
    assert not set(record["cleared"]) & set(env)  # the child did not see what was cleared
    assert env["TVM_FFI_CACHE_DIR"] == "/scratch/tvm" and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert all(Redactor()(env[name]) == value for name, value in record["set"].items())  # a path under ~ is shown so


def test_the_smoke_child_sees_none_of_what_the_result_says_was_cleared(policy, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(SEEN, encoding="utf-8")
    result = run_smoke(PY, GOOD, policy, timeout=30, cache_dir=tmp_path / "c", child=script, env={**os.environ, **CALLER})
    env, _ = seen_by(result.log)
    record = json.loads(json.dumps(result.to_dict()))["environment"]
    check_record(record, env)
    assert record["set"]["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"] == "NVGEMM"


def test_the_bench_child_sees_none_of_what_the_result_says_was_cleared(policy, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(SEEN, encoding="utf-8")
    options = BenchOptions(shapes=(Shape(256, 256, 256),), budget_s=10)
    result = run_bench(PY, GOOD, policy, options, cache_dir=tmp_path / "c", child=script, env={**os.environ, **CALLER})
    env, _ = seen_by(result.log)
    check_record(json.loads(json.dumps(result.to_dict()))["environment"], env)


def test_the_smokes_text_names_what_it_cleared(policy, tmp_path):
    from envcheck.render.smoke import render_text

    script = tmp_path / "child.py"
    script.write_text(SEEN, encoding="utf-8")
    result = run_smoke(PY, GOOD, policy, timeout=30, cache_dir=tmp_path / "c", child=script, env={**os.environ, **CALLER})
    line = next(line for line in render_text(result).splitlines() if line.strip().startswith("cleared"))
    assert "CUTE_DSL_ARCH" in line and "CUTLASS_OPERATORS_USE_TVM_FFI" in line and "TVM_FFI_CACHE_DIR" not in line
    assert "TORCHINDUCTOR_NVGEMM" not in line
    line = next(line for line in render_text(result).splitlines() if line.strip().startswith("settings"))
    assert line == ("  settings  TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS=all, TORCHINDUCTOR_NVGEMM_SWAP_AB=1, passed "
                    "on from your environment: the run compiled as your process does")
    plain = run_smoke(PY, GOOD, policy, timeout=30, cache_dir=tmp_path / "c", child=script,
                      env={k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_NVGEMM_")})
    assert not any(line.strip().startswith("settings") for line in render_text(plain).splitlines())


def test_the_benchs_text_names_the_settings_it_compiled_with(policy, tmp_path):
    from envcheck.render.bench import render

    script = tmp_path / "child.py"
    script.write_text(SEEN, encoding="utf-8")
    options = BenchOptions(shapes=(Shape(256, 256, 256),), budget_s=10)
    result = run_bench(PY, GOOD, policy, options, cache_dir=tmp_path / "c", child=script, env={**os.environ, **CALLER})
    text = render(result, json.loads(json.dumps(result.to_dict())), "table")
    assert any(line.startswith("  settings  TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS=all, TORCHINDUCTOR_NVGEMM_SWAP_AB=1")
               for line in text.splitlines()), text


# --------------------------------------------------------------------------------------------------------------
# The lookup shortcut: decided by the profile's kernel library, not by which profile it is


@pytest.fixture(scope="module")
def operators():
    return load_builtin("torch-2.14-operators")


def marker_passed(policy, tmp_path, bench=False) -> bool:
    tmp_path.mkdir()
    script = tmp_path / "child.py"
    script.write_text(SEEN, encoding="utf-8")
    if bench:
        result = run_bench(PY, BOTH, policy, BenchOptions(shapes=(Shape(256, 256, 256),), budget_s=10),
                           cache_dir=tmp_path / "c", child=script)
    else:
        result = run_smoke(PY, BOTH, policy, timeout=30, cache_dir=tmp_path / "c", child=script)
    _, argv = seen_by(result.log)
    if "--lookup-marker" not in argv:
        return False
    assert argv[argv.index("--lookup-marker") + 1] == str(tmp_path / "c" / "inductor" / LOOKUP_MARKER)
    return True


@pytest.mark.parametrize("bench", [False, True])
def test_the_lookup_marker_goes_only_to_a_cutlass_api_run(policy, operators, tmp_path, bench):
    assert marker_passed(policy, tmp_path / "recipe", bench) is True
    assert marker_passed(operators, tmp_path / "operators", bench) is False
    # the library decides: the operators profile made to name cutlass_api gets it, the recipe naming another does not
    as_api = replace(operators, smoke=replace(operators.smoke, library="cutlass_api"))
    assert marker_passed(as_api, tmp_path / "as-api", bench) is True
    other = replace(policy, smoke=replace(policy.smoke, library="cutlass.operators"))
    assert marker_passed(other, tmp_path / "other", bench) is False


# --------------------------------------------------------------------------------------------------------------
# The target Inductor asks for, and a GPU below 9.0


@pytest.mark.parametrize("capability, target", [((8, 0), "80a"), ((8, 6), "86a"), ((8, 9), "89a"), ((9, 0), "90a"),
                                                ((10, 0), "100a"), ((10, 3), "103a"), ((12, 0), "120a"), ((12, 1), "121a")])
def test_the_library_smoke_asks_for_the_target_inductor_asks_for(capability, target):
    assert inductor_target_sm(capability) == target


def operators_facts(gpus=(H200,), given=()):
    modules = {"cutlass.operators": f"{fb.SITE}/nvidia_cutlass_dsl/dsl_packages/cutlass/operators/__init__.py",
               "cutlass_api": None}
    dists = {**fb.GOOD_DISTS, "nvidia-cutlass-dsl": "4.8.1"}  # the operators profile's DSL
    return fb.facts(driver=fb.driver(gpus=list(gpus)), interpreter=fb.interpreter(dists=dists, modules=modules),
                    given_gpus=gpus_given(given))


def test_the_library_smoke_on_a_device_reading_8_0_fails_as_inductor_does_and_says_what_doctor_says(operators, tmp_path):
    """The H200 made to read 8.0 (E4), simulated: the fake's TargetSm refuses 80a with the real package's words."""
    env = {**os.environ, "PYTHONPATH": str(FAKE_GPU), "FAKE_CAPABILITY": "8.0"}
    result = run_smoke(PY, operators_facts(), operators, timeout=60, cache_dir=tmp_path / "c", library=True, env=env)
    assert result.status is Status.FAIL and result.cause_id == "target-sm-invalid", result.summary
    assert result.cause.startswith("NVGEMM breaks torch.compile on this GPU with torch >= 2.14 (TargetSm 80a)")
    assert result.remedy.text == operators.gpu_below.remedy
    assert "TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer" in result.evidence
    ok = run_smoke(PY, operators_facts(), operators, timeout=60, cache_dir=tmp_path / "c", library=True,
                   env={**env, "FAKE_CAPABILITY": "9.0"})
    assert ok.status is Status.PASS and ok.library == "cutlass.operators", ok.summary


@pytest.mark.parametrize("library", [False, True])
def test_a_gpu_given_below_9_0_stops_the_smoke_before_a_child_with_doctors_words(operators, tmp_path, library):
    result = run_smoke(PY, operators_facts(given=((8, 6),)), operators, timeout=60, cache_dir=tmp_path / "c",
                       library=library)
    assert result.cause_id == "gpu-unsupported" and result.log is None  # no child was started
    assert "NVGEMM breaks torch.compile on this GPU with torch >= 2.14 (TargetSm 80a)" in result.cause
    assert operators.gpu_below.kernels in result.cause and result.remedy.text == operators.gpu_below.remedy
    assert result.gpu == "a GPU of compute capability 8.6 (8.6)"


def test_the_context_of_smoke_and_explain_sees_the_given_gpu(operators):
    from envcheck.causes import context_from

    assert context_from(operators_facts(given=((8, 0),)), operators, PY).capability == (8, 0)
    assert context_from(operators_facts(), operators, PY).capability == (9, 0)
    assert context_from(operators_facts(gpus=(), given=((10, 0),)), operators, PY).capability == (10, 0)


@pytest.mark.slow
def test_the_real_operators_targetsm_refuses_80a_in_the_fakes_place(operators, tmp_path):
    """The fake's arch.py swapped for the real one of nvidia-cutlass-operators 0.3.0 (pip download): the same run,
    the real package's words, the same cause."""
    import shutil
    import subprocess
    import zipfile

    wheels = tmp_path / "wheels"
    done = subprocess.run([PY, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
                           "nvidia-cutlass-operators==0.3.0"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-500:]
    fake = tmp_path / "fake_gpu"
    shutil.copytree(FAKE_GPU, fake, ignore=shutil.ignore_patterns("__pycache__"))
    with zipfile.ZipFile(next(wheels.glob("nvidia_cutlass_operators-0.3.0-*.whl"))) as wheel:
        (fake / "cutlass" / "operators" / "arch.py").write_bytes(wheel.read("cutlass/operators/arch.py"))
    env = {**os.environ, "PYTHONPATH": str(fake), "FAKE_CAPABILITY": "8.0"}
    result = run_smoke(PY, operators_facts(), operators, timeout=60, cache_dir=tmp_path / "c", library=True, env=env)
    assert result.cause_id == "target-sm-invalid", result.summary
    assert result.evidence.endswith("TargetSm 80a is invalid. ArchConditional targets must be Hopper (sm90) or newer")
    ok = run_smoke(PY, operators_facts(), operators, timeout=60, cache_dir=tmp_path / "c", library=True,
                   env={**env, "FAKE_CAPABILITY": "9.0"})
    assert ok.status is Status.PASS, ok.summary
