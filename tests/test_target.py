"""cutedsl.arch (issue 23 item 2): the compile target of Inductor's NVGEMM precompile workers, CUTE_DSL_ARCH, judged
from the job's environment (a gathered fact) against the profile's [compile-target]. Tables over every boundary:
each compute capability of the profile with the variable unset, its own target, another GPU's, the same GPU's other
suffix, a value the DSL refuses; the torch range; several GPUs; GPUs given; no GPU; the recipe, which has no rule.
Then the fact itself (gather reads it from the environment it is given, doctor from its own in a real process) and
the profile keys' errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from factsbuilder import driver, facts, gpu, stack

from envcheck.gather import Sources, gather
from envcheck.judge import judge
from envcheck.judge.target import device_capability, device_target, needed_environment, snippet_lines, target_remedy
from envcheck.model import Gpu, SourceValue, Status
from envcheck.profile import DEFAULT_PROFILE, PolicyError, load, load_builtin
from envcheck.profile.rules import RUN, SOURCES

OPERATORS = load_builtin("torch-2.14-operators")
VAR = "CUTE_DSL_ARCH"


THRESHOLD = ("_inductor/select_algorithm.py", "_NVGEMM_SUBPROCESS_PRECOMPILE_THRESHOLD")


def read(value=None, line=4924, why="no line of _inductor/select_algorithm.py assigns it a number"):
    """What the probe read of the threshold: a number on a line, or why none."""
    if value is None:
        return SourceValue(*THRESHOLD, why=why)
    return SourceValue(*THRESHOLD, value, line)


def arch(capabilities=((9, 0),), value=None, torch="2.14.1", policy=OPERATORS, no_gpu=False, given=(), threshold=None,
         settings=(), **kw):
    """cutedsl.arch for GPUs of these capabilities, the variable `value` (None: not set), `torch` (None: none
    installed), the `threshold` the probe read in its source (None: not read) and `settings` of the job's."""
    gpus = [gpu(cc, f"GPU {i}", index=i) for i, cc in enumerate(capabilities)]
    interpreter = stack(torch=torch or "2.14.1")
    if torch is None:
        interpreter = replace(interpreter, torch=None, distributions=tuple(d for d in interpreter.distributions
                                                                           if d.name != "torch"))
    elif threshold is not None:
        interpreter = replace(interpreter, torch=replace(interpreter.torch, values=(threshold,)))
    environment = (((VAR, value),) if value is not None else ()) + tuple(settings)
    made = facts(interpreter=interpreter, checkout=None,
                 driver=driver("580.159.04", "13.0", gpus), environment=environment,
                 given_gpus=tuple(Gpu(i, "given", cc, source="given") for i, cc in enumerate(given)), **kw)
    return {f.id: f for f in judge(made, policy, no_gpu=no_gpu)}["cutedsl.arch"]


# Every row of the profile: (capability, its own target, status unset, basis unset).
ROWS = [((9, 0), "sm_90a", Status.WARN, RUN), ((10, 0), "sm_100a", Status.PASS, ""), ((10, 3), "sm_103a", Status.WARN, SOURCES),
        ((10, 7), "sm_107a", Status.WARN, SOURCES), ((11, 0), "sm_110a", Status.WARN, SOURCES),
        ((12, 0), "sm_120a", Status.WARN, SOURCES), ((12, 1), "sm_121a", Status.WARN, SOURCES)]


def test_the_profile_names_every_row_and_its_source():
    rule = OPERATORS.compile_target
    assert [(r.capability, r.target, r.status, r.basis if r.status is not Status.PASS else "") for r in rule.gpus] == ROWS
    assert rule.variable == VAR and rule.fallback == "sm_100a" and str(rule.torch) == ">=2.14"
    assert rule.source and all(r.source for r in rule.gpus)
    assert load_builtin(DEFAULT_PROFILE).compile_target is None


@pytest.mark.parametrize("capability, target, status, basis", ROWS)
def test_unset_each_gpu_gets_its_rows_verdict_and_the_remedy_names_its_own_target(capability, target, status, basis):
    finding = arch((capability,))
    assert (finding.status, finding.basis) == (status, basis)
    assert f"{VAR} is not set" in finding.found
    if status is Status.PASS:
        assert finding.remedy is None
    else:
        assert finding.remedy.commands == (("export", f"{VAR}={target}"),)
        assert finding.remedy.environment == ((VAR, target),) and not finding.remedy.automatic


@pytest.mark.parametrize("capability, target, status, basis", ROWS)
def test_the_gpus_own_target_passes(capability, target, status, basis):
    finding = arch((capability,), target)
    assert finding.status is Status.PASS and finding.remedy is None and "own target" in finding.found


@pytest.mark.parametrize("capability, value", [((9, 0), "sm_100a"), ((9, 0), "sm_80"), ((9, 0), "sm_101a"),
                                               ((10, 0), "sm_90a"), ((10, 3), "sm_100a"), ((12, 0), "sm_100a")])
def test_another_gpus_target_fails_as_runtime(capability, value):
    finding = arch((capability,), value)
    assert (finding.status, finding.basis) == (Status.FAIL, "runtime")
    assert f"{VAR}={value} is the target of compute capability" in finding.found
    own = OPERATORS.compile_target.target_for(capability)
    assert finding.remedy.commands == (("export", f"{VAR}={own}"),)


@pytest.mark.parametrize("capability, value", [((9, 0), "sm_90"), ((10, 0), "sm_100f"), ((10, 0), "sm_100")])
def test_the_same_gpus_other_suffix_warns_from_the_sources(capability, value):
    finding = arch((capability,), value)
    assert (finding.status, finding.basis) == (Status.WARN, SOURCES)


@pytest.mark.parametrize("value", ["", "sm_90A", "90a", "sm_95a", "bogus", "sm_90a "])
def test_a_value_the_dsl_refuses_fails_with_or_without_a_gpu(value):
    for finding in (arch(((9, 0),), value), arch((), value), arch(((9, 0),), value, no_gpu=True)):
        assert finding.status is Status.FAIL and "no target the DSL takes" in finding.found
    assert arch(((9, 0),), value).remedy.commands == (("export", f"{VAR}=sm_90a"),)


