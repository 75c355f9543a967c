"""Every verdict of issue 17 as a table over its boundaries: compute capability x torch x profile (the kernel table and
its caveats), the cu12-only DSL, Python per torch, the DSL layouts per version, the tvm-ffi floor, the optional
torch-c-dlpack-ext, a GPU given with --gpu-capability against one seen, and the recorded runs each verdict points to.
Pure: facts built by hand (the GPU given, as gather makes it), the built-in profiles, no I/O."""

from __future__ import annotations

from dataclasses import replace

import pytest
from factsbuilder import SITE, dist, driver, facts, gpu, stack

from envcheck.judge import judge
from envcheck.model import Failure, Status, gpus_given
from envcheck.profile import load_builtin

RECIPE, OPERATORS = "torch-2.11-nvgemm", "torch-2.14-operators"
def given(profile, env, *capabilities, no_gpu=True, strict=False, seen=None, **kw):
    """The findings for GPUs given with --gpu-capability (by default on a builder without a GPU: --no-gpu)."""
    made = facts(interpreter=env, driver=seen or Failure("driver", "NVML library not found"), checkout=None,
                 given_gpus=gpus_given(capabilities), **kw)
    return {f.id: f for f in judge(made, load_builtin(profile), no_gpu=no_gpu, strict=strict)}


# ---------------------------------------------------------------------------------------------------------------
# Compute capability x torch x profile: gpu.compute-capability (the row, and the caveats of that torch)

TORCHES = ("2.11.0", "2.13.0", "2.14.0", "2.14.1", "2.15.0")
GRID = {
    # the recipe: cutlass_api by min_cc, no torch-dependent caveat
    RECIPE: """
        7.5   fail fail fail fail fail
        8.0   warn warn warn warn warn
        8.6   warn warn warn warn warn
        8.9   warn warn warn warn warn
        9.0   warn warn warn warn warn
        10.0  pass pass pass pass pass
        10.3  warn warn warn warn warn
        10.7  fail fail fail fail fail
        11.0  warn warn warn warn warn
        12.0  warn warn warn warn warn
        12.1  warn warn warn warn warn
    """,
    # the operators stack: nothing below 9.0 (TargetSm 80a), the common_efc caveat on 10.x/11.0 with torch 2.14.x
    # beside operators 0.3.0 (a failure: cold addmm compiles reload EFC kernels too)
    OPERATORS: """
        7.5   fail fail fail fail fail
        8.0   fail fail fail fail fail
        8.6   fail fail fail fail fail
        8.9   fail fail fail fail fail
        9.0   pass pass pass pass pass
        10.0  pass pass fail fail pass
        10.3  pass pass fail fail pass
        10.7  warn warn fail fail warn
        11.0  warn warn fail fail warn
        12.0  warn warn warn warn warn
        12.1  warn warn warn warn warn
    """,
}


def _grid():
    for profile, text in GRID.items():
        for line in text.strip().splitlines():
            cc, *statuses = line.split()
            for torch, status in zip(TORCHES, statuses):
                yield profile, tuple(int(p) for p in cc.split(".")), torch, Status(status)


@pytest.mark.parametrize("profile, capability, torch, status", list(_grid()))
def test_the_kernel_table_for_a_given_gpu_by_torch(profile, capability, torch, status):
    library = "operators" if profile == OPERATORS else "recipe"
    finding = given(profile, stack(torch=torch, library=library), capability)["gpu.compute-capability"]
    assert finding.status is status, finding.found
    cc = f"{capability[0]}.{capability[1]}"
    assert f"compute capability {cc} (given with --gpu-capability, not seen here)" in finding.found
    if profile == OPERATORS and capability < (9, 0):
        assert "NVGEMM breaks torch.compile on this GPU with torch >= 2.14 (TargetSm 80a)" in finding.found
        assert "torch-2.11-nvgemm" in finding.remedy.text and "max_autotune_gemm_backends" in finding.remedy.text
    efc = profile == OPERATORS and torch.startswith("2.14") and (10, 0) <= capability <= (11, 0)
    assert ("common_efc" in finding.found) is efc
    if efc:
        assert "torch 2.15" in finding.remedy.text
    if profile == OPERATORS and capability >= (12, 0):
        assert "Sm80TensorOpGemmOperator only" in finding.found
    if profile == OPERATORS and capability == (10, 7):
        assert "Sm107DenseGemmOperator" in finding.found
    # every row names where it comes from
    assert any(d.startswith("source (") for d in finding.details)


