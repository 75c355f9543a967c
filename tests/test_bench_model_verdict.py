"""`bench --model`'s verdict and what it reads (issue 30 items 2 and 3), as tables over every boundary: how many of
the compiled model's GEMMs a set ran on NVGEMM (gemm.gemm_calls, on real generated code), the verdict's words for 0
of N, some, all and not known, a set that failed with its cause and op, and what Inductor offered NVGEMM for each
GEMM bench timed (model_result.nvgemm_offered). Pure: no process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envcheck.bench.analysis import Decision, Measurement, ShapeVerdict
from envcheck.bench.model_outcome import model_verdict, share_text
from envcheck.bench.model_result import NO_CHOICES_CAUSES, ModelRow, ModelTiming, nvgemm_offered
from envcheck.bench.shapes import LINEAR, Shape
from envcheck.causes import lowering_target
from envcheck.inside.gemm import gemm_calls
from envcheck.model.candidates import GemmCandidates, LostCandidates

DATA = Path(__file__).parent / "data"
BIAS = Shape(2048, 6144, 2048, "qkv", LINEAR, "addmm", 1, (6144,))


# --------------------------------------------------------------------------------------------------------------
# The GEMMs each backend runs, read from Inductor's generated code


@pytest.mark.parametrize("path, calls", [
    ("bench/h200-1/16x4096x4096-custom-ATEN.py.txt", {"NVGEMM": 0, "ATEN": 1, "TRITON": 0}),
    ("bench/h200-1/16x4096x4096-custom-TRITON.py.txt", {"NVGEMM": 0, "ATEN": 0, "TRITON": 1}),
    ("bench/h200-1/16x4096x4096-custom-NVGEMM.py.txt", {"NVGEMM": 1, "ATEN": 0, "TRITON": 0}),
    ("smoke/nvgemm-output-code-h200.py.txt", {"NVGEMM": 1, "ATEN": 0, "TRITON": 0}),
])
def test_gemm_calls_count_what_the_call_runs_in_real_generated_code(path, calls):
    assert gemm_calls((DATA / path).read_text(encoding="utf-8")) == calls


def test_a_kernel_run_twice_counts_twice_and_modules_add_up():
    nvgemm = (DATA / "bench/h200-1/16x4096x4096-custom-NVGEMM.py.txt").read_text(encoding="utf-8")
    run = "            nv_universal_gemm_fused_mm_bd4d1dc9.run(arg0_1, arg1_1, buf0, stream=stream0)\n"
    assert run in nvgemm
    twice = nvgemm.replace(run, run + run.replace("buf0", "buf1"))
    aten = (DATA / "bench/h200-1/16x4096x4096-custom-ATEN.py.txt").read_text(encoding="utf-8")
    # the old count of definitions read 1 for `twice`: two GEMMs of the model, one kernel
    assert gemm_calls(twice) == {"NVGEMM": 2, "ATEN": 0, "TRITON": 0}
    assert gemm_calls(twice + "\n" + aten) == {"NVGEMM": 2, "ATEN": 1, "TRITON": 0}
    assert gemm_calls("") == {"NVGEMM": 0, "ATEN": 0, "TRITON": 0}


# --------------------------------------------------------------------------------------------------------------
# The op a compile failed on, and its share per set


ERROR = ("LoweringException: NoValidChoicesError: No choices to select. Provided reason: No choices exist for backend. "
         "please consider adding ATEN into max_autotune_gemm_backends config\n  target: aten.addmm.default\n"
         "  args[0]: TensorBox(StorageBox(\n    InputBuffer(name='arg2_1', layout=FixedLayout('cuda:0', torch.bfloat16, "
         "size=[6144], stride=[1]))\n  ))")


@pytest.mark.parametrize("message, op", [
    (ERROR, "aten.addmm.default"),
    ("ValueError: TargetSm 80a is invalid.\n  target: aten.mm.default\n  args[0]: ...\n  target: aten.bmm.default",
     "aten.mm.default"),  # ../shared/h200/2026-12-01/e.log: the first target
    ("NoValidChoicesError: No choices to select", ""),
    ("", ""),
])
def test_the_op_a_compile_failed_on_is_its_target_line(message, op):
    assert lowering_target(message) == op


def row(name, status="ok", ms=1.0, spread=0.005, calls=None, cause="", on="", reason=""):
    return ModelRow(name, name, status, ms=ms if status == "ok" else None, spread=spread,
                    gemm_calls=tuple(sorted((calls or {}).items())), cause_id=cause, failed_on=on, reason=reason)


@pytest.mark.parametrize("r, text", [
    (row("ATEN,TRITON,NVGEMM", calls={"ATEN": 3, "NVGEMM": 0}), "ATEN,TRITON,NVGEMM 0 of 3"),
    (row("ATEN,TRITON,NVGEMM", calls={"ATEN": 1, "NVGEMM": 2}), "ATEN,TRITON,NVGEMM 2 of 3"),
    (row("NVGEMM", calls={"NVGEMM": 3}), "NVGEMM 3 of 3"),
    (row("NVGEMM"), "NVGEMM not known"),
    (row("NVGEMM", "error", cause="no-valid-choices", on="aten.addmm.default"), "NVGEMM error: no-valid-choices on aten.addmm"),
    (row("NVGEMM", "skipped", reason="the time budget ran out"), "NVGEMM skipped"),
])
def test_each_sets_share_of_the_models_gemms(r, text):
    assert share_text(r, "NVGEMM") == text


# --------------------------------------------------------------------------------------------------------------
# The verdict


def decision(enable: bool, measured=True) -> Decision:
    return Decision("NVGEMM", enable, "text", wins=("x",) if enable and measured else (),
                    loses=() if enable or not measured else ("y",))


def timing(without=1.0, with_it=1.0, spread=0.005, drift=None, served=None, total=3, alone=None) -> ModelTiming:
    calls = None if served is None else {"ATEN": total - served, "NVGEMM": served}
    rows = [row("ATEN,TRITON", ms=without, spread=spread, calls=None if served is None else {"ATEN": total}),
            row("ATEN,TRITON,NVGEMM", ms=with_it, spread=spread, calls=calls)]
    return ModelTiming(rows=tuple(rows + ([alone] if alone is not None else [])), drift=drift)


FAILED_ALONE = row("NVGEMM", "error", cause="no-valid-choices", on="aten.addmm.default",
                   reason="InductorError: LoweringException: NoValidChoicesError: No choices to select.")


@pytest.mark.parametrize("enable, without, with_it, spread, drift, served, holds, words", [
    # 0 of N: enabling NVGEMM changes no GEMM kernel; that is the reason, never the times
    (False, 1.0, 1.0, 0.005, None, 0, True, "(do not enable NVGEMM) holds on the model: with ATEN,TRITON,NVGEMM "
     "Inductor ran none of its 3 GEMMs on NVGEMM (0 of 3), so enabling NVGEMM changes no GEMM kernel of this model"),
    (True, 1.0, 1.0, 0.005, None, 0, False, "(enable NVGEMM) does not hold on the model: with ATEN,TRITON,NVGEMM "
     "Inductor ran none of its 3 GEMMs on NVGEMM (0 of 3)"),
    (False, 1.05, 1.0, 0.005, None, 0, True, "the 1.05x it runs faster comes from Inductor's other picks"),
    (True, 1.0, 1.05, 0.005, None, 0, False, "the 1.05x it runs slower comes from Inductor's other picks"),
    # the H200's run of issue 30's kind (tests/data/bench/h200-8/model.json): NVGEMM kernels 0 with ATEN,TRITON,NVGEMM
    (True, 1.0879, 1.1139, 0.0152, 0.0149, 0, False, "(enable NVGEMM) does not hold on the model: with "
     "ATEN,TRITON,NVGEMM Inductor ran none of its 3 GEMMs on NVGEMM (0 of 3)"),
    # some of them: the times decide, beside the share
    (False, 1.02, 1.0, 0.005, None, 2, False, "(do not enable NVGEMM) does not hold on the model: NVGEMM ran 2 of its 3 "
     "GEMMs with ATEN,TRITON,NVGEMM, and it runs 1.02x as fast with NVGEMM"),
    (False, 1.0, 1.0, 0.005, None, 1, True, "NVGEMM ran 1 of its 3 GEMMs with ATEN,TRITON,NVGEMM, and it runs the same "
     "with and without NVGEMM"),
    (False, 1.0, 1.02, 0.005, None, 1, True, "holds on the model: NVGEMM ran 1 of its 3 GEMMs with ATEN,TRITON,NVGEMM, "
     "and it runs 1.02x slower with NVGEMM"),
    # all of them
    (True, 1.02, 1.0, 0.005, None, 3, True, "(enable NVGEMM) holds on the model: NVGEMM ran 3 of its 3 GEMMs (all of "
     "them) with ATEN,TRITON,NVGEMM, and it runs 1.02x as fast"),
    (True, 1.0, 1.02, 0.005, None, 3, False, "(enable NVGEMM) does not hold on the model: NVGEMM ran 3 of its 3 GEMMs "
     "(all of them) with ATEN,TRITON,NVGEMM, and it runs 1.02x slower"),
    (True, 1.0, 1.0, 0.005, None, 3, True, "it runs the same with and without NVGEMM"),
    # the noise's boundaries, NVGEMM serving some
    (False, 1.0101, 1.0, 0.001, None, 1, False, "does not hold"),  # just beyond the 1% floor
    (False, 1.0099, 1.0, 0.001, None, 1, True, "holds"),  # just within it
    (False, 1.02, 1.0, 0.03, None, 1, True, "the same"),  # within the figures' spread
    (False, 1.02, 1.0, 0.005, 0.025, 1, True, "noise 2.5%"),  # within the repeat's drift
    # Inductor's code not read: the times alone, and it says so
    (False, 1.0, 1.0, 0.005, None, None, True, "how many of its GEMMs NVGEMM ran with ATEN,TRITON,NVGEMM is not known"),
    (False, 0.1096, 0.1052, 0.005, None, None, False, "1.04x as fast with NVGEMM (0.1096 ms per forward with ATEN,TRITON"),
])
def test_the_model_verdict(enable, without, with_it, spread, drift, served, holds, words):
    verdict = model_verdict(timing(without, with_it, spread, drift, served), decision(enable), "NVGEMM")
    assert verdict.holds is holds and words in verdict.text, verdict.text
    assert verdict.served == served and verdict.gemms == (None if served is None else 3)
    if served == 0:  # never "holds: it runs the same with and without NVGEMM"
        assert "with and without" not in verdict.text and "it runs" not in verdict.text.split("(0 of 3)")[0]


def test_the_verdict_names_each_sets_share_and_a_set_that_failed():
    verdict = model_verdict(timing(served=0, alone=FAILED_ALONE), decision(False), "NVGEMM")
    assert verdict.holds is True
    assert verdict.text.endswith("; NVGEMM's GEMMs per set: ATEN,TRITON 0 of 3, ATEN,TRITON,NVGEMM 0 of 3, "
                                 "NVGEMM error: no-valid-choices on aten.addmm"), verdict.text
    assert json.loads(json.dumps(verdict.to_dict()))["served"] == 0


def test_a_set_that_failed_leaves_the_verdict_unchecked_with_its_cause_and_op():
    failed = ModelTiming(rows=(row("ATEN,TRITON", calls={"ATEN": 3}),
                               row("ATEN,TRITON,NVGEMM", "error", cause="no-valid-choices", on="aten.addmm.default",
                                   reason="InductorError: boom")))
    verdict = model_verdict(failed, decision(False), "NVGEMM")
    assert verdict.holds is None
    assert ("not checked on the model: ATEN,TRITON,NVGEMM not timed (ATEN,TRITON,NVGEMM: error: no-valid-choices on "
            "aten.addmm (InductorError: boom))") in verdict.text
    unexplained = ModelTiming(rows=(failed.rows[0], row("ATEN,TRITON,NVGEMM", "error", reason="InductorError: boom")))
    assert "(ATEN,TRITON,NVGEMM: error: InductorError: boom)" in model_verdict(unexplained, decision(False), "NVGEMM").text
    missing = model_verdict(ModelTiming(rows=failed.rows[:1]), decision(False), "NVGEMM")
    assert missing.holds is None and "ATEN,TRITON,NVGEMM not timed" in missing.text
    assert model_verdict(timing(), None, "NVGEMM").holds is None
    assert "no per-shape decision" in model_verdict(timing(), decision(False, measured=False), "NVGEMM").text


# --------------------------------------------------------------------------------------------------------------
# What Inductor offered NVGEMM for each GEMM


def candidates(op="addmm", left=3, lost=0, listed=True) -> GemmCandidates:
    return GemmCandidates(op=op, sizes="2048x2048, 2048x6144", left=left, listed=listed,
                          lost=(LostCandidates("dsl-arch-mismatch", lost, "error: expects arch", "precompile worker"),)
                          if lost else ())


def verdict(*gemms) -> ShapeVerdict:
    return ShapeVerdict(BIAS, "same", 0.01, candidates=gemms)


def alone(status="ok", choice="NVGEMM") -> Measurement:
    return Measurement(BIAS, "NVGEMM", status, reason="" if status == "ok" else "InductorError: x", choice=choice)


@pytest.mark.parametrize("shape_verdict, measured, cause, count, text", [
    (verdict(candidates(left=3)), alone(), "", 3, "3"),
    (verdict(candidates(left=6, lost=3)), alone(), "", 9, "9, 3 failed to compile"),
    (verdict(candidates(left=10, listed=False)), alone(), "", 10, "at least 10"),
    (verdict(candidates(left=1, listed=False)), alone(), "", 1, "at least 1"),  # a table cut short, this run's
    (verdict(candidates(left=2), candidates(left=1)), alone(), "", 3, "3"),  # two tables of the op
    (verdict(GemmCandidates(op="", lost=(LostCandidates("dsl-arch-mismatch", 4, "e", "precompile worker"),),
                            listed=False)), alone("error", None), "no-valid-choices", 4, "at least 4, 4 failed to compile"),
    (verdict(), alone("error", None), NO_CHOICES_CAUSES[0], 0, "0: NVGEMM has no kernel for this op here"),
    (None, alone("error", None), NO_CHOICES_CAUSES[0], 0, "0: NVGEMM has no kernel for this op here"),
    (verdict(), alone("error", None), "cuda-out-of-memory", None, "not known (no autotuning in this run)"),
    (verdict(), alone(), "", 1, "at least 1 (not autotuned in this run)"),
    (verdict(), alone("ok", "ATEN"), "", None, "not known (no autotuning in this run)"),
    (verdict(), None, "", None, "not known (no autotuning in this run)"),
])
def test_what_inductor_offered_nvgemm_per_gemm(shape_verdict, measured, cause, count, text):
    offered = nvgemm_offered(shape_verdict, measured, "NVGEMM", cause)
    assert offered.count == count and offered.text("NVGEMM") == text
