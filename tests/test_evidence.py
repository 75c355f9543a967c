"""The evidence of real runs: each built-in profile's entries, the reader that makes an entry from what a run printed
(`envcheck smoke --json`, the format a user contributes a run in; strict, bad input exit 2), the shared H200 files read
as evidence, and the H200 doctor reports judged again: nothing fails there that the passing smoke contradicts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from factsbuilder import facts, facts_of_report, stack

from envcheck.cli import main
from envcheck.errors import UsageError
from envcheck.judge import judge
from envcheck.model import Status, gpus_given
from envcheck.profile import builtin_profiles, load_builtin
from envcheck.profile.results import read_run, run_from_result
from envcheck.profile.runs import EVIDENCE, runs_from_toml
from envcheck.userfile import parse_toml

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "tests" / "data" / "h200-2026-12-01"
OPERATORS = "torch-2.14-operators"


def _all_runs():
    return [(profile, run) for profile in builtin_profiles() for run in load_builtin(profile).runs]


def test_every_built_in_profile_carries_its_runs():
    for profile in builtin_profiles():
        runs = load_builtin(profile).runs
        assert runs and (EVIDENCE / f"{profile}.toml").is_file()
        assert all(run.outcome in (Status.PASS, Status.WARN, Status.FAIL) for run in runs)
        assert {run.library for run in runs} == {load_builtin(profile).smoke.library}
        assert any(run.outcome is Status.PASS and run.gpu == "NVIDIA H200" for run in runs)


@pytest.mark.parametrize("profile, run", [(p, r) for p, r in _all_runs() if r.source.endswith(".json")],
                         ids=lambda v: getattr(v, "source", v))
def test_an_entry_whose_source_is_a_result_is_what_the_reader_makes_of_it(profile, run):
    """Derived, not written by hand: the entry equals the reader's output for its capture, every field."""
    data = json.loads((ROOT / run.source).read_text())
    assert run_from_result(data, run.source, date=run.date, driver=run.driver, source=run.source) == run


def test_every_entry_names_a_capture_that_is_there():
    for _, run in _all_runs():
        path = run.source.split(" ")[0]
        assert run.source.startswith("no capture kept: ") or (ROOT / path).is_file(), run.source


def test_the_shared_h200_smoke_results_read_as_evidence():
    """The H200 files as a user would contribute them: GPU, capability, driver (from the libcuda it loaded), the
    versions, the DSL build and the kernel library, all from the file."""
    cold = read_run(H200 / "smoke-cold.json", "smoke-cold.json", date="2026-12-01")
    assert (cold.gpu, cold.capability, cold.driver, cold.what, cold.outcome) == ("NVIDIA H200", (9, 0), "580.159.04", "smoke", Status.PASS)
    assert (cold.version("torch"), cold.version("nvidia-cutlass-dsl"), cold.version("nvidia-cutlass-operators")) == ("2.14.1", "4.8.1", "0.3.0")
    assert cold.dsl_flavour == "cu13" and cold.library == "cutlass.operators" and "Sm90StaticPersistentGemmOperator" in cold.kernel
    library = read_run(H200 / "smoke-lib.json", "smoke-lib.json", date="2026-12-01")
    assert library.what == "smoke --library" and library.library == "cutlass.operators"
    assert cold.said == "smoke ran on an NVIDIA H200, driver 580, 2026-12-01"


def test_a_file_without_a_date_is_dated_by_its_file(tmp_path):
    copy = tmp_path / "smoke.json"
    copy.write_text((H200 / "smoke-warm.json").read_text())
    run = read_run(copy, "smoke.json")
    assert len(run.date) == 10 and run.date[4] == "-" and run.source == str(copy)


def _smoke(**changes):
    data = json.loads((H200 / "smoke-cold.json").read_text())
    smoke = data["smoke"]
    for key, value in changes.items():
        if value is None:
            smoke.pop(key, None)
        else:
            smoke[key] = value
    return data