def test_without_torch_a_torch_caveat_is_named_not_judged():
    env = replace(stack(), torch=None, distributions=tuple(d for d in stack().distributions if d.name != "torch"))
    finding = given(OPERATORS, env, (10, 0))["gpu.compute-capability"]
    assert finding.status is Status.PASS
    assert any("with torch >=2.14, <2.15" in d and "no torch installed" in d for d in finding.details)


# ---------------------------------------------------------------------------------------------------------------
# The cu12-only DSL beside a CUDA 13 torch: a recipe warning, a failure only on 10.7 (or --strict)


@pytest.mark.parametrize("flavours, capability, strict, status", [
    (("cu12",), (9, 0), False, Status.WARN),
    (("cu12",), (10, 0), False, Status.WARN),
    (("cu12",), (12, 0), False, Status.WARN),
    (("cu12",), (10, 7), False, Status.FAIL),
    (("cu12",), (9, 0), True, Status.FAIL),
    (("cu13",), (10, 7), False, Status.PASS),
    (("cu12", "cu13"), (10, 7), False, Status.PASS),
    (("cu12", "cu13"), (9, 0), True, Status.PASS),
])
def test_the_cu12_only_dsl(flavours, capability, strict, status):
    finding = given(OPERATORS, stack(flavours=flavours), capability, strict=strict)["cutedsl.importable"]
    assert finding.status is status, finding.found
    if status is not Status.PASS:
        assert "[cu13]" in finding.found and "CUDA 13.4" in finding.found
        assert [s.args for s in finding.remedy.steps] == [("nvidia-cutlass-dsl[cu13]>=4.8.0",)]
    if capability == (10, 7) and status is Status.FAIL:
        assert "On compute capability 10.7 it breaks" in finding.found
    elif status is Status.WARN:
        assert "recipe: published, not shown necessary" in finding.found and "==10.7" in finding.found


def test_the_cu12_only_dsl_without_a_gpu_known_warns_and_says_where_it_breaks():
    made = facts(interpreter=stack(flavours=("cu12",)), driver=Failure("driver", "none"), checkout=None)
    finding = {f.id: f for f in judge(made, load_builtin(OPERATORS), no_gpu=True)}["cutedsl.importable"]
    assert finding.status is Status.WARN and "with no GPU known" in finding.found


# ---------------------------------------------------------------------------------------------------------------
# torch-c-dlpack-ext: optional on both stacks


@pytest.mark.parametrize("profile, library, torch", [(RECIPE, "recipe", "2.11.0"), (RECIPE, "recipe", "2.13.0"),
                                                     (OPERATORS, "operators", "2.14.1"), (OPERATORS, "operators", "2.15.0")])
def test_torch_c_dlpack_ext_is_optional(profile, library, torch):
    found = given(profile, stack(torch=torch, library=library, dsl="4.3.5" if library == "recipe" else "4.8.1",
                                 tvm="0.1.7" if library == "recipe" else "0.1.15.post2", drop=("torch-c-dlpack-ext",)), (9, 0))
    finding = found["nvgemm.deps"]
    assert finding.status is Status.PASS, finding.found
    assert "torch-c-dlpack-ext not installed (optional" in finding.found
    assert finding.remedy is None and "(optional)" in finding.wanted


# ---------------------------------------------------------------------------------------------------------------
# Python per torch


