"""Remedies written once. The driver remedy: doctor's finding, fix's manual instruction and smoke's cause say the same
words, with the driver version as NVIDIA writes it (590.44.01, never PEP 440's 590.44.1). The CUTLASS fetch: doctor's
and smoke's remedies give by hand the very git commands fix runs."""

from __future__ import annotations

import pytest

import factsbuilder as fb
from envcheck.judge import judge
from envcheck.judge.cuda import driver_remedy
from envcheck.fix.plan import PlanOptions, make_plan
from envcheck.model import Failure
from envcheck.smoke.causes import Evidence, context_from, diagnose

OLD = fb.driver(version="570.86.10", cuda="12.8", gpus=[fb.gpu((9, 0), "NVIDIA H200")])
CONSUMER = fb.driver(version="570.86.10", cuda="12.8", gpus=[fb.gpu((12, 0), "NVIDIA GeForce RTX 5090")])


def doctor_remedy(policy, facts):
    return next(f for f in judge(facts, policy) if f.id == "cuda.driver").remedy


def fix_instruction(policy, facts, tmp_path):
    options = PlanOptions(python="/t/bin/python", state_dir=str(tmp_path), cutlass_dir=str(tmp_path / "c"),
                          cutlass_url="https://github.com/NVIDIA/cutlass")
    plan = make_plan(judge(facts, policy), facts, policy, options)
    return next(m for m in plan.manual if m.check_id == "cuda.driver")


def smoke_remedy(policy, facts):
    evidence = Evidence(result=None, log="RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n",
                        returncode=1)
    return diagnose(evidence, context_from(facts, policy, "/t/bin/python")).remedy


@pytest.mark.parametrize("driver, datacenter", [(OLD, True), (CONSUMER, False)])
def test_doctor_fix_and_smoke_say_the_same_driver_remedy(policy, tmp_path, driver, datacenter):
    facts = fb.facts(driver=driver)
    doctor = doctor_remedy(policy, facts)
    assert doctor == driver_remedy(policy, tuple(g.name for g in driver.gpus))
    instruction = fix_instruction(policy, facts, tmp_path)
    assert (instruction.text, instruction.commands) == (doctor.text, doctor.commands)
    assert smoke_remedy(policy, facts) == doctor
    assert "590.44.01 or newer" in doctor.text and "590.44.1 " not in doctor.text
    assert ("cuda-compat-13-1" in str(doctor.commands)) is datacenter


def test_no_driver_at_all_says_install(policy):
    remedy = doctor_remedy(policy, fb.facts(driver=Failure("driver", "NVML library not found")))
    assert remedy.text.startswith("Install an NVIDIA driver 590.44.01 or newer") and not remedy.commands


def test_a_lead_sentence_comes_first(policy):
    assert driver_remedy(policy, lead="Seen: error 35.").text.startswith("Seen: error 35. Upgrade")


def test_doctor_and_smoke_give_the_git_commands_fix_runs(policy):
    from envcheck.fix.cutlass import git_commands
    from envcheck.smoke.causes import preflight

    source = policy.cutlass
    facts = fb.facts(checkout=None, interpreter=fb.interpreter(modules={"cutlass_api": None},
                                                                dists={k: v for k, v in fb.GOOD_DISTS.items() if k != "cutlass-api"}))
    doctor = next(f for f in judge(facts, policy) if f.id == "cutlass.checkout").remedy
    smoke = preflight(facts, policy, context_from(facts, policy, "/opt/venv/bin/python")).remedy
    by_hand = git_commands("cutlass", source.url, source.branch, source.commit, source.subdir)
    for remedy in (doctor, smoke):
        assert remedy.commands[1:-1] == by_hand
        assert remedy.commands[-1][-1] == f"cutlass/{source.subdir}[torch]"