@pytest.mark.parametrize("torch, status", [("2.14.0", Status.WARN), ("2.14.1", Status.WARN), ("2.15.0", Status.PASS),
                                           ("2.13.0", Status.PASS), ("2.16.0", Status.WARN), (None, Status.PASS)])
def test_the_torch_range_decides_whether_the_workers_need_it(torch, status):
    # 2.13 is outside the built-in profile; a profile for it (extends) would judge it so: the workers' path is 2.14's.
    # 2.15 keeps a GEMM's choices below the threshold (the profile's 8: no source read here); 2.16 has no record: as
    # the workers would compile. No torch is judged for what `pip install torch` gives on the target's Python (3.12
    # here: 2.15.0), as the profile was chosen
    finding = arch(((9, 0),), torch=torch)
    assert finding.status is status
    assert (finding.remedy is None) is (status is Status.PASS)
    if torch is None:
        assert any("no torch installed: judged for torch 2.15.0, what `pip install torch` gives" in d
                   for d in finding.details)
    if torch == "2.16.0":
        assert any("no record of how many NVGEMM choices torch 2.16.0 offers" in d for d in finding.details)


@pytest.mark.parametrize("python, status, said", [
    ((3, 11, 7), Status.PASS, "judged for torch 2.15.0"),  # the floor of torch 2.15.0
    ((3, 10, 14), Status.WARN, "judged for the torch this profile installs"),  # pip gives a 2.14 there
])
def test_no_torch_is_judged_for_what_pip_gives_on_the_targets_python(python, status, said):
    interpreter = replace(stack(), torch=None, version=python,
                          distributions=tuple(d for d in stack().distributions if d.name != "torch"))
    made = facts(interpreter=interpreter, checkout=None, driver=driver("580.159.04", "13.0", [gpu((9, 0), "H200")]))
    finding = {f.id: f for f in judge(made, OPERATORS)}["cutedsl.arch"]
    assert finding.status is status and any(said in d for d in finding.details)
    assert needed_environment(made, OPERATORS) == (() if status is Status.PASS else ((VAR, "sm_90a"),))


# --------------------------------------------------------------------------------------------------------------
# Per torch: the threshold (read from the installed torch's source, else the profile's) against the most NVGEMM
# choices one GEMM got (the profile's by-torch rows: 10 for 2.14 on 9.0, 5 for 2.15), and the settings that raise them


@pytest.mark.parametrize("torch, threshold, status, said", [
    ("2.14.1", None, Status.WARN, "its source not read: the profile's number for torch >=2.14, <2.15"),
    ("2.14.1", read(8, 4753), Status.WARN, "as its torch/_inductor/select_algorithm.py:4753 says"),
    ("2.14.1", read(10), Status.WARN, "from 10"),  # 10 choices reach a threshold of 10
    ("2.14.1", read(11), Status.PASS, "only from 11"),  # a torch that raised it: judged by what it says
    ("2.14.1", read(20), Status.PASS, "only from 20"),
    ("2.14.0", read(), Status.WARN, "no line of _inductor/select_algorithm.py assigns it a number: the profile's"),
    ("2.15.0", None, Status.PASS, "its source not read: the profile's number for torch >=2.15, <2.16"),
    ("2.15.0", read(8), Status.PASS, "only from 8 (as its torch/_inductor/select_algorithm.py:4924 says)"),
    ("2.15.0", read(6), Status.PASS, "only from 6"),
    ("2.15.0", read(5), Status.WARN, "from 5"),  # 5 choices reach a threshold of 5
    ("2.15.0", read(0), Status.WARN, "from 0"),
    ("2.15.0", read(why="torch has no _inductor/select_algorithm.py"), Status.PASS,
     "torch has no _inductor/select_algorithm.py: the profile's number for torch >=2.15, <2.16"),
    ("2.15.0", read(why="_inductor/select_algorithm.py is larger than 8 MiB: not read"), Status.PASS, "larger than 8 MiB"),
])
def test_the_threshold_against_the_choices_each_torch_offers(torch, threshold, status, said):
    finding = arch(((9, 0),), torch=torch, threshold=threshold)
    assert finding.status is status, finding.found
    assert said in " ".join((finding.found, *finding.details))
    if status is Status.PASS:
        assert finding.remedy is None and finding.basis == ""
        assert "compiles NVGEMM in the process that holds the GPU, for its own target sm_90a" in finding.found
        assert any("it would take CUTE_DSL_ARCH=sm_90a from" in d for d in finding.details)
    else:
        assert finding.remedy.commands == (("export", f"{VAR}=sm_90a"),) and finding.basis == RUN
        assert "CUTE_DSL_ARCH is not set: Inductor's compile workers build" in finding.found


def test_a_torch_without_a_row_says_what_its_source_says():
    finding = arch(((9, 0),), torch="2.16.0", threshold=read(8))
    assert finding.status is Status.WARN
    assert any("(its source says from 8: torch/_inductor/select_algorithm.py:4924)" in d for d in finding.details)


SUPPLEMENT, SWAP, MAX = ("TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS", "TORCHINDUCTOR_NVGEMM_SWAP_AB",
                         "TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS")


@pytest.mark.parametrize("settings, status", [
    ((), Status.PASS),
    (((SUPPLEMENT, "1"),), Status.WARN), (((SUPPLEMENT, "0"),), Status.PASS), (((SUPPLEMENT, "true"),), Status.PASS),
    (((SWAP, "1"),), Status.WARN), (((SWAP, "0"),), Status.PASS),
    (((MAX, "all"),), Status.WARN), (((MAX, "ALL"),), Status.WARN), (((MAX, "none"),), Status.WARN),
    (((MAX, "0"),), Status.WARN), (((MAX, "00"),), Status.WARN),  # torch's int("00") is 0: every config
    (((MAX, "11"),), Status.WARN), (((MAX, "10"),), Status.PASS), (((MAX, "4"),), Status.PASS),
    (((MAX, "-1"),), Status.PASS), (((MAX, " 12 "),), Status.WARN),  # int() takes the spaces, as torch's does
    (((MAX, "lots"),), Status.WARN),  # no value torch reads: envcheck cannot tell
    (((MAX, "4"), (SWAP, "1")), Status.WARN),
    (((MAX, "4"), (SUPPLEMENT, "0"), (SWAP, "0")), Status.PASS),
])
def test_a_setting_that_raises_a_gemms_choices_to_the_threshold_warns_with_why(settings, status):
    finding = arch(((9, 0),), torch="2.15.0", threshold=read(8), settings=settings)
    assert finding.status is status, finding.found
    if status is Status.WARN:
        assert finding.basis == SOURCES and finding.remedy.commands == (("export", f"{VAR}=sm_90a"),)
        assert "a GEMM can reach 8 NVGEMM choices, from which torch 2.15.0 compiles them in its compile workers" in finding.found
        raising = [f"{name}={value}" for name, value in settings if value not in ("0", "4", "10", "-1", "true")]
        assert all(r in finding.found for r in raising), finding.found
        if (MAX, "lots") in settings:
            assert "is no value envcheck reads as torch does" in finding.found
    else:
        assert finding.remedy is None


