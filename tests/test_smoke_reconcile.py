"""doctor --smoke reconciles (issue 17 item 4): the checks held against the smoke run, as the finding smoke.verdicts.

The verdict logic as a table over every boundary (the check's basis x the smoke's outcome x the check's status, and
--strict where the basis comes from); then through the real smoke child on the simulated GPU (tests/data/bench/
fake_gpu): a recipe deviation the passing run outranks, a runtime failure it disproves, a failure that contradicts two
passing checks; and each output format."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import factsbuilder as fb
from envcheck.judge import judge
from envcheck.model import Finding, Report, SmokeResult, Status, gpus_given
from envcheck.render import render, to_json_data
from envcheck.render.github import github_annotations
from envcheck.render.junit import junit_xml
from envcheck.smoke import run_smoke
from envcheck.smoke.reconcile import CHECK_ID, cause_checks, elsewhere, joined, reconcile

FAKE_GPU = Path(__file__).parent / "data" / "bench" / "fake_gpu"
H200 = fb.gpu(capability=(9, 0), name="NVIDIA H200")
KERNEL = "cutedsl.Sm90StaticPersistentGemmOperator_fake"
CHECK = "cutedsl.version"
CAUSE = "dsl-too-new"  # its row of causes/signatures.toml names cutedsl.version

P, W, F, E, S = Status.PASS, Status.WARN, Status.FAIL, Status.ERROR, Status.SKIP


def smoke(status: Status) -> SmokeResult:
    if status is P:
        return SmokeResult(P, f"{KERNEL} ran", kernel=KERNEL, gpu="NVIDIA H200 (9.0)", elapsed_s=1.0, compile_s=2.0,
                           run_s=1e-4, max_error=0.0)
    if status is F:
        return SmokeResult(F, "smoke failed: ProxyKind", cause="DSL 4.4 removed ProxyKind.", cause_id=CAUSE,
                           elapsed_s=1.0)
    return SmokeResult(S, "smoke skipped: no GPU", cause="No GPU to run on.", cause_id="no-gpu")


def check(status: Status, basis: str) -> Finding:
    return Finding(CHECK, "CuTeDSL version", status, f"nvidia-cutlass-dsl 4.8.1 ({status.value})", basis=basis)


def report_of(*findings: Finding, facts=None) -> Report:
    return Report("p", "/opt/venv/bin/python", findings, facts=facts)


# ---------------------------------------------------------------------------------------------------------------
# The table: basis x smoke x check. Columns: the reconciliation's status, the contradiction's outcome (- none), the
# status the check is left with, the exit code of the whole report.

TABLE = """
    runtime  pass  pass   pass   -          pass  0
    runtime  pass  warn   pass   -          warn  0
    runtime  pass  fail   error  disproved  fail  1
    runtime  fail  pass   warn   missed     pass  1
    runtime  fail  warn   warn   missed     warn  1
    runtime  fail  fail   pass   -          fail  1
    runtime  skip  pass   skip   -          pass  1
    runtime  skip  warn   skip   -          warn  1
    runtime  skip  fail   skip   -          fail  1
    recipe   pass  pass   pass   -          pass  0
    recipe   pass  warn   pass   -          warn  0
    recipe   pass  fail   warn   overruled  warn  0
    recipe   fail  pass   warn   missed     pass  1
    recipe   fail  warn   warn   missed     warn  1
    recipe   fail  fail   pass   -          fail  1
    recipe   skip  pass   skip   -          pass  1
    recipe   skip  warn   skip   -          warn  1
    recipe   skip  fail   skip   -          fail  1
