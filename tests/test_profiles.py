"""Profiles that follow upstream: which profile judges which torch, the operators profile's verdicts, the basis of
each requirement (runtime or recipe, by compute capability), and `extends` merging by name. Pure: facts by hand."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from factsbuilder import SITE, dist, driver, facts, gpu, interpreter

from envcheck.errors import UsageError
from envcheck.judge import judge
from envcheck.judge.gpu import hidden_by_visible_devices
from envcheck.model import Status, TorchBuild
from envcheck.profile import DEFAULT_PROFILE, builtin_profiles, candidates, load, load_builtin, named_profile, select

RECIPE, OPERATORS = DEFAULT_PROFILE, "torch-2.14-operators"


@pytest.fixture(scope="module")
def operators():
    return load_builtin(OPERATORS)


@pytest.fixture(scope="module")
def builtins():
    return tuple(load_builtin(name) for name in builtin_profiles())


# ---------------------------------------------------------------------------------------------------------------
# Which profile judges which torch


@pytest.mark.parametrize("torch, chosen, verified, words", [
    (None, OPERATORS, True, "no torch is installed: `pip install torch` gives torch 2.15.0"),
    ("not-a-version", RECIPE, True, "not a version"),
    ("2.10.9+cu130", RECIPE, True, "older than every profile"),
    ("2.11.0", RECIPE, True, "in its range"),
    ("2.11.0rc1", RECIPE, True, "in its range"),
    ("2.13.0+cpu", RECIPE, True, "in its range"),
    ("2.13.99", RECIPE, True, "in its range"),
    ("2.14.0.dev20260701+cu130", OPERATORS, True, "in its range"),
    ("2.14.0", OPERATORS, True, "in its range"),
    ("2.14.1+cu130", OPERATORS, True, "in its range"),
    ("2.15.0+cu132", OPERATORS, True, "in its range"),
    ("2.16.0", OPERATORS, False, "unverified"),
    ("3.0.0", OPERATORS, False, "unverified"),
])
def test_the_profile_that_covers_the_installed_torch_is_chosen_and_says_why(builtins, torch, chosen, verified, words):
    policy, choice = select(builtins, torch)
    assert policy.id == choice.id == chosen and choice.verified is verified
    assert words in choice.reason and choice.source == f"built-in profile {chosen}"


def test_the_built_in_ranges_do_not_overlap(builtins):
    for version in ("2.11.0", "2.13.5", "2.14.0", "2.15.1", "2.99.0"):
        assert sum(p.torch.contains(version) for p in builtins) <= 1, version


def test_a_named_profile_wins_and_says_so(tmp_path):
    named = candidates(OPERATORS)
    policy, choice = named.select("2.11.0")
    assert policy.id == OPERATORS and "--profile" in choice.reason
    with pytest.raises(UsageError, match="--profile 'torch-9'"):
        candidates("torch-9")
    with pytest.raises(UsageError, match="--profile and --policy"):
        named_profile(str(tmp_path / "p.toml"), OPERATORS)
    # [tool.envcheck] names its policy file in the reason
    (tmp_path / "pyproject.toml").write_text(f'[tool.envcheck]\nextends = "{OPERATORS}"\n')
    policy, choice = candidates(cwd=tmp_path).select(None)
    assert policy.id == OPERATORS and str(tmp_path / "pyproject.toml") in choice.reason


def test_the_probe_looks_for_every_candidate_profiles_modules(builtins):
    modules = candidates(cwd=Path("/")).probe_modules
    assert {"torch", "cutlass", "cutlass_api", "cutlass.operators", "nvMatmulHeuristics"} <= set(modules)


@pytest.mark.parametrize("profile, torch, status, words", [
    (RECIPE, "2.10.1", Status.FAIL, "predates"),
    (RECIPE, "2.13.0", Status.PASS, ""),
    (RECIPE, "2.14.1+cu130", Status.FAIL, "outside this profile's range"),
    (OPERATORS, "2.13.0", Status.FAIL, "predates"),
    (OPERATORS, "2.14.1+cu130", Status.PASS, ""),
    (OPERATORS, "2.15.0+cu132", Status.PASS, ""),
    (OPERATORS, "2.16.0", Status.WARN, "unverified"),
])
def test_torch_version_against_each_profiles_range(profile, torch, status, words):
    policy = load_builtin(profile)
    finding = _verdicts(policy, _operators_interpreter(torch=torch))["torch.version"]
    assert finding.status == status and words in finding.found
    if status == Status.FAIL:
        assert finding.remedy.steps[0].args == (str(policy.torch_requirement),)


# ---------------------------------------------------------------------------------------------------------------
# The operators profile


def _operators_interpreter(torch="2.14.1+cu130", cuda="13.0", dsl="4.8.1", flavours=("cu12", "cu13"), drop=(), extra=()):
    dists = {
        "torch": torch, "nvidia-cutlass-dsl": dsl, "nvidia-cutlass-dsl-libs-base": dsl, "nvidia-cutlass-dsl-libs-core": dsl,
        **{f"nvidia-cutlass-dsl-libs-{f}": dsl for f in flavours},
        "nvidia-cutlass-operators": "0.3.0", "apache-tvm-ffi": "0.1.15.post2", "torch-c-dlpack-ext": "0.1.5",
        "nvidia-matmul-heuristics": "0.1.0.27", "cuda-bindings": "13.3.1", "nvidia-cuda-runtime": "13.0.96",
    }
    dists = {k: v for k, v in dists.items() if k not in drop}
    modules = {
        "cutlass": f"{SITE}/nvidia_cutlass_dsl/{'dsl' if dsl >= '4.4' else 'python'}_packages/cutlass/__init__.py",
        "cutlass.operators": f"{SITE}/cutlass/operators/__init__.py" if "nvidia-cutlass-operators" in dists else None,
    }
    made = interpreter(dists=dists, extra=extra, modules=modules, torch=TorchBuild(torch, cuda, "abc", f"{SITE}/torch/version.py"))
    # nvidia-cutlass-dsl 4.8.1's own METADATA: a meta package of its -libs-* packages
    meta = (f"nvidia-cutlass-dsl-libs-base=={dsl}", f"nvidia-cutlass-dsl-libs-cu12=={dsl}",
            f'nvidia-cutlass-dsl-libs-cu13=={dsl}; extra == "cu13"') if dsl >= "4.4" else ()
    return replace(made, distributions=tuple(
        replace(d, requires=meta) if d.name == "nvidia-cutlass-dsl" and meta else d for d in made.distributions))


def _verdicts(policy, interp, capability=(9, 0), strict=False, **kw):
    made = facts(interpreter=interp, driver=driver("580.159.04", "13.0", [gpu(capability, "NVIDIA H200")]), checkout=None, **kw)
    return {f.id: f for f in judge(made, policy, strict=strict)}


def test_the_operators_stack_on_an_h200_passes(operators):
    found = _verdicts(operators, _operators_interpreter(), environment=(("CUTE_DSL_ARCH", "sm_90a"),))
    bad = {i: (f.status, f.found) for i, f in found.items() if f.status not in (Status.PASS, Status.SKIP)}
    # the only deviation: no system nvcc of 13.x here, which this stack does not need (recipe, recommended)
    assert set(bad) <= {"cuda.toolkit"}, bad
    # without the compile workers' target in the environment, the one other: cutedsl.arch (tests/test_target.py)
    unset = _verdicts(operators, _operators_interpreter())
    assert {i for i, f in unset.items() if f.status not in (Status.PASS, Status.SKIP)} - {"cuda.toolkit"} == {"cutedsl.arch"}
    assert found["gpu.compute-capability"].status == Status.PASS and "Sm90StaticPersistentGemmOperator" in found["gpu.compute-capability"].found
    for check in ("cutlass.checkout", "cutlass-api.install"):
        assert found[check].status == Status.SKIP and "not needed by this profile" in found[check].found
    assert found["cutedsl.version"].wanted == "nvidia-cutlass-dsl[cu13] >=4.8.0"


@pytest.mark.parametrize("flavours, torch_cuda, status", [
    (("cu12",), "13.0", Status.WARN),  # plain `pip install nvidia-cutlass-dsl` beside a CUDA 13 torch: it ran (H200)
    (("cu12", "cu13"), "13.0", Status.PASS),  # nvidia-cutlass-dsl[cu13]: both, the DSL picks cu13
    (("cu13",), "13.0", Status.PASS),
    (("cu12",), "12.8", Status.PASS),  # a CUDA 12 torch: the CUDA 12 libraries are the right ones
])
def test_cuda12_dsl_libraries_on_a_cuda13_torch_are_fixed_with_the_cu13_extra(operators, flavours, torch_cuda, status):
    found = _verdicts(operators, _operators_interpreter(cuda=torch_cuda, flavours=flavours))
    finding = found["cutedsl.importable"]
    assert finding.status == status, finding
    if status != Status.PASS:
        assert "nvidia-cutlass-dsl-libs-cu12" in finding.found and "[cu13]" in finding.found
        steps = finding.remedy.steps
        # the cu12 libraries stay (the DSL requires them); the [cu13] extra adds what is missing
        assert [(s.kind, s.args) for s in steps] == [("pip-install", ("nvidia-cutlass-dsl[cu13]>=4.8.0",))]
    # libs-cu12 beside libs-cu13 is not a mixed-CUDA environment: the DSL carries both and picks one
    assert found["packages.consistency"].status == Status.PASS or "CUDA majors" not in found["packages.consistency"].found


def test_a_stale_recipe_dsl_is_removed_before_the_new_one_goes_in(operators):
    stale = _operators_interpreter(dsl="4.3.5", flavours=(), drop=("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core"))
    found = _verdicts(operators, stale)
    assert found["cutedsl.version"].status == Status.FAIL and "4.3.5" in found["cutedsl.version"].found
    finding = found["cutedsl.importable"]
    assert finding.status == Status.FAIL and "https://github.com/sgl-project/sglang/issues/21182" in finding.found
    assert [(s.kind, s.args) for s in finding.remedy.steps] == [
        ("pip-uninstall", ("nvidia-cutlass-dsl",)), ("pip-install", ("nvidia-cutlass-dsl[cu13]>=4.8.0",))]


def test_cutlass_api_left_from_the_recipe_is_a_warning_removed_only_with_consent(operators):
    leftover = _operators_interpreter(extra=(dist("cutlass-api", "0.1.0a1"),))
    finding = _verdicts(operators, leftover)["cutedsl.importable"]
    assert finding.status == Status.WARN and "never imports it" in finding.found
    assert [c for c in operators.conflicts if c.match == "cutlass-api"][0].consent
    assert finding.remedy.steps[0].kind == "pip-uninstall" and finding.remedy.steps[0].args == ("cutlass-api",)


def test_operators_missing_is_a_failure_with_its_wheel(operators):
    finding = _verdicts(operators, _operators_interpreter(drop=("nvidia-cutlass-operators",)))["nvgemm.deps"]
    assert finding.status == Status.FAIL and "nvidia-cutlass-operators>=0.3.0" in finding.remedy.steps[0].args


@pytest.mark.parametrize("capability, status, words", [
    ((7, 5), Status.FAIL, "TargetSm 80a"), ((8, 0), Status.FAIL, "breaks torch.compile"),
    # torch 2.14.1 beside operators 0.3.0 on the SM100 family: the common_efc caveat fails (cold addmm compiles too)
    ((8, 9), Status.FAIL, "TargetSm 80a"), ((9, 0), Status.PASS, "Hopper"), ((10, 0), Status.FAIL, "common_efc"),
    ((10, 3), Status.FAIL, "103a"), ((10, 7), Status.FAIL, "Sm107DenseGemmOperator"), ((11, 0), Status.FAIL, "110f"),
    ((12, 0), Status.WARN, "not to 12.x"), ((12, 1), Status.WARN, "121a"),
])
def test_the_operators_kernel_table_by_compute_capability(operators, capability, status, words):
    finding = _verdicts(operators, _operators_interpreter(), capability=capability)["gpu.compute-capability"]
    assert finding.status == status and words in finding.found


# ---------------------------------------------------------------------------------------------------------------
# Runtime or recipe: the DSL cap of the published recipe bites on compute capability 10.x only


@pytest.mark.parametrize("dsl, capability, strict, status, words", [
    ("4.3.5", (9, 0), False, Status.PASS, ""),
    ("4.3.5", (10, 0), True, Status.PASS, ""),
    ("4.3.0", (10, 0), False, Status.PASS, ""),
    ("4.4.0", (9, 0), False, Status.WARN, "recipe"),
    ("4.8.1", (9, 0), False, Status.WARN, "apache-tvm-ffi 0.1.15"),
    ("4.8.1", (8, 0), False, Status.WARN, "on compute capability 8.0 it is recipe"),
    ("4.8.1", (12, 0), False, Status.WARN, "recipe"),
    ("4.8.1", (9, 0), True, Status.FAIL, "--strict"),
    # DSL 4.4.x and 4.5.x still export cute.arch.ProxyKind: on 10.x/11.0 a recipe deviation; 4.6.0 removed it
    ("4.4.0", (10, 0), False, Status.WARN, "on compute capability >=10.0, <11.1 it needs <4.6 (runtime)"),
    ("4.5.2", (10, 0), False, Status.WARN, "recipe"),
    ("4.5.2", (11, 0), False, Status.WARN, "recipe"),
    ("4.4.0", (10, 0), True, Status.FAIL, "--strict"),
    ("4.6.0", (10, 0), False, Status.FAIL, "outside <4.6, and on compute capability 10.0"),
    ("4.6.0", (9, 0), False, Status.WARN, "recipe"),
    ("4.8.1", (10, 3), False, Status.FAIL, "runtime requirement"),
    ("4.8.1", (11, 0), False, Status.FAIL, "runtime requirement"),  # the SM100 kernels are offered on 11.0 too
    ("4.2.1", (9, 0), False, Status.FAIL, "needed everywhere"),
    ("4.2.1", (8, 6), False, Status.FAIL, "needed everywhere"),
])
def test_the_dsl_cap_is_runtime_on_blackwell_and_recipe_below(policy, dsl, capability, strict, status, words):
    made = facts(interpreter=interpreter(dists={**_good(), "nvidia-cutlass-dsl": dsl}),
                 driver=driver(gpus=[gpu(capability, "some GPU")]))
    finding = {f.id: f for f in judge(made, policy, strict=strict)}["cutedsl.version"]
    assert finding.status == status, finding
    assert words in finding.found
    if status != Status.PASS:
        assert finding.remedy.steps[0].args == (policy.cutedsl.requirement,)
        # the remedy says the case: a choice where the cap is the recipe's, with what works instead
        recipe_case = "recipe" in finding.found and "needed everywhere" not in finding.found
        assert finding.remedy.text.startswith("To match the published recipe") is recipe_case
        assert ("apache-tvm-ffi 0.1.15" in finding.remedy.text) is recipe_case


def test_without_a_gpu_the_cap_is_judged_as_recipe_and_says_so(policy):
    made = facts(interpreter=interpreter(dists={**_good(), "nvidia-cutlass-dsl": "4.8.1"}))
    finding = {f.id: f for f in judge(made, policy, no_gpu=True)}["cutedsl.version"]
    assert finding.status == Status.WARN and "with no GPU seen here" in finding.found and ">=10.0" in finding.found


def _good():
    from factsbuilder import GOOD_DISTS
    return dict(GOOD_DISTS)


@pytest.mark.parametrize("basis, specifier, installed, strict, status", [
    ("runtime", "==0.1.7", "0.1.15", False, Status.FAIL),
    ("recipe", "==0.1.7", "0.1.15", False, Status.WARN),
    ("recipe", "==0.1.7", "0.1.15", True, Status.FAIL),
    ("recipe", "==0.1.7", "0.1.7", True, Status.PASS),
])
def test_a_companion_package_deviation_follows_its_basis(tmp_path, basis, specifier, installed, strict, status):
    path = tmp_path / "p.toml"
    path.write_text(f'extends = "{RECIPE}"\n[[packages]]\nname = "apache-tvm-ffi"\nversion = "{specifier}"\nbasis = "{basis}"\n')
    custom = load(path)
    made = facts(interpreter=interpreter(dists={**_good(), "apache-tvm-ffi": installed}))
    assert {f.id: f for f in judge(made, custom, strict=strict)}["nvgemm.deps"].status == status


# ---------------------------------------------------------------------------------------------------------------
# CUDA_VISIBLE_DEVICES


@pytest.mark.parametrize("value, count, hidden", [
    (None, 1, False), ("", 1, True), ("-1", 2, True), ("NoDevFiles", 1, True), ("0", 1, False), ("1", 1, True),
    ("1", 2, False), (" 0 ", 1, False), ("0,-1", 1, False), ("-1,0", 2, True), ("GPU-8e1f2a", 1, False),
    ("MIG-1234", 1, False), ("0", 0, False),
])
def test_visible_devices_that_hide_every_gpu(value, count, hidden):
    assert hidden_by_visible_devices(value, count) is hidden


def test_doctor_says_cuda_visible_devices_hides_the_gpus(policy):
    finding = {f.id: f for f in judge(facts(cuda_visible_devices="-1"), policy)}["gpu.compute-capability"]
    assert finding.status == Status.FAIL and "CUDA_VISIBLE_DEVICES='-1' hides every GPU" in finding.found
    assert {f.id: f for f in judge(facts(cuda_visible_devices="0"), policy)}["gpu.compute-capability"].status == Status.PASS


# ---------------------------------------------------------------------------------------------------------------
# extends merges [[packages]] (and the other arrays of tables) by name


def test_extends_with_packages_merges_by_name(tmp_path, policy):
    path = tmp_path / "site.toml"
    path.write_text(f'extends = "{RECIPE}"\n'
                    '[[packages]]\nname = "apache_tvm_ffi"\nversion = "==0.1.8"\n'
                    '[[packages]]\nname = "site-extras"\nversion = ">=1"\n'
                    '[[packages]]\nname = "nvidia-matmul-heuristics"\nremove = true\n'
                    '[[gpu]]\ncapability = "9.0"\nstatus = "pass"\nkernels = "site-verified"\n')
    custom = load(path)
    names = [p.name for p in custom.packages]
    assert names == ["apache-tvm-ffi", "torch-c-dlpack-ext", "site-extras"]
    assert str(custom.packages[0].specifier) == "==0.1.8"
    assert len(custom.gpus) == len(policy.gpus) and [g for g in custom.gpus if g.capability == (9, 0)][0].kernels == "site-verified"
    assert custom.stand_ins == policy.stand_ins and custom.conflicts == policy.conflicts


# ---------------------------------------------------------------------------------------------------------------
# Every format says which profile judged the report, and why


def test_the_chosen_profile_and_its_reason_in_every_format(builtins):
    from envcheck.model import Report
    from envcheck.render import markdown, table, to_json_data

    policy, choice = select(builtins, "2.16.0")
    report = Report(choice, "/opt/venv/bin/python", judge(facts(), policy))
    data = to_json_data(report)
    assert data["schema_version"] == 2
    assert data["profile"] == {"id": OPERATORS, "reason": choice.reason, "source": f"built-in profile {OPERATORS}",
                               "verified": False}
    head = table(report).split("\n\n")[0]
    assert f"profile {OPERATORS}" in head and f"profile {OPERATORS} chosen because torch 2.16.0" in head and "UNVERIFIED" in head
    assert f"Profile `{OPERATORS}` chosen because torch 2.16.0" in markdown(report)