@pytest.mark.parametrize("torch, settings", [("2.14.1", ((MAX, "4"),)), ("2.16.0", ((SUPPLEMENT, "0"),))])
def test_settings_are_not_read_where_the_workers_compile_anyway(torch, settings):
    """2.14.1 offers 10 choices by its defaults (a lower cap is not counted on: the warning stays); a torch without a
    row is judged as the workers compile."""
    finding = arch(((9, 0),), torch=torch, settings=settings)
    assert (finding.status, finding.basis) == (Status.WARN, RUN)


@pytest.mark.parametrize("capability, status", [((10, 0), Status.PASS), ((10, 3), Status.WARN), ((12, 0), Status.WARN)])
def test_torch_2_15_on_other_gpus_keeps_their_rows(capability, status):
    """The choices were counted on 9.0 only: elsewhere (2-CTA and EFC families on Blackwell) the row's verdict stands;
    on 10.0 the fallback is the GPU's own target, whatever the settings."""
    finding = arch((capability,), torch="2.15.0", threshold=read(8), settings=((SUPPLEMENT, "1"),))
    assert finding.status is status
    if status is Status.WARN:
        assert any("no record of how many NVGEMM choices torch 2.15.0 offers per GEMM on compute capability" in d
                   for d in finding.details)


@pytest.mark.parametrize("capabilities, settings, status", [
    (((9, 0), (10, 0)), (), Status.PASS), (((9, 0), (10, 0)), ((SWAP, "1"),), Status.WARN),
    (((9, 0), (10, 3)), (), Status.WARN),
])
def test_torch_2_15_on_gpus_of_two_capabilities(capabilities, settings, status):
    finding = arch(capabilities, torch="2.15.0", threshold=read(8), settings=settings)
    assert finding.status is status
    assert any("one value per process" in d for d in finding.details)
    assert (finding.remedy is None) is (status is Status.PASS)


@pytest.mark.parametrize("value, status", [("sm_90a", Status.PASS), ("sm_100a", Status.FAIL), ("sm_90", Status.WARN),
                                           ("bogus", Status.FAIL)])
def test_with_torch_2_15_a_value_set_is_judged_as_before(value, status):
    """The DSL reads the variable in the process that holds the GPU too: a wrong one breaks it there."""
    assert arch(((9, 0),), value, torch="2.15.0", threshold=read(8)).status is status


@pytest.mark.parametrize("setting, value, raises", [
    (0, "1", True), (0, "0", False), (0, "", False), (0, "yes", False),
    (2, "all", True), (2, "All", True), (2, "none", True), (2, "0", True), (2, "000", True), (2, "10", False),
    (2, "11", True), (2, "9", False), (2, "-3", False), (2, "1e3", None), (2, "", None), (2, "ten", None),
])
def test_what_each_setting_reads_as(setting, value, raises):
    rule = OPERATORS.compile_target.more_choices[setting]
    assert rule.raises(value) is raises


def test_the_profile_names_each_torchs_counts_and_the_settings_with_their_sources():
    rule = OPERATORS.compile_target
    assert rule.threshold_value == THRESHOLD and OPERATORS.torch_values == (THRESHOLD,)
    assert [(str(r.torch), r.threshold, r.choices, r.basis) for r in rule.by_torch] == [
        ("<2.15,>=2.14", 8, (((9, 0), 10),), RUN), ("<2.16,>=2.15", 8, (((9, 0), 5),), RUN)]
    assert [m.variable for m in rule.more_choices] == [SUPPLEMENT, SWAP, MAX]
    assert all(r.source and r.text for r in (*rule.by_torch, *rule.more_choices))
    assert OPERATORS.variables == (VAR, SUPPLEMENT, SWAP, MAX)


def test_outside_the_range_a_wrong_target_still_fails():
    """The DSL reads the variable in the process that holds the GPU too (operators providers/cutedsl/operator.py:60)."""
    assert arch(((9, 0),), "sm_100a", torch="2.13.0").status is Status.FAIL


@pytest.mark.parametrize("value, status", [(None, Status.WARN), ("sm_90a", Status.WARN), ("sm_100a", Status.WARN),
                                           ("sm_120a", Status.FAIL)])
def test_gpus_of_two_capabilities(value, status):
    """One value per process: right for one GPU is a warning (a job on the other breaks), right for none fails."""
    finding = arch(((9, 0), (10, 0)), value)
    assert finding.status is status
    assert any("one value per process" in d for d in finding.details)
    if value is None or value == "sm_120a":
        assert "9.0: sm_90a" in finding.remedy.text and "10.0: sm_100a" in finding.remedy.text


def test_gpus_given_are_judged_with_the_environment_envcheck_runs_in():
    finding = arch((), given=((9, 0),), no_gpu=True)
    assert finding.status is Status.WARN and any("--gpu-capability" in d for d in finding.details)
    assert arch((), "sm_90a", given=((9, 0),), no_gpu=True).status is Status.PASS
    # the GPU given wins over the one seen
    assert arch(((10, 0),), given=((9, 0),)).status is Status.WARN