@pytest.mark.parametrize("python, torch, status, words", [
    ((3, 10, 14), "2.14.1", Status.PASS, ""),
    ((3, 10, 14), "2.15.0", Status.FAIL, "torch 2.15.0 requires Python >=3.11"),
    ((3, 11, 9), "2.15.0", Status.PASS, ""),
    ((3, 12, 3), "2.15.0", Status.PASS, ""),
    ((3, 9, 18), "2.14.1", Status.FAIL, ""),
    ((3, 10, 14), None, Status.PASS, "torch >=2.15 needs Python >=3.11"),
    ((3, 11, 9), None, Status.PASS, ""),
])
def test_python_is_judged_by_the_range_of_the_installed_torch(python, torch, status, words):
    env = stack(torch=torch or "2.14.1", python=python)
    if torch is None:
        env = replace(env, torch=None, distributions=tuple(d for d in env.distributions if d.name != "torch"))
    finding = given(OPERATORS, env, (9, 0))["python.version"]
    assert finding.status is status, finding.found
    assert words in finding.found
    if torch == "2.15.0" and status is Status.FAIL:
        assert finding.wanted == "Python >=3.11 (beside torch 2.15.0)"
        assert "Or keep Python 3.10.14 with a torch of the profile's range" in finding.remedy.text
        assert any("torch-2.15.0" in d for d in finding.details)
    if torch is None and python < (3, 11):
        assert "installs an older torch" in finding.found


@pytest.mark.parametrize("python, status", [((3, 10, 14), Status.FAIL), ((3, 11, 9), Status.FAIL), ((3, 12, 0), Status.PASS)])
def test_the_recipe_needs_python_3_12_whatever_the_torch(python, status):
    finding = given(RECIPE, stack(torch="2.13.0", dsl="4.3.5", library="recipe", tvm="0.1.7", python=python), (9, 0))
    assert finding["python.version"].status is status


# ---------------------------------------------------------------------------------------------------------------
# The DSL layouts per version: where `cutlass` must load from, its split packages, hosting cutlass.operators


@pytest.mark.parametrize("dsl, layout, status", [
    ("4.3.5", "python_packages", Status.PASS), ("4.3.5", "dsl_packages", Status.FAIL),
    ("4.4.0", "python_packages", Status.PASS), ("4.4.0", "dsl_packages", Status.FAIL),
    ("4.5.3", "python_packages", Status.PASS), ("4.5.3", "dsl_packages", Status.FAIL),
    ("4.6.0", "dsl_packages", Status.PASS), ("4.6.0", "python_packages", Status.FAIL),
    ("4.8.1", "dsl_packages", Status.PASS), ("4.8.1", "python_packages", Status.FAIL),
])
def test_where_cutlass_loads_from_is_judged_by_the_dsl_version(dsl, layout, status):
    env = stack(torch="2.13.0", dsl=dsl, library="recipe", tvm="0.1.7" if dsl < "4.6" else "0.1.15.post2",
                flavours=("cu13",), cutlass_dir=f"{SITE}/nvidia_cutlass_dsl/{layout}/cutlass/__init__.py")
    finding = given(RECIPE, env, (9, 0))["cutedsl.importable"]
    assert finding.status is status, finding.found
    if status is Status.FAIL:
        assert f"nvidia_cutlass_dsl/{'python' if layout == 'dsl_packages' else 'dsl'}_packages" in finding.found


@pytest.mark.parametrize("dsl, flavours, mixed", [
    ("4.8.1", ("cu12", "cu13"), False),  # 4.6 and later: flavours side by side, one loaded
    ("4.6.0", ("cu12", "cu13"), False),
    ("4.5.3", ("cu13",), False),  # -libs-cu13 over -libs-base: one CUDA 13 build, beside a CUDA 13 torch
    ("4.4.0", ("cu13",), False),
])
def test_the_dsl_flavours_are_one_cuda_major_per_version(dsl, flavours, mixed):
    for profile, library in ((RECIPE, "recipe"), (OPERATORS, "operators")):
        env = stack(torch="2.13.0" if profile == RECIPE else "2.14.1", dsl=dsl, flavours=flavours, library=library)
        finding = given(profile, env, (9, 0))["packages.consistency"]
        assert ("CUDA majors" in finding.found) is mixed, (profile, finding.found)


def test_a_cuda_12_library_of_a_dsl_is_still_counted_where_no_exemption_covers_its_version():
    env = stack(torch="2.14.1", dsl="4.8.1", flavours=("cu12", "cu13"))
    odd = replace(env, distributions=env.distributions + (dist("nvidia-cutlass-dsl-libs-cu12", "4.5.0", location="/elsewhere"),))
    finding = given(OPERATORS, odd, (9, 0))["packages.consistency"]
    assert "installed 2 times" in finding.found


@pytest.mark.parametrize("dsl, status", [("4.3.5", Status.FAIL), ("4.4.0", Status.FAIL), ("4.5.3", Status.FAIL),
                                         ("4.8.1", Status.PASS)])