@pytest.mark.parametrize("data, words", [
    ([1, 2], "expected an object"),
    ({"doctor": {}}, "expected the output of `envcheck smoke --json`"),
    (_smoke(status="skip"), "a run that did not run is no evidence"),
    (_smoke(status="maybe"), "smoke.status"),
    (_smoke(status=1), "smoke.status expected a string"),
    (_smoke(gpu=None), "smoke.gpu expected a string, got nothing"),
    (_smoke(gpu="NVIDIA H200"), "a GPU and its compute capability"),
    (_smoke(gpu="NVIDIA H200 (900.0)"), "smoke.gpu"),
    (_smoke(versions=["torch"]), "smoke.versions expected an object"),
    (_smoke(versions={"nvidia-cutlass-dsl": "4.8.1"}), "names no torch version"),
    (_smoke(versions={"torch": 2.14}), "smoke.versions.torch expected a string"),
    (_smoke(process={"libraries": "all"}), "smoke.process.libraries expected an array"),
    (_smoke(kernel=7), "smoke.kernel expected a string"),
    ({"bench": {"status": "pass", "gpu": {"name": "H200", "capability": [9]}, "versions": {"torch": "2.14.1"}}}, "[major, minor]"),
    ({"bench": {"status": "pass", "gpu": {"name": "H200", "capability": [9, True]}, "versions": {"torch": "2.14.1"}}}, "[major, minor]"),
])
def test_the_reader_refuses_what_is_not_a_run_and_names_the_key(data, words):
    with pytest.raises(UsageError) as caught:
        run_from_result(data, "r.json", date="2026-12-01")
    assert "r.json" in str(caught.value) and words in str(caught.value), caught.value


@pytest.mark.parametrize("date", ["yesterday", "2026-1-1", "2026-12-01T10:00", "2026-13-45", "2026-00-10",
                                  "2026-02-29", "2026-04-31", "0000-01-01"])
def test_a_date_must_be_a_day(date):
    with pytest.raises(UsageError, match="expected a date YYYY-MM-DD"):
        run_from_result(_smoke(), "r.json", date=date)
    with pytest.raises(UsageError, match=r"key date = .*expected a date YYYY-MM-DD"):
        run_from_result({**_smoke(), "date": date}, "r.json")


@pytest.mark.parametrize("date", ["2028-02-29", "2026-12-31", "2026-01-01"])
def test_a_day_of_the_calendar_is_a_date(date):
    assert run_from_result(_smoke(), "r.json", date=date).date == date


def _with_dsl_major(value):
    data = _smoke()
    libraries = data["smoke"]["process"]["libraries"]
    dsl = [i for i, lib in enumerate(libraries) if lib["kind"] == "dsl"]
    for index in dsl:
        libraries[index] = {**libraries[index], "cuda_major": value}
    return data, dsl[0]


@pytest.mark.parametrize("value, flavour", [(13, "cu13"), (12, "cu12"), (None, "")])
def test_a_dsl_librarys_cuda_major_is_an_integer_or_null(value, flavour):
    data, _ = _with_dsl_major(value)
    assert run_from_result(data, "r.json", date="2026-12-01").dsl_flavour == flavour


@pytest.mark.parametrize("value", [True, False, "13", 13.0])
def test_a_dsl_librarys_cuda_major_of_another_type_is_refused_naming_it(value):
    data, index = _with_dsl_major(value)
    with pytest.raises(UsageError, match=rf"r.json: key smoke.process.libraries\[{index}\].cuda_major expected an integer"):
        run_from_result(data, "r.json", date="2026-12-01")


def test_a_result_without_a_date_is_refused_when_none_is_given():
    with pytest.raises(UsageError, match="does not say when it ran"):
        run_from_result(_smoke(), "r.json")


@pytest.mark.parametrize("text, words", [
    ('runs = 3\n', "key runs expected an array"),
    ('colour = 1\n', "not an evidence key"),
    ('[[runs]]\ngpu = "H200"\n', "runs[0].capability expected a string, got nothing"),
    ('[[runs]]\ngpu = "H200"\ncapability = "9"\nwhat = "smoke"\noutcome = "pass"\ndate = "2026-12-01"\nsource = "x"\n', "compute capability"),
    ('[[runs]]\ngpu = "H200"\ncapability = "9.0"\nwhat = "smoke"\noutcome = "skip"\ndate = "2026-12-01"\nsource = "x"\n', "'pass', 'warn' or 'fail'"),
    ('[[runs]]\ngpu = "H200"\ncapability = "9.0"\nwhat = "smoke"\noutcome = "pass"\ndate = "2026-12-01"\nsource = "x"\nlucky = true\n', "not a key of a run"),
    ('[[runs]]\ngpu = "H200"\ncapability = "9.0"\nwhat = "smoke"\noutcome = "pass"\ndate = "2026-12-01"\nsource = "x"\nversions = { torch = 2 }\n', "runs[0].versions.torch"),
])
def test_an_evidence_file_is_read_strictly(text, words):
    with pytest.raises(UsageError) as caught:
        runs_from_toml(parse_toml(text, "e.toml"), "e.toml")
    assert words in str(caught.value), caught.value