@pytest.mark.parametrize("no_gpu, said", [(False, "no GPU seen"), (True, "--no-gpu")])
def test_without_a_gpu_it_is_not_judged(no_gpu, said):
    finding = arch((), no_gpu=no_gpu)
    assert finding.status is Status.SKIP and said in finding.found
    assert arch((), "sm_90a", no_gpu=no_gpu).status is Status.SKIP


def test_a_capability_without_a_row_skips():
    assert arch(((8, 0),)).status is Status.SKIP


def test_the_recipe_does_not_judge_it():
    finding = arch(((9, 0),), "sm_100a", torch="2.11.0", policy=load_builtin(DEFAULT_PROFILE))
    assert finding.status is Status.SKIP and "no [compile-target]" in finding.found


def test_the_warning_rests_on_the_h200_runs_and_the_remedy_on_the_run_with_it():
    unset, remedied = arch(((9, 0),)), arch(((9, 0),), "sm_90a")
    assert ("env CUTE_DSL_ARCH", "unset") in unset.evidence.combination
    lost = [r for r in unset.evidence.runs if r.outcome is Status.WARN]
    assert {r.source for r in lost} == {"tests/data/h200-s4/model-nv16-arch-errors.log", "tests/data/h200-s4/m3-l-2048-X.log"}
    assert [r.source for r in remedied.evidence.runs] == ["tests/data/h200-s4/m3-l-2048-CUTE_DSL_ARCH.log"]
    assert all(Path(__file__).parent.parent.joinpath(r.source).is_file() for r in lost + list(remedied.evidence.runs))


def test_the_evidence_logs_show_what_the_runs_say():
    """The runs the verdict cites: without the variable Inductor's workers lost candidates to the DSL's sm_100a,
    with it none (read by the same reader smoke and bench use)."""
    from envcheck.causes.candidates import read_log_candidates

    data = Path(__file__).parent / "data" / "h200-s4"
    for name, lost in (("model-nv16-arch-errors.log", 6), ("m3-l-2048-X.log", 8), ("m3-l-2048-CUTE_DSL_ARCH.log", 0)):
        gemms = read_log_candidates((data / name).read_text(errors="replace"))
        assert sum(g.count for gemm in gemms for g in gemm.lost if g.cause_id == "dsl-arch-mismatch") == lost, name


def _offered(run) -> list[int]:
    """The NVGEMM choices each GEMM of a recorded run got, read from its capture as smoke and bench read them (a log's
    autotuning tables; a result's candidates); [] where the capture counts none."""
    from envcheck.causes.candidates import read_log_candidates

    path = Path(__file__).parent.parent / run.source.split(" ")[0]
    if path.suffix == ".json":
        data = json.loads(path.read_text())
        if "smoke" in data:
            return [g["offered"] for g in ((data["smoke"].get("candidates") or {}).get("gemms") or [])]
        return [c["offered"] for v in data.get("bench", data).get("verdicts", []) for c in v.get("candidates") or []]
    if path.suffix == ".log":
        return [g.offered for g in read_log_candidates(path.read_text(errors="replace"))]
    return []


@pytest.mark.parametrize("row", OPERATORS.compile_target.by_torch, ids=lambda r: str(r.torch))
def test_each_torchs_count_is_the_most_its_recorded_runs_got(row):
    """A by-torch row's choices are the runs': the most NVGEMM choices one GEMM got in the profile's recorded runs of
    that torch on that GPU with Inductor's defaults (no TORCHINDUCTOR_NVGEMM_ setting), read from their captures."""
    for capability, most in row.choices:
        runs = [r for r in OPERATORS.runs if r.capability == capability and row.torch.contains(r.version("torch"))
                and not any(name.startswith("TORCHINDUCTOR_NVGEMM_") for name, _ in r.environment)]
        counts = [n for r in runs for n in _offered(r)]
        assert counts and max(counts) == most, (row.torch, counts)


def test_torch_2_15_lost_nothing_without_the_variable_in_its_recorded_runs():
    """The runs the 2.15 pass cites: smoke, the MLP by default and with every config, with CUTE_DSL_ARCH unset, no
    candidate lost and fewer than 8 choices each; doctor names them as this combination's evidence."""
    from envcheck.causes.candidates import read_log_candidates

    data = Path(__file__).parent / "data" / "h200-s5"
    for name, offered in (("a6-X.log", 4), ("a6-CUTE_DSL_ARCH.log", 4), ("d1-all-configs-arch-unset.log", 7)):
        gemms = read_log_candidates((data / name).read_text(errors="replace"))
        assert [(g.offered, g.failed, g.lost) for g in gemms] == [(offered, 0, ())] * 2, name
        assert "expects arch" not in (data / name).read_text()
    finding = arch(((9, 0),), torch="2.15.0", threshold=read(8))
    cited = {r.source for r in finding.evidence.runs}
    assert {"tests/data/h200-s5/a4-smoke-unset.json", "tests/data/h200-s5/a6-X.log"} <= cited
    assert all(r.version("torch") == "2.15.0" and r.variable(VAR) is None and not r.environment
               for r in finding.evidence.runs)
    # a job with every config is cited the runs with every config, and only those (its settings are part of the
    # combination): 7 choices in the MLP, 4 in the smoke, short of the threshold its warning names
    every = arch(((9, 0),), torch="2.15.0", threshold=read(8), settings=((MAX, "all"),))
    assert [r.source for r in every.evidence.runs] == ["tests/data/h200-s5/d1-all-configs-arch-unset.log",
                                                       "tests/data/h200-s6/a4b-smoke-all.txt"]
    assert ("env TORCHINDUCTOR_NVGEMM_MAX_PROFILING_CONFIGS", "all") in every.evidence.combination


def test_one_remedy_and_its_python_lines():
    remedy = target_remedy(VAR, "sm_90a")
    assert "`export CUTE_DSL_ARCH=sm_90a`" in remedy.text and "`ENV CUTE_DSL_ARCH=sm_90a`" in remedy.text
    lines = snippet_lines(VAR, "sm_90a")
    namespace: dict = {}
    saved = os.environ.get(VAR)
    try:
        exec("\n".join(lines), namespace)  # noqa: S102 - envcheck's own snippet, run as a user pastes it
        assert os.environ[VAR] == "sm_90a"
    finally:
        os.environ.pop(VAR, None) if saved is None else os.environ.__setitem__(VAR, saved)