def test_a_dsl_older_than_4_6_cannot_host_cutlass_operators(dsl, status):
    found = given(OPERATORS, stack(dsl=dsl, flavours=("cu13",)), (9, 0))
    assert found["cutedsl.importable"].status is status, found["cutedsl.importable"].found
    if status is Status.FAIL:
        assert "No module named 'cutlass.operators'" in found["cutedsl.importable"].found
        steps = found["cutedsl.importable"].remedy.steps
        assert steps[0].kind == "pip-uninstall" and steps[-1].args == ("nvidia-cutlass-dsl[cu13]>=4.8.0",)
        assert found["cutedsl.version"].status is Status.FAIL


# ---------------------------------------------------------------------------------------------------------------
# The tvm-ffi floor: 0.1.11 beside a DSL >= 4.6


@pytest.mark.parametrize("profile, dsl, tvm, status, words", [
    (RECIPE, "4.3.5", "0.1.7", Status.PASS, ""),
    (RECIPE, "4.5.3", "0.1.7", Status.PASS, ""),  # DSL < 4.6 never passes map_dataclass_to_tuple
    (RECIPE, "4.6.0", "0.1.7", Status.FAIL, "needs >=0.1.11"),
    (RECIPE, "4.8.1", "0.1.7", Status.FAIL, "needs >=0.1.11"),
    (RECIPE, "4.8.1", "0.1.10", Status.FAIL, "needs >=0.1.11"),
    (RECIPE, "4.8.1", "0.1.11", Status.WARN, "recipe"),  # works; the published pin is another
    (RECIPE, "4.8.1", "0.1.15.post2", Status.WARN, "recipe"),
    (RECIPE, "4.3.5", "0.1.15.post2", Status.WARN, "recipe"),
    (OPERATORS, "4.8.1", "0.1.10", Status.FAIL, "runtime"),
    (OPERATORS, "4.8.1", "0.1.11", Status.PASS, ""),
    (OPERATORS, "4.8.1", "0.1.15.post2", Status.PASS, ""),
])
def test_the_tvm_ffi_floor(profile, dsl, tvm, status, words):
    library = "recipe" if profile == RECIPE else "operators"
    env = stack(torch="2.13.0" if profile == RECIPE else "2.14.1", dsl=dsl, tvm=tvm, library=library, flavours=("cu13",))
    finding = given(profile, env, (9, 0))["nvgemm.deps"]
    assert finding.status is status, finding.found
    assert words in finding.found
    if status is Status.FAIL and profile == RECIPE:
        assert f"beside nvidia-cutlass-dsl {dsl}" in finding.found


# ---------------------------------------------------------------------------------------------------------------
# A GPU given with --gpu-capability, one seen, and neither


def test_a_given_gpu_wins_over_the_one_seen_and_the_report_says_both():
    seen = driver("580.159.04", "13.0", [gpu((8, 6), "NVIDIA A10")])
    found = given(OPERATORS, stack(), (9, 0), no_gpu=False, seen=seen)
    finding = found["gpu.compute-capability"]
    assert finding.status is Status.PASS and "compute capability 9.0 (given" in finding.found
    assert any("not the one seen here" in d and "NVIDIA A10, compute capability 8.6" in d for d in finding.details)
    assert found["cuda.driver"].status is Status.PASS  # this machine's driver is still this machine's


def test_the_seen_gpu_is_judged_when_none_is_given():
    seen = driver("580.159.04", "13.0", [gpu((8, 6), "NVIDIA A10")])
    made = facts(interpreter=stack(), driver=seen, checkout=None)
    finding = {f.id: f for f in judge(made, load_builtin(OPERATORS))}["gpu.compute-capability"]
    assert finding.status is Status.FAIL and finding.found.startswith("GPU 0: NVIDIA A10, compute capability 8.6")


def test_no_gpu_without_a_given_one_skips_and_names_the_flag():
    finding = given(OPERATORS, stack())["gpu.compute-capability"]
    assert finding.status is Status.SKIP and "--gpu-capability" in finding.found