"""
ROWS = [line.split() for line in TABLE.strip().splitlines()]


@pytest.mark.parametrize("basis, run, verdict, status, outcome, left, code", ROWS)
def test_the_table(basis, run, verdict, status, outcome, left, code):
    finding = check(Status(verdict), basis)
    result = smoke(Status(run))
    reconciled = reconcile((finding,), result, cause_checks(result.cause_id))
    assert reconciled.status is Status(status), reconciled.said
    assert [c.outcome for c in reconciled.contradictions] == ([] if outcome == "-" else [outcome])
    joined_report = joined(report_of(finding), result)
    assert joined_report.finding(CHECK).status is Status(left)
    assert joined_report.finding(CHECK_ID).status is Status(status)
    assert joined_report.exit_code == int(code)
    assert joined_report.reconciliation == reconciled


def test_what_each_says():
    overruled = joined(report_of(check(F, "recipe")), smoke(P))
    assert overruled.finding(CHECK_ID).found == (
        f"{CHECK} fails only as a recipe deviation (--strict), and {KERNEL} on NVIDIA H200 (9.0) ran with it: the run "
        "outranks the recipe, so the exit code follows the run")
    assert overruled.finding(CHECK).found.endswith(f"The smoke ran {KERNEL} with it: the run outranks the recipe "
                                                   f"({CHECK_ID}).")
    disproved = joined(report_of(check(F, "runtime")), smoke(P))
    said = disproved.finding(CHECK_ID)
    assert said.found.startswith(f"{CHECK} fails as a runtime requirement") and "that verdict is wrong here" in said.found
    assert said.remedy is not None and "envcheck doctor --smoke --json" in said.remedy.text
    assert said.details == (f"{CHECK}: fail (runtime), disproved by the smoke run",)
    assert "contradicted by the run" in disproved.finding(CHECK).found
    missed = joined(report_of(check(P, "")), smoke(F))
    assert missed.smoke.cause == f"DSL 4.4 removed ProxyKind. This contradicts {CHECK}, which passed."
    assert missed.smoke.summary == f"smoke failed: ProxyKind This contradicts {CHECK}, which passed."
    assert missed.finding(CHECK_ID).remedy is None  # the smoke's own remedy says what to do
    assert missed.finding(CHECK_ID).found == (f"the smoke failed with {CAUSE} where {CHECK} passed: the run contradicts "
                                              "that verdict")
    assert missed.smoke.status is F and missed.smoke.remedy == smoke(F).remedy  # the smoke's own answer stands
    agree = joined(report_of(check(F, "runtime")), smoke(F))
    assert agree.finding(CHECK_ID).found == f"the smoke failed with {CAUSE}, as {CHECK} found"
    assert agree.smoke == smoke(F)


def test_a_failing_finding_without_a_basis_is_taken_as_runtime():
    """Nothing is overruled on a guess: only a failure known to be a recipe deviation follows the run."""
    reconciled = reconcile((check(F, ""),), smoke(P))
    assert reconciled.status is E and reconciled.contradictions[0].basis == "runtime"


@pytest.mark.parametrize("result, status, words", [
    (SmokeResult(W, "ran, but the DSL is outside the policy", kernel=KERNEL, cause_id="dsl-outside-policy"), E,
     "yet cutedsl.Sm90"),  # it proved a kernel: it counts as a run
    (SmokeResult(W, "ran, but the code names no kernel", cause_id="kernel-unnamed"), S, "proved no kernel"),
    (SmokeResult(F, "timed out", cause_id="timeout"), S, "failed with timeout, which no check judges"),
    (SmokeResult(F, "failed", cause_id=None), S, "an unnamed cause"),
])
def test_what_counts_as_a_run(result, status, words):
    reconciled = reconcile((check(F, "runtime"),), result, cause_checks(result.cause_id))
    assert reconciled.status is status and words in reconciled.said


def test_a_failure_is_held_against_every_check_its_cause_names():
    named = cause_checks("cutlass-api-missing")
    assert named == ("cutlass-api.install", "cutlass.checkout")
    result = replace(smoke(F), cause_id="cutlass-api-missing")
    install, checkout = (Finding(i, i, P, "ok") for i in named)
    both = reconcile((install, checkout, check(F, "runtime")), result, named)  # cutedsl.version is not named
    assert both.status is W and [c.check for c in both.contradictions] == list(named)
    assert "cutlass-api.install and cutlass.checkout passed" in both.said and "those verdicts" in both.said
    one_fails = reconcile((replace(install, status=E), checkout), result, named)  # could not be judged: no claim
    assert one_fails.status is P and one_fails.contradictions == ()
    skipped = reconcile((replace(install, status=S), replace(checkout, status=S)), result, named)
    assert skipped.status is S


# ---------------------------------------------------------------------------------------------------------------
# --strict: where a failing finding's basis comes from


def test_strict_fails_a_recipe_deviation_and_says_its_basis_is_the_recipe(policy):
    env = fb.stack(torch="2.13.0", dsl="4.8.1", tvm="0.1.15.post2", library="recipe", flavours=("cu13",))
    made = fb.facts(interpreter=env, driver=fb.driver(gpus=[H200]), toolkit=fb.toolkit("13.0.88"))
    lenient = {f.id: f for f in judge(made, policy)}
    strict = {f.id: f for f in judge(made, policy, strict=True)}
    for check_id in ("cutedsl.version", "nvgemm.deps", "cuda.toolkit"):
        assert (lenient[check_id].status, lenient[check_id].basis) == (W, ""), check_id
        assert (strict[check_id].status, strict[check_id].basis) == (F, "recipe"), check_id
    old_driver = replace(made, driver=fb.driver("575.57.08", "12.9", gpus=[H200]))  # another major: runtime
    for strict_flag in (False, True):
        found = {f.id: f for f in judge(old_driver, policy, strict=strict_flag)}["cuda.driver"]
        assert (found.status, found.basis) == (F, "runtime")
    assert all(f.basis == "" for f in lenient.values() if f.status is not F)


# ---------------------------------------------------------------------------------------------------------------
# The same GPU, or not


@pytest.mark.parametrize("given, seen, no_gpu, apart", [
    ((), (H200,), False, ""),
    (((9, 0),), (H200,), False, ""),  # given, and the one here
    (((8, 0),), (H200,), False, "judged for compute capability 8.0 (given with --gpu-capability)"),
    (((8, 0),), (H200,), True, "judged for compute capability 8.0"),
    ((), (H200, fb.gpu((10, 0), index=1)), False, "GPUs of compute capability 9.0 and 10.0"),
    ((), (H200,), True, ""),  # --no-gpu: no capability judged for, nothing capability-dependent to differ
])
def test_the_checks_and_the_run_answer_for_the_same_gpu(given, seen, no_gpu, apart):
    made = fb.facts(driver=fb.driver(gpus=list(seen)), given_gpus=gpus_given(given))
    said = elsewhere(made, no_gpu)
    assert (said == "") if not apart else (apart in said)
    if apart:
        reconciled = joined(report_of(check(F, "runtime"), facts=made), smoke(P), no_gpu=no_gpu)
        assert reconciled.finding(CHECK_ID).status is S and reconciled.finding(CHECK).status is F
        assert reconciled.exit_code == 1 and reconciled.reconciliation.contradictions == ()


# ---------------------------------------------------------------------------------------------------------------
# Through the real smoke child on the simulated GPU


PY = sys.executable  # the dev venv: the child finds fake_gpu's torch and cutlass_api on its PYTHONPATH


def doctor_smoke(policy, tmp_path, made, strict=False, **env):
    """What doctor --smoke makes of these facts: judge, the real child on the simulated GPU, joined."""
    report = Report(policy.id, PY, judge(made, policy, strict=strict), facts=made)
    result = run_smoke(PY, made, policy, timeout=60, cache_dir=tmp_path / "cache",
                       env={**os.environ, "PYTHONPATH": str(FAKE_GPU), **env})
    return joined(report, result)


def recipe_deviation(strict_env=None):
    """The recipe profile with DSL 4.8.1 and tvm-ffi 0.1.15 (outside the recipe's pins, inside what runs), without
    torch-c-dlpack-ext, on an H200."""
    env = fb.stack(torch="2.13.0", dsl="4.8.1", tvm="0.1.15.post2", library="recipe", flavours=("cu13",),
                   drop=("torch-c-dlpack-ext",))
    return fb.facts(interpreter=env, driver=fb.driver(gpus=[H200]))


def test_a_recipe_deviation_the_passing_run_outranks(policy, tmp_path):
    for strict in (False, True):
        report = doctor_smoke(policy, tmp_path, recipe_deviation(), strict=strict)
        assert report.smoke.kernel == "cutedsl.Sm80TensorOpGemmKernel_tnt_fake", report.smoke.summary
        assert report.smoke.status is W and report.smoke.cause_id == "dsl-outside-policy"  # the run flags it too
        said = report.finding(CHECK_ID)
        if strict:  # --strict failed cutedsl.version and nvgemm.deps; the run outranks both
            assert said.status is W and [c.outcome for c in report.reconciliation.contradictions] == ["overruled"] * 2
            assert {c.check for c in report.reconciliation.contradictions} == {"cutedsl.version", "nvgemm.deps"}
        else:
            assert said.status is P and said.found.startswith("no check fails where the smoke run passed")
        assert report.finding("cutedsl.version").status is W and report.exit_code == 0
        data = json.loads(render(report, "json"))
        assert data["exit_code"] == 0 and data["reconciliation"]["status"] == said.status.value


def test_a_runtime_failure_the_passing_run_disproves_is_said_loudly(policy, tmp_path):
    made = replace(recipe_deviation(), driver=fb.driver("575.57.08", "12.9", gpus=[H200]))  # CUDA 12 driver: runtime
    report = doctor_smoke(policy, tmp_path, made)
    assert report.smoke.kernel == "cutedsl.Sm80TensorOpGemmKernel_tnt_fake"
    assert report.finding("cuda.driver").status is F and report.finding(CHECK_ID).status is E
    assert ("cuda.driver", "disproved") in {(c.check, c.outcome) for c in report.reconciliation.contradictions}
    assert report.exit_code == 1
    text = render(report, "table")
    assert f"ERROR {CHECK_ID}" in " ".join(text.split()) and "that verdict is wrong here" in " ".join(text.split())


def test_a_failing_run_names_the_passing_checks_it_contradicts(policy, tmp_path):
    made = fb.facts(driver=fb.driver(gpus=[H200]))  # the recipe's own stack: every version check passes
    report = doctor_smoke(policy, tmp_path, made, FAKE_WRONG="1")
    assert report.smoke.status is F and report.smoke.cause_id == "wrong-result"
    assert report.smoke.cause.endswith("This contradicts cutedsl.version and cutlass-api.install, which passed.")
    assert "This contradicts cutedsl.version and cutlass-api.install" in " ".join(render(report, "table").split())
    assert report.finding(CHECK_ID).status is W and report.exit_code == 1
    assert json.loads(render(report, "json"))["smoke"]["cause"]["text"] == report.smoke.cause


# ---------------------------------------------------------------------------------------------------------------
# Every format that lists findings


def test_every_format_shows_it():
    report = joined(report_of(check(F, "runtime"), Finding("cuda.toolkit", "toolkit", F, "13.0", basis="recipe")),
                    smoke(P))
    data = to_json_data(report)
    assert data["reconciliation"]["contradictions"] == [
        {"check": CHECK, "status": "fail", "basis": "runtime", "outcome": "disproved"},
        {"check": "cuda.toolkit", "status": "fail", "basis": "recipe", "outcome": "overruled"},
    ]
    assert data["reconciliation"]["status"] == "error" and data["exit_code"] == 1
    assert [c["basis"] for c in data["checks"][:2]] == ["runtime", "recipe"]
    assert next(c for c in data["checks"] if c["id"] == CHECK_ID)["status"] == "error"
    assert f'name="{CHECK_ID}"' in junit_xml(report) and '<error message="' in junit_xml(report)
    assert f"::error title=envcheck {CHECK_ID}%3A error::" in github_annotations(report)
    assert f"`{CHECK_ID}`" in render(report, "markdown")
    assert to_json_data(report_of(check(P, "")))["reconciliation"] is None  # no smoke: no reconciliation


# ---------------------------------------------------------------------------------------------------------------
# The H200 run of issue 17 (e.log E2: only -libs-cu12, no torch-c-dlpack-ext, torch 2.14.1, the smoke passed)

H200_DATA = Path(__file__).parent / "data" / "h200-2026-12-01"


def h200_e2_smoke() -> SmokeResult:
    """The smoke that passed in E2, as e.log printed it: its status line's kernel and GPU."""
    import re

    log = (H200_DATA / "e.log").read_text(encoding="utf-8")
    section = log.split("E2 the cu12 trap", 1)[1].split("\n== ", 1)[0]
    kernel, gpu = re.search(r"^smoke  PASS   (\S+) ran on (.+?) through", section, re.M).groups()
    return SmokeResult(P, f"{kernel} ran on {gpu}", kernel=kernel, gpu=gpu)


def test_the_h200_cu12_state_has_no_failure_the_passing_smoke_contradicts():
    """Today's verdicts on E2's facts, with and without --strict: nothing the run contradicts fails; and the verdicts
    doctor gave that day (cutedsl.importable and nvgemm.deps failing as runtime requirements) are what smoke.verdicts
    now calls wrong, loudly."""
    from envcheck.profile import load_builtin

    data = json.loads((H200_DATA / "doctor-cu12.json").read_text())
    made = fb.facts_of_report(data)
    policy = load_builtin(data["profile"]["id"])
    result = h200_e2_smoke()
    assert result.kernel.startswith("cutedsl.Sm90StaticPersistentGemmOperator") and result.gpu == "NVIDIA H200 (9.0)"
    for strict, status in ((False, P), (True, W)):
        report = joined(Report(policy.id, data["target"], judge(made, policy, strict=strict), facts=made), result)
        assert report.finding(CHECK_ID).status is status, report.finding(CHECK_ID).found
        assert {c.outcome for c in report.reconciliation.contradictions} <= {"overruled"}
        assert report.exit_code == 0 and not [f.id for f in report.findings if f.status.is_problem]
    then = tuple(Finding(c["id"], c["title"], Status(c["status"]), c["found"], basis="runtime" if c["status"] == "fail"
                         else "") for c in data["checks"])
    report = joined(Report(policy.id, data["target"], then, facts=made), result)
    assert report.finding(CHECK_ID).status is E and report.exit_code == 1
    assert [(c.check, c.outcome) for c in report.reconciliation.contradictions] == [
        ("cutedsl.importable", "disproved"), ("nvgemm.deps", "disproved")]