@pytest.mark.parametrize("visible, capability", [(None, (9, 0)), ("0", (9, 0)), ("1", (10, 0)), ("1,0", (10, 0)),
                                                 ("GPU-b", (10, 0)), ("GPU-x", (9, 0)), ("", (9, 0))])
def test_the_child_compiles_for_cudas_device_0(visible, capability):
    gpus = [replace(gpu((9, 0), "A", 0), uuid="GPU-a"), replace(gpu((10, 0), "B", 1), uuid="GPU-b")]
    made = facts(driver=driver(gpus=gpus), cuda_visible_devices=visible)
    assert device_capability(made) == capability
    assert device_target(made, OPERATORS) == OPERATORS.compile_target.target_for(capability)
    assert device_target(made, load_builtin(DEFAULT_PROFILE)) is None
    assert device_capability(facts(driver=driver(gpus=[]))) is None


# --------------------------------------------------------------------------------------------------------------
# The fact: the environment envcheck runs in


def test_gather_reads_the_profiles_variables_from_the_environment_it_is_given():
    env = {VAR: "sm_90a", "CUTE_DSL_LOG_LEVEL": "10"}
    made = gather(Sources(env=env, variables=(VAR,), timeout=20))
    assert made.environment == ((VAR, "sm_90a"),) and made.variable(VAR) == "sm_90a"
    assert gather(Sources(env={}, variables=(VAR,), timeout=20)).variable(VAR) is None