def test_doctor_counts_a_contributed_run_and_refuses_a_bad_one(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"smoke": {"status": "skip"}}')
    assert main(["doctor", "--no-gpu", "--evidence", str(bad)]) == 2
    assert f"--evidence {bad}" in capsys.readouterr().err
    assert main(["doctor", "--no-gpu", "--evidence", str(tmp_path / "missing.json")]) == 2
    assert "cannot read it" in capsys.readouterr().err
    assert main(["doctor", "--no-gpu", "--gpu-capability", "9.0", "--json", "--evidence", str(H200 / "smoke-lib.json")]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert {c["id"] for c in data["checks"] if c["evidence"] is not None} >= {"gpu.compute-capability", "nvgemm.deps"}


def test_a_contributed_run_of_the_same_combination_is_counted_and_one_of_another_is_not():
    b200 = run_from_result(_smoke(gpu="NVIDIA B200 (10.0)"), "b200.json", date="2026-12-24", driver="590.48.01")
    assert b200.driver == "580.159.04"  # what the process loaded wins over a driver given beside it
    made = facts(interpreter=stack(), checkout=None, given_gpus=gpus_given(((10, 0),)))
    finding = {f.id: f for f in judge(made, load_builtin(OPERATORS), no_gpu=True, runs=(b200,))}["gpu.compute-capability"]
    assert finding.evidence.runs == (b200,)
    assert "smoke ran on an NVIDIA B200, driver 580, 2026-12-24 (b200.json)" in finding.details[-1]
    other = replace(made, given_gpus=gpus_given(((10, 3),)))
    finding = {f.id: f for f in judge(other, load_builtin(OPERATORS), no_gpu=True, runs=(b200,))}["gpu.compute-capability"]
    assert finding.evidence.runs == ()


# ---------------------------------------------------------------------------------------------------------------
# The H200 doctor reports, judged again by today's profiles: nothing fails that the passing smoke contradicts


@pytest.mark.parametrize("report", ["doctor-cu12.json", "doctor14.json"])
def test_no_verdict_fails_where_the_h200_smoke_passed(report):
    """doctor-cu12.json is the state of e.log E2 (only -libs-cu12, no torch-c-dlpack-ext), where the smoke passed;
    doctor14.json the full stack (smoke-cold.json). Every check the smoke's pass covers must not fail."""
    data = json.loads((H200 / report).read_text())
    facts = facts_of_report(data)
    policy = load_builtin(data["profile"]["id"])
    found = {f.id: f for f in judge(facts, policy)}
    failing = {i: f.found for i, f in found.items() if f.status.is_problem}
    assert failing == {}, failing
    assert found["gpu.compute-capability"].status is Status.PASS and found["gpu.compute-capability"].evidence.runs
    if report == "doctor-cu12.json":
        # the verdicts the run contradicted, made true: a recipe warning, and the optional package
        assert found["cutedsl.importable"].status is Status.WARN
        assert found["nvgemm.deps"].status is Status.PASS and "torch-c-dlpack-ext not installed (optional" in found["nvgemm.deps"].found
        assert [r.source for r in found["cutedsl.importable"].evidence.runs] == [
            "tests/data/h200-2026-12-01/e.log (E2; versions from doctor-cu12.json)"]


def test_the_same_h200_stack_judged_for_an_ampere_fails_as_the_simulated_run_did():
    data = json.loads((H200 / "doctor14.json").read_text())
    facts = replace(facts_of_report(data), given_gpus=gpus_given(((8, 0),)))
    finding = {f.id: f for f in judge(facts, load_builtin(OPERATORS))}["gpu.compute-capability"]
    assert finding.status is Status.FAIL and "TargetSm 80a" in finding.found
    assert [r.outcome for r in finding.evidence.runs] == [Status.FAIL]


def test_a_profile_that_extends_a_built_in_one_inherits_its_runs_and_merges_caveats_by_name(tmp_path):
    from envcheck.profile import load

    path = tmp_path / "p.toml"
    path.write_text(f'extends = "{OPERATORS}"\n[[caveats]]\nname = "common-efc"\nremove = true\n'
                    '[[caveats]]\nname = "ours"\ncapability = ">=9.0,<9.1"\nstatus = "warn"\ntext = "our H100s throttle"\n')
    policy = load(path)
    assert policy.runs == load_builtin(OPERATORS).runs
    assert [c.name for c in policy.caveats] == ["ours"]
    path.write_text((EVIDENCE.parent / "builtin" / f"{OPERATORS}.toml").read_text().replace('id = "torch-2.14-operators"', 'id = "copy"'))
    assert load(path).runs == ()  # a copy stands on no built-in profile: no recorded run is its own