def test_a_given_gpu_without_no_gpu_on_a_machine_without_a_driver_is_judged_and_the_driver_still_fails():
    found = given(OPERATORS, stack(), (10, 0), no_gpu=False)
    assert found["gpu.compute-capability"].status is Status.FAIL  # 10.0 with torch 2.14.1, operators 0.3.0: common_efc
    assert found["cuda.driver"].status is Status.FAIL


def test_given_gpus_of_two_capabilities_are_each_judged_and_the_capability_basis_uses_both():
    found = given(RECIPE, stack(torch="2.13.0", dsl="4.8.1", library="recipe", flavours=("cu13",)), (9, 0), (10, 0))
    assert "compute capability 9.0" in found["gpu.compute-capability"].found
    assert "compute capability 10.0" in found["gpu.compute-capability"].found
    assert found["cutedsl.version"].status is Status.FAIL  # the DSL cap is runtime on 10.0, one of the GPUs


@pytest.mark.parametrize("capability, status", [((9, 0), Status.WARN), ((10, 0), Status.FAIL), ((10, 3), Status.FAIL),
                                                ((10, 7), Status.FAIL), ((11, 0), Status.FAIL), ((12, 0), Status.WARN)])
def test_the_recipes_dsl_cap_uses_the_given_capability(capability, status):
    env = stack(torch="2.13.0", dsl="4.8.1", library="recipe", flavours=("cu13",))
    assert given(RECIPE, env, capability)["cutedsl.version"].status is status


# ---------------------------------------------------------------------------------------------------------------
# The recorded runs a verdict points to: this exact combination, or none


def _evidence(finding):
    return [run.source for run in finding.evidence.runs]


def test_the_h200s_operators_runs_support_the_hopper_row():
    finding = given(OPERATORS, stack(), (9, 0))["gpu.compute-capability"]
    sources = _evidence(finding)
    assert "tests/data/h200-2026-12-01/smoke-cold.json" in sources and "tests/data/bench/h200-4/bench-llm-warm.json" in sources
    said = finding.details[-1]
    assert "smoke ran on an NVIDIA H200, driver 580, 2026-12-01" in said
    assert dict(finding.evidence.combination) == {"compute capability": "9.0", "torch": "2.14",
                                                  "nvidia-cutlass-dsl": "4.8.1", "nvidia-cutlass-operators": "0.3.0"}


def test_the_h200s_torch_2_15_runs_support_the_hopper_row_for_that_torch():
    """The runs of 2026-12-03 and 2026-12-04 (torch 2.15.0) are that torch's evidence, and 2.14's are not."""
    finding = given(OPERATORS, stack(torch="2.15.0"), (9, 0))["gpu.compute-capability"]
    sources = _evidence(finding)
    assert "tests/data/h200-s5/a4-smoke-unset.json" in sources and "tests/data/bench/h200-s5/bench-llm-cold.json" in sources
    assert "tests/data/bench/h200-s6/bench-llm-cold.json" in sources
    assert all("/h200-s5/" in s or "/h200-s6/" in s for s in sources)
    assert dict(finding.evidence.combination)["torch"] == "2.15"


@pytest.mark.parametrize("change", [
    {"capability": (10, 0)},  # no B200 here
    {"torch": "2.16.0"},  # another torch minor
    {"dsl": "4.8.0"},  # another DSL
])
def test_another_combination_has_no_recorded_run(change):
    capability = change.pop("capability", (9, 0))
    finding = given(OPERATORS, stack(**change), capability)["gpu.compute-capability"]
    assert finding.evidence.runs == ()
    assert finding.details[-1].startswith("no recorded run of this combination")


def test_the_simulated_ampere_run_is_the_evidence_of_the_8_0_failure():
    finding = given(OPERATORS, stack(), (8, 0))["gpu.compute-capability"]
    assert [r.outcome for r in finding.evidence.runs] == [Status.FAIL]
    assert "its capability made to read 8.0" in finding.details[-1] and "TargetSm 80a is invalid" in finding.details[-1]


def test_the_cu12_only_verdict_points_to_the_cu12_run_and_the_cu13_one_to_the_others():
    cu12 = given(OPERATORS, stack(flavours=("cu12",)), (9, 0))["cutedsl.importable"]
    assert [r.dsl_flavour for r in cu12.evidence.runs] == ["cu12"] and "e.log (E2" in cu12.evidence.runs[0].source
    assert ("DSL build", "cu12") in cu12.evidence.combination
    both = given(OPERATORS, stack(), (9, 0))["cutedsl.importable"]
    assert both.evidence.runs and {r.dsl_flavour for r in both.evidence.runs} == {"cu13"}


