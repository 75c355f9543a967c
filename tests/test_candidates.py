"""Every NVGEMM candidate accounted for (causes/candidates.py): the real H200 logs of a model's GEMMs on torch 2.14.1
(tests/data/h200-s4/, STACK.md section 9), the recipe stack's logs where nothing was lost, and each form of what
Inductor writes, line by line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from envcheck.causes import context_from
from envcheck.causes.candidates import environment_cause, read_candidates, split_at
from envcheck.causes.log import clean_line
from envcheck.model.candidates import IN_PROCESS, UNEXPLAINED, WORKER, GemmCandidates, LostCandidates, lost_of, lost_text

DATA = Path(__file__).parent / "data"
S4 = DATA / "h200-s4"
ARCH = "error: expects arch to be sm_90a, but got sm_100a"


def log_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
        return [clean_line(line) for line in handle.read().splitlines()]


def summary(gemms):
    return [(g.op, g.sizes, g.offered, g.failed, g.left, g.listed, [(l.cause_id, l.count, l.where) for l in g.lost])
            for g in gemms]


def test_the_model_at_m16_loses_3_of_9_and_3_of_10_to_the_workers_target():
    gemms = read_candidates(log_lines(S4 / "model-nv16-arch-errors.log"))
    assert summary(gemms) == [
        ("mm", "16x4096, 4096x14336", 9, 3, 6, True, [("dsl-arch-mismatch", 3, WORKER)]),
        ("mm", "16x14336, 14336x4096", 10, 3, 7, True, [("dsl-arch-mismatch", 3, WORKER)]),
    ]
    assert gemms[0].strides == "[4096, 1], [1, 4096]"  # nn.Linear's weight: x @ W.T
    assert gemms[0].lost[0].first_line == ARCH
    assert lost_text(gemms) == f"6 of 19 NVGEMM candidates failed to compile: dsl-arch-mismatch ({ARCH})"


def test_the_model_at_m2048_keeps_6_of_10_on_two_gemms_and_all_10_with_the_remedy():
    without = read_candidates(log_lines(S4 / "m3-l-2048-X.log"))
    assert [(g.sizes, g.failed, g.offered) for g in without] == [
        ("2048x4096, 4096x14336", 4, 10), ("2048x4096, 4096x14336", 0, 10), ("2048x14336, 14336x4096", 4, 10)]
    with_arch = read_candidates(log_lines(S4 / "m3-l-2048-CUTE_DSL_ARCH.log"))
    assert [(g.failed, g.left, g.listed) for g in with_arch] == [(0, 10, True), (0, 10, True)]
    assert lost_text(with_arch) is None


def test_a_bench_log_read_row_by_row_puts_each_loss_with_the_compile_that_had_it():
    text = gzip.open(S4 / "mlp-bench-child.log.gz", "rt", encoding="utf-8").read()
    pieces = split_at(text, "ENVCHECK-BENCH-ROW ")
    per_row = [read_candidates([clean_line(l) for l in lines], first) for first, lines in pieces]
    rows = [lines[-1] for _, lines in pieces if lines and lines[-1].startswith("ENVCHECK-BENCH-ROW ")]
    assert len(rows) == 20 and len(per_row) == 21 and per_row[-1] == ()
    lost = [(i % 5, sum(g.failed for g in gemms)) for i, gemms in enumerate(per_row[:20]) if gemms]
    # per shape: ATEN, mix, TRITON, NVGEMM, the repeat. mix autotunes every backend and loses candidates; at M=2048
    # the NVGEMM row's compile sends the failed ones to the workers again (they are not in the autotune cache).
    assert lost == [(1, 3), (1, 3), (1, 4), (3, 4), (1, 4), (3, 4)]
    again = per_row[13]
    assert again[0].op == "" and again[0].failed == 4 and not again[0].listed  # no table: the others were cached
    assert sum(g.failed for gemms in per_row for g in gemms) == 22 == text.count("for benchmark choice")


def test_the_recipe_stack_loses_nothing_and_offers_its_four_sm80_kernels():
    gemms = read_candidates(log_lines(DATA / "bench" / "h200-1" / "anchors-cold.log"))
    assert [(g.sizes, g.offered, g.failed, g.listed) for g in gemms] == [
        ("4096x4096, 4096x4096", 4, 0, True), ("8192x8192, 8192x8192", 4, 0, True), ("16x4096, 4096x4096", 4, 0, True)]


def test_a_log_without_autotuning_has_no_candidates():
    assert read_candidates(["envcheck-bench: phase cuda +3.3", "RESULT ok", ""]) == ()


# --------------------------------------------------------------------------------------------------------------
# Each form, on its own lines

P = "E1201 20:20:43.815000 3303 torch/_inductor/select_algorithm.py:4866] [0/0] "


def worker_failure(error: str, choice: str = "NVUniversalGemmCaller(cutedsl.Sm90Op_tnt_tile64x64x64)",
                   prefix: str = P) -> list[str]:
    return [prefix + line for line in (
        "Exception An exception occurred in a subprocess:", "", "Name=<unknown>", "Traceback (most recent call last):",
        '  File "/x/nv_universal_gemm_kernel.py", line 135, in _compile_nvgemm', "    artifact = kernel.compile(args)",
        *error.split("\n"), "", f" for benchmark choice {choice}", "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/concurrent/futures/process.py", line 264, in _process_worker',
        "torch._inductor.compile_worker.subproc_pool.SubprocException: An exception occurred in a subprocess:")]


def table(rows: list[tuple[str, str, str]], total: int = None, op: str = "mm") -> list[str]:
    total = len(rows) if total is None else total
    return ["Autotune Choices Stats:", '{"num_choices": %d}' % total, f"AUTOTUNE {op}(16x4096, 4096x14336)",
            "strides: [4096, 1], [1, 4096]", "dtypes: torch.bfloat16, torch.bfloat16",
            *(f"  {name} {time} ms 100.0% {desc}" for name, time, desc in rows),
            f"SingleProcess AUTOTUNE benchmarking takes 3.1 seconds and 1.4 seconds precompiling for {total} choices"]


NV = ("nv_universal_gemm_1", "0.0415", "nv_universal_gemm cutedsl.Sm90Op_tnt_tile64x128x64")
NV_INF = ("nv_universal_gemm_2", "inf", "nv_universal_gemm cutedsl.Sm90Op_tnt_tile64x64x64")
TRITON = ("triton_mm_12", "0.0377", "ACC_TYPE='tl.float32', BLOCK_K=128")
ATEN = ("mm", "0.0445", "")
DSL_ERROR = "cutlass.base_dsl.common.DSLUserCodeError: \n" + ARCH


@pytest.mark.parametrize("lines, expected", [
    # nothing but a table: every NVGEMM row left, none lost
    (table([NV, TRITON, ATEN]), [("mm", 1, 0, 1, True, [])]),
    # a table without NVGEMM (the ATEN or TRITON rows of a bench) is no GEMM of NVGEMM candidates
    (table([TRITON, ATEN]), []),
    # a worker's failure with a known cause, before its table
    (worker_failure(DSL_ERROR) + table([NV]), [("mm", 2, 1, 1, True, [("dsl-arch-mismatch", 1, WORKER)])]),
    # the same without torch's logging prefix (a log written by other logging settings)
    (worker_failure(DSL_ERROR, prefix="") + table([NV]), [("mm", 2, 1, 1, True, [("dsl-arch-mismatch", 1, WORKER)])]),
    # a worker's failure no signature names: unexplained, a kernel's own limit
    (worker_failure("ValueError: tile 64x64x64 needs 240 KB of shared memory") + table([NV]),
     [("mm", 2, 1, 1, True, [(UNEXPLAINED, 1, WORKER)])]),
    # a Triton choice that failed is not an NVGEMM candidate
    (worker_failure("ValueError: no", choice="TritonTemplateCaller(triton_mm_3)") + table([NV]),
     [("mm", 1, 0, 1, True, [])]),
    # an in-process failure: a record naming no candidate, and its row at inf
    ([P + "Runtime error during autotuning: ", P + "TVM FFI function is not initialized.. ",
      P + "Ignoring this choice."] + table([NV, NV_INF]),
     [("mm", 2, 1, 1, True, [("tvm-ffi-not-initialized", 1, IN_PROCESS)])]),
    # an inf row without its record: unexplained, in process
    (table([NV, NV_INF, ATEN]), [("mm", 2, 1, 1, True, [(UNEXPLAINED, 1, IN_PROCESS)])]),
    # a table cut to its first rows: what was left is a lower bound
    (table([NV, TRITON], total=26), [("mm", 1, 0, 1, False, [])]),
    # failures no table follows (every candidate lost, or the log ends): a GEMM of unknown shape
    (worker_failure(DSL_ERROR) * 2, [("", 2, 2, 0, False, [("dsl-arch-mismatch", 2, WORKER)])]),
    # two causes in one GEMM, grouped per cause in the order first seen
    (worker_failure(DSL_ERROR) + worker_failure("ValueError: no") + worker_failure(DSL_ERROR) + table([NV], op="addmm"),
     [("addmm", 4, 3, 1, True, [("dsl-arch-mismatch", 2, WORKER), (UNEXPLAINED, 1, WORKER)])]),
])
def test_each_form_inductor_writes(lines, expected):
    gemms = read_candidates(lines)
    assert [(g.op, g.offered, g.failed, g.left, g.listed, [(l.cause_id, l.count, l.where) for l in g.lost])
            for g in gemms] == expected


def test_an_unexplained_failure_keeps_the_exceptions_own_words_and_line():
    lines = ["first line"] + worker_failure("cutlass.base_dsl.common.DSLRuntimeError: \nsmem overflow: 245760 bytes")
    gemms = read_candidates(lines + table([NV]), first=10)
    lost = gemms[0].lost[0]
    assert lost.first_line == "cutlass.base_dsl.common.DSLRuntimeError: smem overflow: 245760 bytes"
    assert gemms[0].line == 10 + len(lines) + 2  # the AUTOTUNE line, counted from `first`


def test_failures_belong_to_the_table_after_them_not_the_one_before():
    lines = worker_failure(DSL_ERROR) + table([NV]) + table([NV, NV]) + worker_failure(DSL_ERROR) * 3 + table([NV])
    assert [g.failed for g in read_candidates(lines)] == [1, 0, 3]


def test_lost_text_adds_up_gemms_and_names_each_cause():
    arch = LostCandidates("dsl-arch-mismatch", 3, ARCH, WORKER)
    own = LostCandidates(UNEXPLAINED, 1, "ValueError: no", WORKER)
    one = GemmCandidates("mm", left=6, lost=(arch,))
    two = GemmCandidates("mm", left=7, lost=(arch, own), listed=False)
    assert lost_of((one, two)) == (LostCandidates("dsl-arch-mismatch", 6, ARCH, WORKER), own)
    assert lost_text((one, two)) == (f"7 of at least 20 NVGEMM candidates failed to compile: dsl-arch-mismatch "
                                     f"({ARCH}) x6; unexplained (ValueError: no) x1")
    assert lost_text((GemmCandidates("mm", left=4),)) is None
    assert (one.to_dict()["offered"], one.to_dict()["lost"][0]["environment"], own.environment) == (9, True, False)


def test_the_environment_cause_is_explained_for_the_target(factsbuilder_policy):
    facts, policy = factsbuilder_policy
    ctx = context_from(facts, policy, "/venv/bin/python")
    arch = GemmCandidates("mm", left=6, lost=(LostCandidates(UNEXPLAINED, 1, "ValueError: no", WORKER),
                                              LostCandidates("dsl-arch-mismatch", 3, ARCH, WORKER)))
    cause = environment_cause((arch,), ctx)
    assert cause.id == "dsl-arch-mismatch" and "CUTE_DSL_ARCH=sm_90a" in cause.remedy.text and cause.evidence == ARCH
    assert environment_cause((GemmCandidates("mm", left=1, lost=arch.lost[:1]),), ctx) is None


@pytest.fixture
def factsbuilder_policy():
    import factsbuilder
    from envcheck.profile import load_builtin

    h200 = factsbuilder.driver("580.159.04", "13.0", (factsbuilder.gpu((9, 0), "NVIDIA H200"),))
    return factsbuilder.facts(interpreter=factsbuilder.stack(), driver=h200), load_builtin("torch-2.14-operators")