@pytest.mark.parametrize("value, status", [(None, "pass"), ("sm_90a", "pass"), ("sm_100a", "fail")])
def test_doctor_reads_its_own_environment(value, status, tmp_path):
    """A real doctor process for an H200 given, its environment the job's: the verdict and the fact in its JSON."""
    env = {k: v for k, v in os.environ.items() if k != VAR}
    if value is not None:
        env[VAR] = value
    done = subprocess.run([sys.executable, "-m", "envcheck", "doctor", "--json", "--no-gpu", "--gpu-capability", "9.0",
                           "--profile", "torch-2.14-operators"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    report = json.loads(done.stdout)
    check = next(c for c in report["checks"] if c["id"] == "cutedsl.arch")
    assert check["status"] == status, check
    assert report["facts"]["environment"] == ([[VAR, value]] if value is not None else [])
    if status != "pass":
        assert check["remedy"]["commands"] == [["export", "CUTE_DSL_ARCH=sm_90a"]]


# --------------------------------------------------------------------------------------------------------------
# The profile's keys


BASE = 'extends = "torch-2.14-operators"\n'
BY_TORCH = '[[compile-target.by-torch]]\ntorch = ">=2.16,<2.17"\nbasis = "run"\ntext = "t"\n'


@pytest.mark.parametrize("body, key, expected", [
    ('[compile-target]\nvariable = "cute dsl"\n', "compile-target.variable", "environment variable name"),
    ('[compile-target]\nfallback = "sm_999x"\n', "compile-target.fallback", "a target as the DSL names one"),
    ('[compile-target]\nfallback = "sm_95a"\n', "compile-target.fallback", "a value of compile-target.accepts"),
    ('[compile-target]\naccepts = { sm_90a = "nine" }\n', "compile-target.accepts", "target -> compute capability"),
    ('[compile-target]\naccepts = { "sm_90a; rm" = "9.0" }\n', "compile-target.accepts", "target -> compute capability"),
    ('[compile-target]\ntorch = "new"\n', "compile-target.torch", "torch version specifier"),
    ('[[compile-target.gpu]]\ncapability = "9.0"\ntarget = "sm_100a"\nstatus = "warn"\nbasis = "run"\ntext = "t"\n',
     "compile-target.gpu[0].target", "compiles for 9.0"),
    ('[[compile-target.gpu]]\ncapability = "9.0"\ntarget = "sm_90a"\nstatus = "warn"\nbasis = "runtime"\ntext = "t"\n',
     "compile-target.gpu[0].basis", "'run'"),
    ('[[compile-target.gpu]]\ncapability = "9.0"\ntarget = "sm_90a"\nstatus = "warn"\nbasis = "run"\n',
     "compile-target.gpu[0].text", "(the key is required)"),
    ('[compile-target]\ncolour = 1\n', "compile-target.colour", "no such key"),
    ('[compile-target]\nthreshold-file = "../../os.py"\n', "compile-target.threshold-file", "a file in torch's package"),
    ('[compile-target]\nthreshold-name = "X = 1; import os"\n', "compile-target.threshold-name", "a Python name"),
    (BY_TORCH + 'threshold = -1\nchoices = { "9.0" = 5 }\n', "compile-target.by-torch[2].threshold", "a whole number"),
    (BY_TORCH + 'threshold = true\nchoices = { "9.0" = 5 }\n', "compile-target.by-torch[2].threshold", "a whole number"),
    (BY_TORCH + 'threshold = 8\nchoices = { "nine" = 5 }\n', "compile-target.by-torch[2].choices", "compute capability"),
    (BY_TORCH + 'threshold = 8\nchoices = { "9.0" = "5" }\n', "compile-target.by-torch[2].choices", "compute capability"),
    (BY_TORCH + 'threshold = 8\nchoices = { "9.0" = 5 }\ncolour = 1\n', "compile-target.by-torch[2].colour", "no such key"),
    ('[[compile-target.more-choices]]\nvariable = "X"\nvalues = [1]\ntext = "t"\n', "compile-target.more-choices[3].values",
     "a list of the values"),
    ('[[compile-target.more-choices]]\nvariable = "X"\nvalues = ["a b"]\ntext = "t"\n',
     "compile-target.more-choices[3].values", "a list of the values"),
    ('[[compile-target.more-choices]]\nvariable = "X"\nvalues = ["1"]\nabove = "ten"\ntext = "t"\n',
     "compile-target.more-choices[3].above", "a whole number"),
])
def test_a_bad_compile_target_names_the_file_and_the_key(tmp_path, body, key, expected):
    path = tmp_path / "p.toml"
    path.write_text(BASE + body)
    with pytest.raises(PolicyError) as caught:
        load(path)
    message = str(caught.value)
    assert str(path) in message and f"'{key}'" in message and expected in message, message


def test_a_profile_changes_one_torchs_row_and_one_setting_by_their_keys(tmp_path):
    """extends merges by-torch by its torch and more-choices by its variable: a site that measured more choices on its
    torch 2.15 says so, and one whose jobs never swap A and B drops that setting."""
    path = tmp_path / "p.toml"
    path.write_text(BASE + '[[compile-target.by-torch]]\ntorch = ">=2.15,<2.16"\nthreshold = 8\nchoices = { "9.0" = 9 }\n'
                           'basis = "run"\ntext = "ours"\n[[compile-target.more-choices]]\n'
                           'variable = "TORCHINDUCTOR_NVGEMM_SWAP_AB"\nremove = true\n')
    rule = load(path).compile_target
    assert [r.most((9, 0)) for r in rule.by_torch] == [10, 9] and rule.by_torch[1].text == "ours"
    assert [m.variable for m in rule.more_choices] == [SUPPLEMENT, MAX]
    finding = arch(((9, 0),), torch="2.15.0", threshold=read(8), policy=load(path))
    assert finding.status is Status.WARN  # 9 choices reach 8
    finding = arch(((9, 0),), torch="2.15.0", threshold=read(10), policy=load(path), settings=((SWAP, "1"),))
    assert finding.status is Status.PASS  # 9 < 10, and SWAP_AB is no setting of this profile's


def test_a_threshold_file_without_its_name_is_refused(tmp_path):
    path = tmp_path / "p.toml"
    body = ('[compile-target]\nvariable = "CUTE_DSL_ARCH"\ntorch = ">=2.14"\nfallback = "sm_100a"\n'
            'accepts = { sm_100a = "10.0" }\nthreshold-file = "_inductor/select_algorithm.py"\n')
    text = (Path(__file__).parent.parent / "envcheck" / "profile" / "builtin" / "torch-2.14-operators.toml").read_text()
    start, end = text.index("[compile-target]"), text.index("[smoke]")
    path.write_text(text[:start].replace('id = "torch-2.14-operators"', 'id = "mine"') + body + "\n" + text[end:])
    with pytest.raises(PolicyError, match="threshold-file and threshold-name both, or neither"):
        load(path)


def test_a_profile_changes_one_row_by_its_capability(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(BASE + '[[compile-target.gpu]]\ncapability = "10.0"\ntarget = "sm_100a"\nstatus = "warn"\n'
                           'basis = "sources"\ntext = "mine"\n')
    rule = load(path).compile_target
    assert len(rule.gpus) == len(ROWS) and rule.row((10, 0)).text == "mine" and rule.row((9, 0)).basis == RUN


# --------------------------------------------------------------------------------------------------------------
# fix: a "needs you" step with the exact line and where it goes


def _plan(value=None, capability=(9, 0)):
    from envcheck.fix.plan import make_plan
    from envcheck.fix.steps import PlanOptions

    made = facts(interpreter=stack(), checkout=None, driver=driver("580.159.04", "13.0", [gpu(capability, "NVIDIA H200")]),
                 environment=((VAR, value),) if value is not None else ())
    findings = judge(made, OPERATORS)
    return make_plan(findings, made, OPERATORS, PlanOptions(python="/t/bin/python", state_dir="/s", cutlass_dir="/c",
                                                             cutlass_url=""))


def test_fix_asks_the_person_to_set_it_even_where_the_check_only_warns():
    from envcheck.render.fix import render_plan

    plan = _plan()
    needs = [m for m in plan.manual if m.check_id == "cutedsl.arch"]
    assert len(needs) == 1 and needs[0].commands == (("export", "CUTE_DSL_ARCH=sm_90a"),)
    assert "cutedsl.arch" not in plan.failing  # a warning: fix exits as for a warning
    text = render_plan(plan, "fix")
    assert "Needs you (envcheck does not try these):" in text and "$ export CUTE_DSL_ARCH=sm_90a" in text
    assert "`ENV CUTE_DSL_ARCH=sm_90a` in its Dockerfile" in text
    assert plan.to_json()["manual"][0]["commands"] == [["export", "CUTE_DSL_ARCH=sm_90a"]]


@pytest.mark.parametrize("value, capability, asked", [("sm_90a", (9, 0), False), (None, (10, 0), False),
                                                      ("sm_100a", (9, 0), True), (None, (12, 0), True)])
def test_fix_asks_only_where_the_verdict_is_not_a_pass(value, capability, asked):
    plan = _plan(value, capability)
    assert any(m.check_id == "cutedsl.arch" for m in plan.manual) is asked
    # a warning whose remedy is no variable to set stays out of "needs you" (12.0's kernel-table warning); on 10.0
    # torch 2.14.1 beside operators 0.3.0 fails gpu.compute-capability (the common_efc caveat, issue 25): a failure's
    # way out is for the person
    kernel_table = [m for m in plan.manual if m.check_id == "gpu.compute-capability"]
    assert (kernel_table != []) is (capability == (10, 0)), kernel_table


@pytest.fixture(scope="module")
def operators_venv(tmp_path_factory) -> Path:
    """torch 2.14.1 (cu130) with the whole operators stack, as fix --bundle leaves it."""
    from wheelfactory import install, make_venv, operators_wheels

    wheels = operators_wheels(tmp_path_factory.mktemp("wheels"))
    python = make_venv(tmp_path_factory.mktemp("venv") / "v")
    install(python, wheels, "torch==2.14.1+cu130", "nvidia-cutlass-dsl[cu13]==4.8.1", "nvidia-cutlass-operators==0.3.0",
            "apache-tvm-ffi==0.1.15.post2", "nvidia-matmul-heuristics")
    return python


@pytest.mark.slow
@pytest.mark.parametrize("value", [None, "sm_90a"])
def test_fix_for_an_h200_from_its_own_environment(operators_venv, value, tmp_path):
    """A real `envcheck fix --dry-run` for 9.0 on torch 2.14.1, its environment the job's: without the variable its
    plan's one instruction is the line to export; with it, nothing is asked."""
    env = {k: v for k, v in os.environ.items() if k != VAR}
    if value is not None:
        env[VAR] = value
    done = subprocess.run([sys.executable, "-m", "envcheck", "fix", "--dry-run", "--python", str(operators_venv),
                           "--no-gpu", "--gpu-capability", "9.0"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Profile torch-2.14-operators chosen" in done.stdout
    assert ("$ export CUTE_DSL_ARCH=sm_90a" in done.stdout) is (value is None), done.stdout


# --------------------------------------------------------------------------------------------------------------
# explain: the H200's log, the same remedy


@pytest.mark.parametrize("profile", [[], ["--profile", "torch-2.14-operators"]])
def test_explain_names_the_h200_logs_cause_and_gives_doctors_remedy(profile, capsys):
    from envcheck.cli import main
    from envcheck.model import plain

    log = Path(__file__).parent / "data" / "h200-s4" / "model-nv16-arch-errors.log"
    assert main(["explain", str(log), "--json", *profile]) == 1
    data = json.loads(capsys.readouterr().out)
    first = data["causes"][0]
    assert first["id"] == "dsl-arch-mismatch" and "sm_90a" in first["text"]
    assert first["remedy"] == plain(arch(((9, 0),)).remedy) == plain(target_remedy(VAR, "sm_90a"))


# --------------------------------------------------------------------------------------------------------------
# bench's snippet


@pytest.mark.parametrize("capability, torch, settings, wanted", [
    ((9, 0), "2.14.1", (), ((VAR, "sm_90a"),)), ((9, 0), "2.15.0", (), ()),
    ((9, 0), "2.15.0", (("TORCHINDUCTOR_NVGEMM_SUPPLEMENT_CONFIGS", "1"),), ((VAR, "sm_90a"),)),
    ((10, 3), "2.14.1", (), ((VAR, "sm_103a"),)), ((10, 3), "2.15.0", (), ((VAR, "sm_103a"),)),
    ((10, 0), "2.14.1", (), ()), ((8, 0), "2.14.1", (), ()),
])
def test_what_the_gpus_process_must_set(capability, torch, settings, wanted):
    """bench's snippet follows cutedsl.arch's verdict without the variable: torch 2.15.0 on 9.0 needs nothing unless a
    setting of the job's raises a GEMM's NVGEMM choices to the threshold."""
    from envcheck.judge.target import needed_environment

    made = facts(interpreter=stack(torch=torch), driver=driver(gpus=[gpu(capability)]), environment=settings)
    assert needed_environment(made, OPERATORS) == wanted
    assert needed_environment(made, load_builtin(DEFAULT_PROFILE)) == ()
    assert needed_environment(facts(driver=driver(gpus=[])), OPERATORS) == ()


def _run_snippet(snippet: str) -> tuple[object, "str | None"]:
    """Run a snippet as a user pastes it, against a stand-in for torch._inductor.config that records the variable's
    value when the config is imported (what torch.compile's workers would start with)."""
    import types

    seen = {}
    config = types.ModuleType("torch._inductor.config")
    package, torch = types.ModuleType("torch._inductor"), types.ModuleType("torch")
    package.config, torch._inductor = config, package
    saved_modules = {k: sys.modules.get(k) for k in ("torch", "torch._inductor", "torch._inductor.config")}
    saved = os.environ.pop(VAR, None)
    sys.modules.update({"torch": torch, "torch._inductor": package, "torch._inductor.config": config})
    original = sys.modules["torch._inductor.config"]
    try:
        lines = snippet.splitlines()
        at = next(i for i, line in enumerate(lines) if "torch._inductor.config" in line and line.startswith("import"))
        exec("\n".join(lines[:at]), {})  # noqa: S102 - envcheck's own snippet
        seen["at import"] = os.environ.get(VAR)
        exec("\n".join(lines), {})  # noqa: S102
    finally:
        os.environ.pop(VAR, None)
        if saved is not None:
            os.environ[VAR] = saved
        for key, value in saved_modules.items():
            sys.modules.pop(key, None) if value is None else sys.modules.__setitem__(key, value)
    return original, seen["at import"]


@pytest.mark.parametrize("capability, enable, value", [((9, 0), True, "sm_90a"), ((10, 0), True, None),
                                                       ((9, 0), False, None)])
def test_bench_snippet_sets_the_target_first_where_the_gpu_needs_it(tmp_path, capability, enable, value):
    """A real bench run (a child replaying rows) on this GPU: where NVGEMM wins on 9.0 the snippet sets CUTE_DSL_ARCH
    before anything of torch is configured, and says why; on 10.0, or where NVGEMM is not enabled, it does not."""
    from test_bench import RESULT, SQUARE, replaying, row

    from envcheck.bench import run_bench
    from envcheck.bench.result import BenchOptions

    nvgemm = 0.5 if enable else 2.0
    rows = [row("ATEN", 1.0), row("mix", min(1.0, nvgemm)), row("TRITON", 1.2), row("NVGEMM", nvgemm)]
    made = facts(interpreter=stack(), driver=driver("580.159.04", "13.0", [gpu(capability, "NVIDIA GPU")]), checkout=None)
    result = run_bench(sys.executable, made, OPERATORS, BenchOptions(shapes=SQUARE, budget_s=30),
                       cache_dir=tmp_path / "cache", child=replaying(tmp_path, rows, RESULT))
    assert result.decision.enable is enable, result.decision.text
    snippet = result.decision.snippet
    assert ("before torch.compile starts Inductor's compile workers" in snippet) is (value is not None)
    config, at_import = _run_snippet(snippet)
    assert at_import == value
    assert config.max_autotune_gemm_backends == ("ATEN,TRITON,NVGEMM" if enable else "ATEN,TRITON")


# --------------------------------------------------------------------------------------------------------------
# smoke's and bench's children: the variable passed on only as this GPU's own target, which way they ran, and
# Inductor's cache kept apart per way


H200_STACK = facts(interpreter=stack(), checkout=None, driver=driver("580.159.04", "13.0", [gpu((9, 0), "NVIDIA H200")]))
# A child that says what it got, and leaves a file in Inductor's cache folder as a compile would.
CHILD = """import json, os, sys
cache = os.environ["TORCHINDUCTOR_CACHE_DIR"]
print("CHILD " + json.dumps({"arch": os.environ.get("CUTE_DSL_ARCH"), "cache": cache, "found": sorted(os.listdir(cache))}))
open(os.path.join(cache, "autotune-" + str(os.environ.get("CUTE_DSL_ARCH"))), "w").close()
"""


def _seen(log: str) -> dict:
    line = next(l for l in Path(log).read_text().splitlines() if l.startswith("CHILD "))
    return json.loads(line[len("CHILD "):])


@pytest.mark.parametrize("yours, capability, way, passed", [
    (None, (9, 0), "yours", None), ("sm_90a", (9, 0), "remedy", "sm_90a"), ("sm_100a", (9, 0), "cleared", None),
    ("sm_90", (9, 0), "cleared", None), ("bogus", (9, 0), "cleared", None), ("sm_100a", (10, 0), "remedy", "sm_100a"),
    ("sm_90a", (8, 0), "cleared", None),
])
def test_which_way_a_child_compiles(yours, capability, way, passed):
    from envcheck.runner import compile_way

    made = facts(driver=driver(gpus=[gpu(capability)]))
    found = compile_way({VAR: yours} if yours is not None else {}, made, OPERATORS)
    assert (found.way, found.value, found.target) == (way, passed, OPERATORS.compile_target.target_for(capability))
    assert found.yours == yours
    # a profile that names no target: the caller's is never passed on
    assert compile_way({VAR: "sm_90a"}, made, load_builtin(DEFAULT_PROFILE)).way == "cleared"


def _smoke(tmp_path, value, progress=lambda text: None):
    from envcheck.smoke import run_smoke

    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if k != VAR}
    if value is not None:
        env[VAR] = value
    return run_smoke(sys.executable, H200_STACK, OPERATORS, timeout=30, cache_dir=tmp_path / "c", child=script, env=env,
                     progress=progress)


@pytest.mark.parametrize("value, way, passed, folder", [(None, "yours", None, "inductor"),
                                                        ("sm_90a", "remedy", "sm_90a", "inductor-sm_90a"),
                                                        ("sm_100a", "cleared", None, "inductor")])
def test_the_smoke_child_gets_the_target_only_where_it_is_this_gpus_and_says_which_way(tmp_path, value, way, passed, folder):
    from envcheck.render.smoke import render_text

    result = _smoke(tmp_path, value)
    seen = _seen(result.log)
    assert seen["arch"] == passed and Path(seen["cache"]) == tmp_path / "c" / folder
    data = json.loads(json.dumps(result.to_dict()))
    assert data["compile_target"]["way"] == way and data["compile_target"]["value"] == passed
    assert data["cache"]["dir"] == str(tmp_path / "c" / folder)
    record = data["environment"]
    if value is not None:
        assert (VAR in record["kept"]) is (way == "remedy") and (VAR in record["cleared"]) is (way == "cleared")
    line = next(l for l in render_text(result).splitlines() if l.strip().startswith("compiled"))
    assert {"yours": "as your process compiles", "remedy": "with the remedy", "cleared": "envcheck cleared it"}[way] in line


def test_a_run_with_the_remedy_never_answers_from_the_cache_of_a_run_without_it(tmp_path):
    """The cache one way filled is not the other way's: a second run with the remedy starts cold (its compile workers
    run, so a loss would show), and a third without it finds only its own way's."""
    said: list[str] = []
    first = _seen(_smoke(tmp_path, None, said.append).log)
    second = _seen(_smoke(tmp_path, "sm_90a", said.append).log)
    third = _seen(_smoke(tmp_path, None, said.append).log)
    assert first["found"] == [] and second["found"] == [] and third["found"] == ["autotune-None"]
    assert ["cold cache" in s for s in said if "compiling" in s] == [True, True, False]


@pytest.mark.parametrize("value, way", [("sm_90a", "remedy"), ("sm_100a", "cleared")])
def test_the_bench_child_likewise(tmp_path, value, way):
    from envcheck.bench import run_bench
    from envcheck.bench.result import BenchOptions
    from envcheck.bench.shapes import Shape
    from envcheck.render.bench import render

    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**{k: v for k, v in os.environ.items() if k != VAR}, VAR: value}
    result = run_bench(sys.executable, H200_STACK, OPERATORS, BenchOptions(shapes=(Shape(256, 256, 256),), budget_s=10),
                       cache_dir=tmp_path / "c", child=script, env=env)
    seen = _seen(result.log)
    assert seen["arch"] == (value if way == "remedy" else None)
    assert Path(seen["cache"]).name == ("inductor-sm_90a" if way == "remedy" else "inductor")
    data = json.loads(json.dumps(result.to_dict()))
    assert data["compile_target"]["way"] == way and data["cache_dir"] == seen["cache"]
    text = render(result, data, "table")
    assert any(l.strip().startswith("compiled") and VAR in l for l in text.splitlines())


@pytest.mark.parametrize("compiled, environment", [
    ({"variable": VAR, "way": "remedy", "value": "sm_90a", "target": "sm_90a", "yours": "sm_90a"}, ((VAR, "sm_90a"),)),
    ({"variable": VAR, "way": "cleared", "value": None, "target": "sm_90a", "yours": "sm_100a"}, ()),
    (None, ()),
])
def test_a_contributed_run_counts_for_the_way_its_child_compiled(compiled, environment):
    """doctor --evidence: a smoke result with the remedy is a recorded run of `env CUTE_DSL_ARCH sm_90a`."""
    from envcheck.profile.results import run_from_result

    data = json.loads((Path(__file__).parent / "data" / "h200-2026-12-01" / "smoke-cold.json").read_text())
    data["smoke"]["compile_target"] = compiled
    run = run_from_result(data, "r.json", date="2026-12-02")
    assert run.environment == environment
    finding = {f.id: f for f in judge(replace(H200_STACK, environment=environment), OPERATORS, runs=(run,))}["cutedsl.arch"]
    assert (run in finding.evidence.runs) is True
    with pytest.raises(Exception, match="smoke.compile_target"):
        data["smoke"]["compile_target"] = ["sm_90a"]
        run_from_result(data, "r.json", date="2026-12-02")