def test_the_dsl_build_follows_the_driver():
    seen = driver("575.57.08", "12.9", [gpu((9, 0), "NVIDIA H200")])
    made = facts(interpreter=stack(), driver=seen, checkout=None)
    finding = {f.id: f for f in judge(made, load_builtin(OPERATORS))}["cutedsl.importable"]
    assert ("DSL build", "cu12") in finding.evidence.combination  # a CUDA 12 driver loads the cu12 build


@pytest.mark.parametrize("tvm, runs", [("0.1.15.post2", True), ("0.1.11", False)])
def test_the_tvm_ffi_verdict_counts_tvm_ffis_version(tvm, runs):
    finding = given(OPERATORS, stack(tvm=tvm), (9, 0))["nvgemm.deps"]
    assert ("apache-tvm-ffi", tvm) in finding.evidence.combination
    assert bool(finding.evidence.runs) is runs


def test_the_recipe_with_a_new_dsl_points_to_both_h200_runs_of_it():
    ok = given(RECIPE, stack(torch="2.11.0", dsl="4.8.1", library="recipe", tvm="0.1.15.post2", flavours=("cu13",)), (9, 0))
    assert [r.outcome for r in ok["nvgemm.deps"].evidence.runs] == [Status.PASS]
    broken = given(RECIPE, stack(torch="2.11.0", dsl="4.8.1", library="recipe", tvm="0.1.7", flavours=("cu13",)), (9, 0))
    assert [r.note for r in broken["nvgemm.deps"].evidence.runs] == [
        "TypeError: make_kwargs_wrapper() got an unexpected keyword argument 'map_dataclass_to_tuple'"]


def test_without_a_gpu_known_no_run_matches():
    found = given(OPERATORS, stack())
    assert found["cutedsl.version"].evidence.runs == ()
    assert ("compute capability", "unknown (no GPU seen; --gpu-capability names one)") in found["cutedsl.version"].evidence.combination


# ---------------------------------------------------------------------------------------------------------------
# The verdicts the wheels contradicted (issue 25 item 2)


@pytest.mark.parametrize("torch, operators, status, words", [
    # torch 2.15.0 imports evt.efc (operators 0.2.0 and later) on every dense GEMM: 0.1.x fails beside it
    ("2.15.0", "0.1.0", Status.FAIL, "beside torch 2.15.0+cu132 (>=2.15) it needs >=0.2.0"),
    ("2.15.0", "0.1.1", Status.FAIL, "beside torch 2.15.0+cu132 (>=2.15) it needs >=0.2.0"),
    ("2.15.0", "0.2.0", Status.WARN, "outside the recipe's >=0.3.0"),
    ("2.15.0", "0.3.0", Status.PASS, "nvidia-cutlass-operators 0.3.0"),
    ("2.14.1", "0.1.1", Status.WARN, "outside the recipe's >=0.3.0"),  # 2.14.x imports only the old evt.common_efc
    ("2.14.1", "0.3.0", Status.PASS, "nvidia-cutlass-operators 0.3.0"),
])
def test_the_operators_release_beside_each_torch(torch, operators, status, words):
    finding = given(OPERATORS, stack(torch=torch, operators=operators), (9, 0))["nvgemm.deps"]
    assert finding.status is status and words in finding.found, finding.found
    if status is Status.FAIL:
        assert finding.remedy.steps[0].args == ("nvidia-cutlass-operators>=0.3.0",)
        assert finding.basis == "runtime"


@pytest.mark.parametrize("torch, operators, capability, efc", [
    ("2.14.1", "0.3.0", (10, 0), Status.FAIL),
    ("2.14.0", "0.2.0", (11, 0), Status.FAIL),
    ("2.14.1", "0.1.1", (10, 0), None),  # 0.1.x still has evt.common_efc: the caveat does not apply
    ("2.15.0", "0.3.0", (10, 0), None),  # 2.15 tries both names
    ("2.14.1", "0.3.0", (9, 0), None),  # no SM100 EFC kernel on Hopper
])
def test_the_common_efc_caveat_needs_operators_0_2_0_and_says_cold_compiles_break(torch, operators, capability, efc):
    finding = given(OPERATORS, stack(torch=torch, operators=operators), capability)["gpu.compute-capability"]
    assert ("common_efc" in finding.found) is (efc is not None)
    if efc is not None:
        assert finding.status is efc and "on a cold compile every NVGEMM choice of an addmm" in finding.found
        assert "nvidia-cutlass-operators 0.1.x" in finding.remedy.text


@pytest.mark.parametrize("profile, dsl, flavours, capability, status", [
    (OPERATORS, "4.8.1", (), (9, 0), Status.FAIL),  # only -libs-base and -libs-core: No CTK flavor installed
    (OPERATORS, "4.8.1", (), (12, 0), Status.FAIL),
    (OPERATORS, "4.8.1", ("cu13",), (9, 0), Status.PASS),
    (OPERATORS, "4.8.1", ("cu12",), (9, 0), Status.WARN),  # the cu12-only DSL, as before
    (RECIPE, "4.6.0", (), (9, 0), Status.FAIL),  # the recipe judges a DSL >= 4.6 the same way
    (RECIPE, "4.5.0", (), (9, 0), Status.PASS),  # 4.4/4.5: -libs-base carries its own build
])
def test_a_dsl_without_any_cuda_flavour_fails_cutedsl_importable(profile, dsl, flavours, capability, status):
    library = "operators" if profile == OPERATORS else "recipe"
    torch = "2.14.1" if profile == OPERATORS else "2.13.0"
    finding = given(profile, stack(torch=torch, dsl=dsl, flavours=flavours, library=library), capability)[
        "cutedsl.importable"]
    assert finding.status is status, finding.found
    if status is Status.FAIL:
        assert "No CTK flavor installed" in finding.found and "without a CUDA flavour" in finding.found
        extra = "cu13"  # the profile's extra, or the one of torch's CUDA 13 build
        assert finding.remedy.steps[0].args == (f"nvidia-cutlass-dsl[{extra}]=={dsl}",)


@pytest.mark.parametrize("name, version, check, status", [
    ("nvidia-cutlass-dsl", "4.8.2", "cutedsl.version", Status.WARN),  # newer than any recorded run
    ("nvidia-cutlass-dsl", "4.8.1", "cutedsl.version", Status.PASS),
    ("nvidia-cutlass-operators", "0.3.1", "nvgemm.deps", Status.WARN),
    ("apache-tvm-ffi", "0.1.16", "nvgemm.deps", Status.WARN),
    ("apache-tvm-ffi", "0.1.15.post2", "nvgemm.deps", Status.PASS),
    ("nvidia-matmul-heuristics", "0.1.0.28", "nvgemm.deps", Status.WARN),
    ("torch-c-dlpack-ext", "0.1.6", "nvgemm.deps", Status.PASS),  # optional: nothing on the stack needs it
])
def test_a_package_newer_than_any_recorded_run_is_unverified(name, version, check, status):
    flavours = ("cu13",)  # no cu12-only warning in the way
    env = stack(versions={name: version}, flavours=flavours) if name != "nvidia-cutlass-dsl" else stack(
        dsl=version, flavours=flavours)
    finding = given(OPERATORS, env, (9, 0))[check]
    assert finding.status is status, finding.found
    assert ("unverified" in finding.found) is (status is Status.WARN)


@pytest.mark.parametrize("profile", [RECIPE, OPERATORS])
def test_each_package_s_verified_range_is_its_newest_recorded_run(profile):
    """The `verified` of the DSL and of every package is the evidence's: its bound is the newest version a recorded
    run had (torch-c-dlpack-ext, which no run records, names its source)."""
    from packaging.version import Version

    policy = load_builtin(profile)
    recorded: dict[str, list[Version]] = {}
    for run in policy.runs:
        for name, version in run.versions:
            recorded.setdefault(name, []).append(Version(version))
    for rule in (policy.cutedsl, *policy.packages):
        assert rule.verified and rule.verified_source, rule.name
        (bound,) = list(rule.verified)
        assert bound.operator == "<="
        if rule.name in recorded:
            assert Version(bound.version) == max(recorded[rule.name]), rule.name
